// Per-option probabilities of MCQ answers from logprobs (issue 6 item 7): how much
// probability the model puts on the gold option, and whether its most likely option is
// the letter it wrote in its free-form answer. The scoring path a later issue compares
// with free-form scoring.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/store.h"
#include "util/status.h"

namespace nf {

/// One ok draw of a subject with `logprobs: N`, in SHOWN letters (the letters of the
/// prompt the model saw, after the condition's shuffle or removal).
struct OptionProbDraw {
  std::string subject, config, condition, item;
  int replicate = 0;
  /// Shown letter -> probability of its first answer token (" B" and "B" merged), nullopt
  /// = unknown (absent from the top list: NOT zero).
  std::map<std::string, std::optional<double>> probs;
  std::string gold;    // the correct shown letter
  std::string answer;  // the shown letter of the free-form answer ("" = not among them)
};

/// One subject x condition x config cell.
struct OptionProbRow {
  std::string subject, config, condition;
  int64_t draws = 0;             // ok draws with per-option probabilities
  int64_t gold_known = 0;        // draws whose gold option was in the top list
  std::optional<double> mean_gold_prob;  // mean over gold_known draws only; nullopt if none
  int64_t argmax_defined = 0;    // draws with at least one known option
  int64_t argmax_matches = 0;    // ... whose argmax option equals the free-form answer
  std::optional<double> argmax_match_share;  // argmax_matches / argmax_defined
  int64_t options_total = 0;     // option slots over all draws
  int64_t options_unknown = 0;   // ... absent from the top list (unknown, not zero)
};

/// Aggregates `draws` per (subject, config, condition), rows sorted by those keys.
/// mean_gold_prob averages only draws whose gold probability is known (an unknown gold is
/// counted in draws - gold_known, never averaged as 0). The argmax is taken over the known
/// options (an unknown option was outside the top list, so it is less likely than every
/// listed token); ties go to the first letter. Source: issue 6 item 7; the logprob
/// scoring of seed 004 §2.4 (first-token option probabilities).
std::vector<OptionProbRow> compute_option_probs(const std::vector<OptionProbDraw>& draws);

/// The shown letters of an MCQ draw mapped to the ORIGINAL option letters ("" = the
/// appended sentinel option), from the item's data {"options": {letter: text}, "answer"}
/// and the draw's condition detail (perturb/mcq_conditions.h: "permutation" for shuffle,
/// "removed" for remove_answer, "removed_chars" for remove_context; none of them = the
/// options as stored). Also sets *gold_shown to the correct shown letter (the sentinel
/// under a removal). InvalidArgument for a permutation that does not fit the options.
Result<std::vector<std::string>> shown_to_original(const nlohmann::json& item_data, const nlohmann::json& detail,
                                                   std::string* gold_shown);

/// Reads from `store` every ok MCQ draw of the named `subjects` (those with logprobs > 0)
/// whose extra holds "option_probs", as OptionProbDraws (cached draws only when
/// `include_cached`). One get_draw per ok draw of those subjects. Errors: the store's.
Result<std::vector<OptionProbDraw>> read_option_prob_draws(Store& store, const std::vector<std::string>& subjects,
                                                           bool include_cached);

/// {"subject", "config", "condition", "draws", "gold_known", "gold_unknown",
///  "mean_gold_prob" (null if none known), "argmax_defined", "argmax_matches",
///  "argmax_match_share" (null), "options_total", "options_unknown"}
nlohmann::json option_prob_row_to_json(const OptionProbRow& row);

}  // namespace nf
