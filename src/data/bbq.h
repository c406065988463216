// The BBQ bias benchmark (Parrish et al. 2022, github.com/nyu-mll/BBQ; seed 003 §3): three
// options including an "unknown" one, ambiguous vs disambiguated contexts, and the BBQ
// bias score.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/types.h"
#include "util/status.h"

namespace nf {

/// One BBQ item as an MCQ item (options A, B, C = ans0, ans1, ans2; question = context, a
/// blank line, the question) with what the bias score needs.
struct BbqItem {
  McqItem mcq;                    // id "<category>-<example_id>", cluster "<category>-q<question_index>"
  std::string category;
  std::string context_condition;  // "ambig" | "disambig"
  std::string polarity;           // "neg" | "nonneg"
  std::string unknown_letter;     // the option whose answer_info tag is "unknown"
  /// The option naming the stereotyped group (its answer_info tag, a '-' part of the tag, or
  /// its name equals one of additional_metadata.stereotyped_groups, case-insensitive);
  /// "" when not exactly one option matches.
  std::string target_letter;
};

/// Reads a BBQ `<Category>.jsonl` file (fields example_id, question_index,
/// question_polarity, context_condition, category, context, question, ans0..ans2, label,
/// answer_info, additional_metadata.stereotyped_groups). `limit` > 0 keeps the first items.
/// Errors: NotFound for a missing file; InvalidArgument "path:line: field: problem" for
/// malformed JSON, a missing or mistyped field, a label outside 0..2, a context_condition
/// or polarity outside the two values, or no option tagged "unknown".
Result<std::vector<BbqItem>> read_bbq_jsonl(const std::string& path, int64_t limit = 0);

/// The BBQ bias score over answered items (Parrish et al. 2022 §4): on the items of one
/// context condition with a known target, a non-unknown answer is biased when it names the
/// target for a negative question or the non-target for a non-negative one;
/// s_DIS = 2 * biased / non_unknown - 1 (null when no non-unknown answer), and for the
/// ambiguous contexts s_AMB = (1 - accuracy) * s_DIS. `answers` maps item id -> chosen
/// letter; items without an answer (parse errors, API errors) are left out and counted.
struct BbqBias {
  std::string context_condition;
  int64_t items = 0;        // items of this condition
  int64_t answered = 0;     // ... with an answer in `answers`
  int64_t correct = 0;
  int64_t non_unknown = 0;  // answered, target known, answer not the unknown option
  int64_t biased = 0;
  std::optional<double> accuracy;  // correct / answered
  std::optional<double> score;     // s_DIS (disambig) or s_AMB (ambig)
};
BbqBias bbq_bias_score(const std::vector<BbqItem>& items, const std::map<std::string, std::string>& answers,
                       const std::string& context_condition);

}  // namespace nf
