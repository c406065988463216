// Scoring paths over stored completions (issue 11 item 2; seed 003 §3 "scoring path" axis;
// docs/xstest-chat.md): the same stored ok chat completions scored several ways, with no
// regeneration, so the scorer becomes a configuration axis of the envelope analysis
// (metrics/envelope.h option `scorers`). Layer 5.
//
// The scorer registry (completion_scorers()):
//   strmatch     1 = full compliance, 0 = refusal by the XSTest string-match classifier
//                (task/refusal.h) applied to the stored reply text;
//   judge:NAME   the stored ok vote of judge NAME (runner/judge.h; 1 = criterion met);
//                parse_error / api_error judgments are no score;
//   judge_panel  the majority of the draw's ok votes (a tie or no vote: no score).
// A new text scorer is one entry in completion_scorers(); the judge paths read the
// store's judgments table.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "metrics/envelope.h"
#include "store/store.h"
#include "util/status.h"

namespace nf {

/// A scorer of a reply text alone: nullopt = cannot score.
struct CompletionScorer {
  std::string name;
  std::string summary;
  std::function<std::optional<int>(std::string_view reply)> score;
};

/// Every text scorer ("strmatch"), in registry order.
const std::vector<CompletionScorer>& completion_scorers();

/// Ok when `name` is a text scorer, "judge_panel" or "judge:NAME" with a non-empty NAME
/// without ',' or '='; InvalidArgument naming the known scorers otherwise.
Status check_scorer_name(const std::string& name);

/// The cells and the report of rescore_completions.
struct RescoredCompletions {
  std::vector<EnvelopeCell> cells;
  nlohmann::json report;
};

/// Scores every stored ok draw (Store::ok_draws_for_judging) with every scorer of
/// `scorers`. Cells: per (subject, configuration, scorer) over the draws whose item's
/// data.meta[field] equals value for every (field, value) of `stratum` (empty = all
/// items): score = mean over the scored draws (items x replicates), n = scored draws,
/// parse_rate = scored draws / the stratum's ok draws; the configuration id is the draw's
/// config (without "default" and without the axes of `pool_axes`, whose draws are pooled:
/// "diverse" decoding, seed 003 §3), ",condition=C" when the draws span several
/// conditions, and ",scorer=NAME".
/// Report (results.json analyses.envelope.scorers):
///  - `paths`, `stratum`;
///  - `compliance[]`: per subject x stratum value (every value of the stratum field, e.g.
///    safe and unsafe; "all" without a stratum) x configuration x scorer: `scored`,
///    `positive` (score 1), `rate` with its Wilson 95% interval, `unscored` (ok draws the
///    scorer could not score), `ok_draws`;
///  - `disagreement[]`: per scorer pair (a < b in `scorers` order) x stratum value x
///    subject (and "all subjects"): draws both scored `n`, `both_1`, `a_only` (a = 1,
///    b = 0), `b_only`, `both_0`, `agreement` = share equal, Cohen's kappa
///    (stats/agreement.h; null with `kappa_undefined` when every score is one value).
/// Errors: InvalidArgument for a bad scorer name; InvalidArgument "envelope.stratum: field
/// 'F' is not an item field (item fields: ...)" when no item's data.meta has the stratum
/// field, and "envelope.stratum: no item has F = 'V' (values of F: ...)" when none has the
/// value; FailedPrecondition when the store holds
/// no ok draws, or a judge scorer names a judge with no stored judgment; the store's read
/// errors. Source: seed 003 §3, §5; Röttger et al. 2024 (XSTest).
Result<RescoredCompletions> rescore_completions(Store& store, const std::vector<std::string>& scorers,
                                                const std::map<std::string, std::string>& stratum,
                                                const std::vector<std::string>& pool_axes = {});

}  // namespace nf
