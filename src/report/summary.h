// The headline both renderers open with: per subject, the pooled instability floor at each
// configuration and the largest effects read against it. A pure function of results.json.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace nf {

/// One subject's headline. `lines` are plain sentences (no Markdown or HTML markup; the
/// renderers escape and format them), floor lines first, then effects, largest first.
struct SubjectHeadline {
  std::string subject;
  std::vector<std::string> lines;
};

/// The report's summary of `results` (docs/results.md):
/// - per subject and configuration, the pooled floor (discordant / comparisons, rate and the
///   cluster-bootstrap interval) on the reference condition: the fairness analysis's
///   `reference` for that subject and configuration, else `none`, else the first condition
///   the floor rows name (seed 000 §III.B: the floor is what any effect is read against);
/// - per subject, the three descriptor contrasts whose flip rate exceeds its action's floor
///   by the most (fairness rows; control arms excluded, largest control arm quoted), the MCQ
///   accuracy without and with shuffled options with the exact McNemar p (one replicate;
///   which one is said), and the judge panel's inappropriate-confident rate;
/// - panel-wide lines (subject "all judges"): Fleiss kappa and the same-provider coefficient,
///   and the judge furthest from a human rater.
/// Subjects appear in the order the results first name them. Missing analyses add nothing;
/// an empty vector means the results hold nothing to summarise.
std::vector<SubjectHeadline> headline(const nlohmann::json& results);

/// What a floor row with outcome "pooled" sums, in words: "pooled over 1 independent outcome
/// (derived excluded: correct)" from its `pooled_over` / `derived_excluded` lists, or
/// "pooled over outcomes" for results written before those lists existed.
std::string pooled_over_text(const nlohmann::json& row);

/// The headline as a Markdown section ("## Summary", one bullet list per subject), or "" when
/// headline() is empty.
std::string render_summary_markdown(const nlohmann::json& results);

}  // namespace nf
