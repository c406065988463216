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
  std::vector<std::string> source_letter;  // per shown option: its original letter, "" = appended
                                           // (may be left empty by hand-built items: scoring then
                                           // falls back to 'A' + source_index)
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
/// Every condition re-assigns letters A, B, C... in shown order and fills source_index
/// and source_letter. detail: shuffle {"permutation": [...]}, remove_answer {"removed":
/// gold letter}, remove_context {"removed_chars": stem bytes removed}, none {}.
/// `study_seed` is used by shuffle only (seed 004 §2.4 uses 1618).
/// Errors: InvalidArgument for an unknown condition (with a did-you-mean), an item with
/// no options or more than 25 (one letter is kept free for an appended option), a
/// duplicated option letter equal to the answer, or an answer not among its options.
/// Source: seed 004 §2.4.
Result<RenderedMcq> apply_mcq_condition(const McqItem& item, std::string_view condition, uint64_t study_seed);

/// The last sentence of `stem` that ends in '?' (or the last sentence if none does),
/// trimmed of surrounding whitespace and of a stray closing quote after the '?'.
/// Sentences end at '.', '!' or '?' followed by whitespace or the end (optionally after
/// closing quotes/brackets), and at every line break (MedQA lab tables are one value per
/// line without a full stop); closing quotes include the UTF-8 ” and ’. Not a boundary:
/// a mark with a non-space right after it (decimals "38.5°C", "U.S."), a mark whose next
/// word starts in lower case ("e.g. the", "H. influenzae", "\"Am I dying?\" she asks"),
/// or a '.' after a known abbreviation (Dr, Mr, Mrs, Ms, Prof, St, vs, approx, Fig, e.g,
/// i.e). "mg/dL. Which ..." is a boundary. Returns "" for an empty stem.
/// Source: seed 004 §2.4 (remove_context keeps only the question sentence).
std::string question_sentence(std::string_view stem);

/// The condition names apply_mcq_condition accepts, in the order of seed 004 §2.4.
const std::vector<std::string>& known_mcq_conditions();

}  // namespace nf
