// MCQ conditions of seed 004 §2.4: none, shuffle, remove_answer, remove_context.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/types.h"
#include "util/status.h"

namespace nf {

/// The appended option texts (seed 004 §2.4).
inline constexpr std::string_view kNoneCorrectText = "None of the other answers is correct.";
inline constexpr std::string_view kNotEnoughInfoText = "There is not enough information to answer this question.";

/// An item as shown to the model under one condition.
struct RenderedMcq {
  std::string item_id;
  std::string condition;
  std::string question;              // stem as shown
  std::vector<McqOption> options;    // letters re-assigned A, B, C... in shown order
  std::string answer;                // the correct letter in shown order
  std::vector<int> source_index;     // per shown option: index into the original options, -1 = appended
  nlohmann::json detail = nlohmann::json::object();  // e.g. {"permutation":[2,0,3,1]}, stored with the draw
};

/// Applies `condition` to `item`:
///  none           the item as is;
///  shuffle        options permuted by a permutation drawn from (study_seed, item id) only
///                 (Fisher-Yates on Rng::stream), recorded in detail.permutation as
///                 source indices in shown order; the gold answer follows its text;
///  remove_answer  the gold option removed, kNoneCorrectText appended last and marked
///                 correct; the remaining options keep their order;
///  remove_context the clinical vignette removed: only the question sentence (the last
///                 sentence of the stem that ends in '?', or the last sentence) is kept,
///                 options kept, kNotEnoughInfoText appended last and marked correct.
/// Errors: InvalidArgument for an unknown condition (with a did-you-mean) or an item
/// whose answer is not among its options.
Result<RenderedMcq> apply_mcq_condition(const McqItem& item, std::string_view condition, uint64_t study_seed);

/// The last sentence of `stem` that ends in '?' (or the last sentence if none does).
std::string question_sentence(std::string_view stem);

}  // namespace nf
