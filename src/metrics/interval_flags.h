// The fields every cluster-bootstrap interval carries in results.json (docs/intervals.md):
// the cluster count, a few-clusters flag, the interval's method, and for a degenerate
// interval (every resample equal, e.g. a 0/160 floor) an exact/score bound beside it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace nf {

/// Adds to the row `j`: `clusters`; `few_clusters` (true below stats::kFewClusters = 20);
/// `ci_method`; `degenerate`; `percentile_low` / `percentile_high` (the plain percentile
/// interval of the same resamples, null when NaN); and when `degenerate`,
/// `exact_interval` = {method: "wilson", lo, hi, x, n, note} with the Wilson score bound of
/// x of n `unit` (e.g. "pairs") and a note that the units within an item (cluster) are not
/// independent, so the bound is too narrow and only a floor under the uncertainty
/// (e.g. 0/160 pairs -> Wilson [0, 0.023]). Source: Wilson (1927); issue 12 item 4.
void add_interval_flags(nlohmann::json& j, const std::string& method, int64_t clusters, bool degenerate,
                        double percentile_low, double percentile_high, int64_t x, int64_t n, double wilson_low,
                        double wilson_high, const std::string& unit);

/// For an agreement statistic's cluster-bootstrap interval (kappa, AC1, raw agreement):
/// adds `clusters` (distinct values of `cluster_of_unit`), `few_clusters` and `degenerate`
/// (`low == high`: the resamples gave one value, e.g. a unanimous kappa) with a `note` that
/// this is not certainty. No exact bound exists for kappa, so none is given.
void add_agreement_interval_flags(nlohmann::json& j, bool degenerate, const std::vector<std::string>& cluster_of_unit);

}  // namespace nf
