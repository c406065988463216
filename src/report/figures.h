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
/// - rerun: every metric per arm, the Wilson 95% interval of a count metric, the group-cluster
///   bootstrap of pairwise_order_set_disagreement;
/// - envelope: rho_flip per pair with its configuration-bootstrap range; the score per
///   configuration (no interval).
/// Every point carries `mark` (docs/report.md "What every mark means"): a plain point with its
/// bar (`ci` names the interval, and so does the caption), a hollow no-interval point, a red
/// diamond for a `degenerate` interval (every resample equal; `exact_interval` dashed beside
/// it), a red triangle for `few_clusters`; the legend and the caption explain each mark used.
/// Labels are shortened by short_labels() (report/figure_labels.h): `label`/`group`/`series`
/// as drawn, `full_label`/`full_group`/`full_series` whole. Figures with no drawable row are
/// left out.
/// Pure function of its input.
nlohmann::json build_figures(const nlohmann::json& results);

}  // namespace nf
