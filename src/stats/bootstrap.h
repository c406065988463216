// Cluster bootstrap. Layer 1.
#pragma once

#include <cstdint>
#include <vector>

#include "stats/proportion.h"
#include "util/status.h"

namespace nf::stats {

/// Percentile cluster-bootstrap CI of a ratio of sums, sum(num) / sum(den), resampling
/// clusters with replacement (a cluster drawn twice counts twice). num[i] and den[i] are
/// cluster i's totals (e.g. discordant pairs and comparisons of one item). `resamples`
/// replicates, RNG stream per replicate from `seed` so the result does not depend on
/// thread count. Replicates whose resampled denominator is 0 are skipped.
/// estimate = sum(num) / sum(den) on the original sample.
/// Errors: InvalidArgument if sizes differ, no clusters, sum(den) == 0, resamples < 1,
/// level outside (0, 1).
/// Source: Efron & Tibshirani (1993) ch. 13; seed 000 §D (vignette-cluster bootstrap).
Result<Interval> cluster_bootstrap_ratio(const std::vector<double>& num, const std::vector<double>& den,
                                         int resamples, uint64_t seed, double level = 0.95);

}  // namespace nf::stats
