// Cluster bootstrap. Layer 1.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "stats/proportion.h"
#include "util/status.h"

namespace nf::stats {

/// Percentile bootstrap result. `replicates` holds the valid (non-NaN) replicate values
/// in replicate order; `seed` is the seed that produced them (STYLE.md: every bootstrap
/// result records its seed).
struct BootstrapResult {
  double estimate = 0.0;
  double low = 0.0;
  double high = 0.0;
  int resamples = 0;         // replicates requested
  int valid_replicates = 0;  // replicates whose statistic was finite
  uint64_t seed = 0;
  std::vector<double> replicates;
};

/// Statistic of one resample: `clusters` holds the drawn cluster indices (size =
/// number of clusters, with repeats). Returns NaN to mark a replicate as invalid (it is
/// skipped). Must be thread-safe when threads > 1 (called concurrently).
using ClusterStatistic = std::function<double(const std::vector<size_t>& clusters)>;

/// Quantile of `values` at q in [0, 1] with linear interpolation between order
/// statistics (numpy.quantile's default, Hyndman & Fan type 7): h = (n-1) q,
/// v[floor h] + (h - floor h) (v[floor h + 1] - v[floor h]). `values` need not be sorted.
/// Errors: InvalidArgument if values is empty, q outside [0, 1] or a value is NaN.
Result<double> quantile_linear(std::vector<double> values, double q);

/// Percentile interval [quantile_linear(alpha/2), quantile_linear(1 - alpha/2)] with
/// alpha = 1 - level. Errors: as quantile_linear and check_level.
Result<Interval> percentile_interval(const std::vector<double>& values, double level);

/// Generic cluster bootstrap (Efron & Tibshirani 1993 ch. 13; seed 000 §D): draws
/// `n_clusters` cluster indices with replacement per replicate (a cluster drawn twice
/// counts twice), replicate r using Rng::stream(seed, {r}) so the result is identical for
/// any `threads` (default 1; work split over std::thread). estimate = statistic over
/// the identity resample 0..n_clusters-1; interval = percentile_interval of the valid
/// replicates at `level` (default 0.95).
/// Errors: InvalidArgument if n_clusters == 0, resamples < 1, threads < 1, level
/// outside (0, 1); Undefined if the estimate is NaN or no replicate is valid.
Result<BootstrapResult> cluster_bootstrap(size_t n_clusters, const ClusterStatistic& statistic, int resamples,
                                          uint64_t seed, double level = 0.95, int threads = 1);

/// sum(num[i]) / sum(den[i]) over the drawn cluster indices (repeats count again), e.g.
/// clusters {c1: 4/4, c2: 1/2, c3: 1/6} drawn as (c3, c1, c1) give 9/14. NaN when the
/// drawn denominator is 0. Indices must be < num.size() == den.size() (unchecked).
double ratio_of_sums(const std::vector<double>& num, const std::vector<double>& den,
                     const std::vector<size_t>& clusters);

/// Percentile cluster-bootstrap CI of a ratio of sums, sum(num) / sum(den), resampling
/// clusters with replacement (a cluster drawn twice counts twice). num[i] and den[i] are
/// cluster i's totals (e.g. discordant pairs and comparisons of one item). `resamples`
/// replicates, RNG stream per replicate from `seed` so the result does not depend on
/// thread count. Replicates whose resampled denominator is 0 are skipped.
/// estimate = sum(num) / sum(den) on the original sample.
/// Errors: InvalidArgument if sizes differ, no clusters, sum(den) == 0, resamples < 1,
/// level outside (0, 1).
/// Source: Efron & Tibshirani (1993) ch. 13; seed 000 §D (vignette-cluster bootstrap).
/// `threads` (default 1) only changes speed, never the interval.
Result<Interval> cluster_bootstrap_ratio(const std::vector<double>& num, const std::vector<double>& den,
                                         int resamples, uint64_t seed, double level = 0.95, int threads = 1);

/// cluster_bootstrap_ratio with the whole result: the same estimate, interval and draws,
/// plus `valid_replicates` (resamples - valid_replicates were dropped because their drawn
/// denominator was 0) and the valid `replicates` themselves (so a caller can tell a
/// degenerate interval: stats::all_equal). Errors: as cluster_bootstrap_ratio; Undefined if
/// every replicate drew a zero denominator.
Result<BootstrapResult> cluster_bootstrap_ratio_replicates(const std::vector<double>& num,
                                                           const std::vector<double>& den, int resamples,
                                                           uint64_t seed, double level = 0.95, int threads = 1);

}  // namespace nf::stats
