// Analysis `judge_panel`: reliability of a panel of LLM judges that re-score the same
// answers (seed 004 §2.6, §3.3; Tables 4, 5, 6). Reads the store's judgments.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "metrics/floor.h"
#include "store/store.h"
#include "util/status.h"

namespace nf {

/// The votes of a judge panel in index form: subjects, judges and clusters sorted by
/// name; one Vote per ok judgment with a label (parse and API errors are never votes).
struct PanelData {
  struct Vote {
    int subject = 0, judge = 0, cluster = 0;
    int label = 0;
    std::string item;
  };
  std::vector<std::string> subjects, subject_providers;  // by subject index
  std::vector<std::string> judges, judge_providers;      // by judge index
  std::vector<std::string> clusters;                     // prompt ids
  std::vector<Vote> votes;
  int64_t not_votes = 0;  // judgments with status parse_error / api_error or no label
  int64_t parse_errors = 0, api_errors = 0;  // the parts of not_votes by status (the rest: no label)
  /// (subject, item) -> label per judge (nullopt = no vote); the units of agreement.
  std::map<std::pair<std::string, std::string>, std::vector<std::optional<int>>> units;
  std::map<std::pair<std::string, std::string>, int> unit_cluster;
};

/// Builds PanelData from stored judgments. Errors: InvalidArgument if a judge or a
/// subject appears with two different providers; FailedPrecondition if there is no vote.
Result<PanelData> build_panel(const std::vector<JudgmentRow>& judgments);

/// True for an imported missing vote (a null vote in released data): the store keeps it
/// with status api_error and settings {"imported": true} (its schema lets only labelled
/// rows be ok), but it is a missing vote, never an API error, and no judge run retries it.
bool is_imported_missing_vote(const JudgmentRow& r);

/// Options of judge_panel (results.json `analyses.judge_panel.options`).
///  focus_subject  the subject given its own same-provider term in the "focus vs
///                 others" logistic model (seed 004 Table 5: GPT-5.5, the as-run
///                 judge's own subject). Default "": the subject with the largest raw
///                 own-minus-peer gap.
/// Appropriate-response rate by subject x condition (seed 004 §2.3: the probe compares a
/// conversation as written with its truncated form), per judge and over all judges
/// (pooled votes). Uses the votes (status ok with a label) whose draw_id is in
/// `condition_of_draw`. Each row: {"subject", "condition", "judge" (a judge's name or
/// "all judges"), "votes", "met", "rate", "low", "high"}: rate = met / votes; low/high a
/// percentile cluster-bootstrap CI resampling the judgments' clusters (prompts), so
/// replicates and judges of the same prompt are not counted as independent
/// (stats::cluster_bootstrap_ratio, `boot` resamples/seed/level). Rows ordered by subject,
/// condition, judge with "all judges" last. Returns an empty array when the votes span
/// fewer than two conditions (nothing to compare). Errors: those of the bootstrap.
Result<nlohmann::json> judge_rates_by_condition(const std::vector<JudgmentRow>& judgments,
                                                const std::map<int64_t, std::string>& condition_of_draw,
                                                const BootstrapOptions& boot);

struct JudgePanelOptions {
  BootstrapOptions bootstrap;
  std::string focus_subject;
};

/// Computes the judge_panel analysis (docs/results.md "judge_panel"):
///  rates       per judge x subject appropriate-vote rate (votes with label 1 / votes),
///              Wilson 95% interval, and per judge over all subjects (Table 4);
///  fleiss      Fleiss kappa over the (subject, item) units rated by every judge, with a
///              prompt-clustered bootstrap CI, and the mean pairwise raw agreement;
///  same_provider_effect  per subject with exactly one same-provider judge: own rate, peer
///              mean rate (mean of the other judges' rates), raw gap = own - peer, the
///              own judge's leniency on the other subjects (mean over them of its rate
///              minus the mean of the other judges' rates) and DiD = raw - leniency
///              (Table 5);
///  logistic    vote-level logistic regressions label ~ C(subject) + C(judge) + terms,
///              fitted by IRLS (stats/logistic.h), with prompt-clustered percentile
///              bootstrap CIs (replicate r draws clusters from Rng::stream(seed, {r});
///              failed fits, e.g. separation in a resample, are skipped and counted):
///              "shared" (one same_provider term), "focus" (same_provider[focus] and
///              same_provider[others]), "per_subject" (one term per subject);
///  permutation exact one-sided permutation test of the shared coefficient over all k!
///              bijections of own judges to subjects (24 for 4 x 4), when subjects and
///              judges pair one-to-one by provider;
///  leave_own_provider_out  per subject, 1 - mean rate of the judges of other
///              providers (Table 6; a sensitivity analysis, not a common scale);
///  leave_one_judge_out     per dropped judge, each subject's inappropriate rate
///              (1 - mean rate of the remaining judges), the ranking, and whether it
///              equals the full-panel ranking;
///  rank_probability  prompt-clustered bootstrap probability that each subject has the
///              lowest / highest full-panel inappropriate rate (ties split evenly).
/// Source: seed 004 §2.6, §3.3. Errors: build_panel()'s; InvalidArgument for an unknown
/// focus_subject.
Result<nlohmann::json> judge_panel_analysis(const PanelData& panel, const JudgePanelOptions& options);

/// The name of the rate a judge panel measures (label 1 = criterion met), for the
/// report: "appropriate-response rate" for the seed 004 missing-information criterion
/// (spec/study.h default_judge_criterion) and for "" (a store without a study, e.g.
/// imported missing-info votes); "full-compliance rate" for the XSTest criterion
/// (xstest_judge_criterion); "criterion-met rate" for any other criterion.
std::string judge_rate_label(const std::string& criterion);

}  // namespace nf
