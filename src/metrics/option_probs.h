// Per-option probabilities of MCQ answers from logprobs (issue 6 item 7): how much
// probability the model puts on the gold option, and whether its most likely option is
// the letter it wrote in its free-form answer. The scoring path a later issue compares
// with free-form scoring.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
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
  /// Shown letter -> probability of its answer token (" B" and "B" merged), nullopt =
  /// unknown (absent from the top list: NOT zero). The sampled letter's own probability
  /// is known even when the top list does not carry it (docs/backends.md "Logprobs").
  std::map<std::string, std::optional<double>> probs;
  std::string gold;    // the correct shown letter
  std::string answer;  // the shown letter of the free-form answer ("" = not among them)
  /// The letters the top list itself carried (extra.answer_token.listed), so a known
  /// probability that is only the sampled token's own can be told apart; nullopt = not
  /// recorded (draws stored before 2026-12-02, imported draws).
  std::optional<std::set<std::string>> listed;
  /// extra.answer_token.top_logprobs_ignore_constraint: the request constrained the answer
  /// (grammar, guided choice, response_format) but the top list holds other tokens, i.e.
  /// the server reported the distribution before the constraint (llama.cpp does).
  bool ignores_constraint = false;
};

/// One subject x condition x config cell.
struct OptionProbRow {
  std::string subject, config, condition;
  int64_t draws = 0;             // ok draws with per-option probabilities
  int64_t gold_known = 0;        // draws whose gold option's probability is known
  /// Of gold_known, draws whose free-form answer IS the gold option: a gold known only
  /// because it was sampled makes mean_gold_prob conditional on a right answer.
  int64_t gold_known_answered = 0;
  std::optional<double> mean_gold_prob;  // mean over gold_known draws only; nullopt if none
  /// Draws recording which letters the top list carried (OptionProbDraw::listed).
  int64_t listed_recorded = 0;
  /// Draws whose gold option was in the top list itself (whatever was sampled); nullopt
  /// unless every draw of the cell records its listed letters.
  std::optional<int64_t> gold_listed;
  /// Of gold_known, draws whose gold was known only as the sampled token's own probability
  /// (the top list did not carry it); nullopt unless every draw records its listed letters.
  std::optional<int64_t> gold_sampled_only;
  /// Mean gold probability over the gold_listed draws: not conditioned on the sampled
  /// answer (which options the top list carries depends only on the distribution);
  /// nullopt if gold_listed is nullopt or 0.
  std::optional<double> mean_gold_prob_listed;
  int64_t argmax_defined = 0;    // draws with at least TWO known options
  int64_t argmax_undefined = 0;  // draws with fewer (one known option is its own argmax)
  int64_t argmax_matches = 0;    // ... of argmax_defined, whose argmax option equals the free-form answer
  std::optional<double> argmax_match_share;  // argmax_matches / argmax_defined; nullopt if 0
  int64_t options_total = 0;     // option slots over all draws
  int64_t options_unknown = 0;   // ... absent from the top list (unknown, not zero)
  int64_t constraint_ignored = 0;  // draws with OptionProbDraw::ignores_constraint
};

/// Aggregates `draws` per (subject, config, condition), rows sorted by those keys.
/// mean_gold_prob averages only draws whose gold probability is known (an unknown gold is
/// counted in draws - gold_known, never averaged as 0). A gold probability can be known
/// only because the model sampled the gold letter (its own token probability is added when
/// the top list lacks it), so mean_gold_prob can be conditioned on a right answer;
/// mean_gold_prob_listed averages the draws whose top list itself carried the gold, which
/// does not depend on what was sampled (nullopt when a draw of the cell does not record
/// its listed letters). The argmax is taken over the known options (an unknown option was
/// outside the top list, so it is less likely than every listed token; ties go to the
/// first letter) and only for a draw with at least two known options: with one, that
/// option (usually the sampled one) is the argmax by construction, so the draw counts in
/// argmax_undefined and never as a match. Source: issue 6 item 7; the logprob scoring of
/// seed 004 §2.4 (first-token option probabilities); tester s10 finding 7.
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
///  "gold_known_answered", "mean_gold_prob" (null if none known), "listed_recorded",
///  "gold_listed", "gold_sampled_only", "mean_gold_prob_listed" (each null when not every
///  draw records its listed letters, the mean also when gold_listed is 0),
///  "argmax_defined", "argmax_undefined", "argmax_matches", "argmax_match_share" (null
///  when argmax_defined is 0), "options_total", "options_unknown", "constraint_ignored"}
nlohmann::json option_prob_row_to_json(const OptionProbRow& row);

/// The warnings of the option_probs analysis for `rows` (one per subject and kind, summed
/// over its cells): draws whose top list ignored the request's constraint
/// (constraint_ignored), gold probabilities known only as the sampled answer's own
/// (gold_sampled_only: mean_gold_prob is then conditioned on a right answer), draws that do
/// not record their listed letters while some gold is known as the answer, and subjects
/// whose every draw has fewer than two known options (argmax undefined). Empty if none.
std::vector<std::string> option_prob_warnings(const std::vector<OptionProbRow>& rows);

}  // namespace nf
