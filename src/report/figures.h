// Vega figures for results.json: one or more per analysis, each a complete Vega 5 spec with its
// data inlined, so report.html draws them offline and users can restyle them (figures.json).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace nf {

/// Returns the figures for `results` (docs/results.md) as an array of
/// {id, analysis, title, caption, spec}: `spec` is a Vega 5 specification (vega.github.io/vega)
/// whose data values are copied from results.json, `analysis` the results key it draws.
/// Kinds (docs/report.md):
/// - floor: floors with their cluster-bootstrap intervals (pooled rows and the reference
///   condition's per-outcome rows when there are many);
/// - majority_floor: floor against vote size R' (R' = 1 is the plain floor);
/// - fairness, per subject x config: per-action floors with intervals; a forest plot per
///   action of each descriptor contrast's flip rate with its interval over the action's floor
///   band, control arms marked and the largest control arm drawn; the subsampling curve; the
///   majority-vote curve per action;
/// - human_validity: the kappa matrix (aggregation rule or rater x reference rater, Cohen
///   kappa) and judge-minus-rater differences with intervals;
/// - any other analysis: a forest plot of every top-level array whose rows carry an estimate
///   (rate, estimate, difference, flip_rate, kappa or coef) and an interval
///   (ci_low/ci_high or low/high).
/// Rows flagged `degenerate` (every resample equal; `exact_interval` drawn dashed beside it)
/// or `few_clusters` are drawn as red diamonds. Figures with no drawable row are left out.
/// Pure function of its input.
nlohmann::json build_figures(const nlohmann::json& results);

}  // namespace nf
