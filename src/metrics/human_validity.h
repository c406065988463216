// Analysis `human_validity`: LLM judges against human raters on the same answers
// (seed 004 §3.1, §3.4; Tables 2, 7, 8, 9, 10 and Appendix C).
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "metrics/floor.h"
#include "metrics/judge_panel.h"
#include "store/store.h"
#include "util/status.h"

namespace nf {

/// Options of human_validity.
///  strata_fields  item-metadata fields to stratify by, one stratum per value (default
///                 task_type, determinacy, trunc_form: the audit axes of seed 004 §2.3);
///  subsets        conjunctions of field = value that form extra strata (default the
///                 author-audited subset {task_type: clinical, determinacy: underdetermined}).
/// Fields or values absent from the items' metadata produce no stratum.
struct HumanValidityOptions {
  BootstrapOptions bootstrap;
  std::vector<std::string> strata_fields = {"task_type", "determinacy", "trunc_form"};
  std::vector<std::map<std::string, std::string>> subsets = {
      {{"task_type", "clinical"}, {"determinacy", "underdetermined"}}};
};

/// Computes the human_validity analysis over the (subject, item) units that have human
/// labels (docs/results.md "human_validity"). Labels and votes are 1 = appropriate.
///  raters       per-rater appropriate rate; consensus = strict majority of the raters
///               present on a unit (a tie leaves the unit without consensus);
///  fleiss       Fleiss kappa across raters (units rated by all), prompt-clustered CI;
///  pairs        per rater pair: raw agreement, Cohen kappa and Gwet AC1 (K = 2), each
///               with a prompt-clustered percentile bootstrap CI (Table 7);
///  judge_minus_rater  per judge and reference (each rater, consensus): judge rate minus
///               reference rate on the units both rated, with a prompt-clustered
///               bootstrap CI of the paired mean difference (Table 8);
///  aggregation  rules (each single judge; tie_positive: >= K/2 of K judges call it
///               appropriate; supermajority: >= 3K/4; unanimity: all K; provider_excluded
///               _majority: strict majority of the judges not sharing the subject's
///               provider) against each reference: Cohen kappa with CI, false-lenient
///               (rule 1, reference 0), false-strict (rule 0, reference 1), both-appropriate,
///               both-inappropriate (Table 9, Appendix C);
///  calibration  over units with every judge's vote: per number of appropriate votes,
///               the share each reference rates appropriate (Table 10);
///  strata       per stratum of item metadata: n, judge inappropriate (1 - mean over
///               units of the mean panel vote), reference rates, panel-minus-consensus gap
///               (Table 2).
/// Bootstrap clusters are the units' prompt clusters (33 prompts in the released data);
/// replicate r draws from Rng::stream(seed, {r}).
/// Source: seed 004 §3.4, §3.1. Errors: FailedPrecondition if there are no human labels.
Result<nlohmann::json> human_validity_analysis(const PanelData& panel, const std::vector<HumanLabelRow>& labels,
                                              const std::vector<ItemRow>& items,
                                              const HumanValidityOptions& options);

}  // namespace nf
