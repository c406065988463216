// Cluster-bootstrap intervals that hold their level with few clusters, and the
// degenerate case. Layer 1.
//
// The percentile cluster bootstrap of a ratio of sums under-covers when clusters are
// few (slow tier, cluster sizes 5-15, cluster rates U(0.1, 0.5), 1,000 resamples: 86% at
// 6 clusters, 92% at 16, 93% at 33 for a nominal 95%), because the bootstrap
// distribution is too narrow by about sqrt((G-1)/G) and skewed. The studentized
// ("percentile-t", bootstrap-t) cluster bootstrap resamples the pivot
// t* = (R* - R) / se(R*) with the ratio's linearized (delta-method, CR1) standard error
// and holds its level at 6, 16 and 33 clusters in the same simulation
// (tests/stats/bootstrap_coverage_slow_test.cc; docs/intervals.md).
// Sources: Efron & Tibshirani (1993) ch. 12.5 (bootstrap-t); Hall (1988) Ann. Statist.
// 16:927-953 (second-order accuracy of the studentized interval); Cameron, Gelbach &
// Miller (2008) Rev. Econ. Stat. 90:414-427 (cluster bootstrap-t with few clusters).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "stats/proportion.h"
#include "util/status.h"

namespace nf::stats {

/// Clusters below this count are flagged `few_clusters` beside every interval.
inline constexpr int kFewClusters = 20;

/// A cluster-bootstrap interval of a ratio of sums with what a reader needs to judge it.
struct ClusterRatioInterval {
  double estimate = 0.0;         // sum(num) / sum(den)
  double low = 0.0, high = 0.0;  // studentized interval, clamped to [clamp_low, clamp_high];
                                 // equal to the estimate when degenerate
  double percentile_low = 0.0, percentile_high = 0.0;  // the percentile interval, same replicates
  double se = 0.0;               // linearized standard error on the original sample
  int64_t clusters = 0;
  int resamples = 0, valid_replicates = 0;
  uint64_t seed = 0;
  bool degenerate = false;       // every valid replicate equals the estimate (e.g. 0/n, n/n)
  std::string method;            // "studentized cluster bootstrap" | "degenerate (all resamples equal)"
};

/// Linearized (delta-method) standard error of R = sum(num) / sum(den) over clusters
/// `idx` (repeats count again): sqrt(G/(G-1) * sum_i (num_i - R den_i)^2) / sum(den), G =
/// idx.size() (the CR1 small-sample factor). 0 when G < 2; NaN when sum(den) == 0.
/// E.g. clusters 1/2, 3/4 -> R = 2/3, se = sqrt(2 * ((1-4/3)^2 + (3-8/3)^2)) / 6 = 0.11111.
/// Indices must be < num.size() == den.size() (unchecked).
double ratio_linearized_se(const std::vector<double>& num, const std::vector<double>& den,
                           const std::vector<size_t>& idx);

/// The studentized interval [estimate - t_hi se, estimate - t_lo se] from pivot replicates
/// t* (t_lo, t_hi = quantile_linear of t at alpha/2, 1 - alpha/2; +-infinity allowed and
/// giving an unbounded side). Errors: InvalidArgument for an empty `t`, a NaN, se < 0 or a
/// level outside (0, 1).
Result<Interval> studentized_interval(double estimate, double se, std::vector<double> t, double level);

/// Studentized cluster bootstrap of sum(num) / sum(den): `resamples` replicates of G
/// clusters drawn with replacement, replicate r from Rng::stream(seed, {r}) (the same draws
/// as cluster_bootstrap_ratio, so percentile_low/high equal its interval). A replicate
/// whose denominator is 0 is skipped. The pivot is t* = (R* - R) / max(se*, se / sqrt(G)):
/// the floor keeps a resample without spread (se* = 0, e.g. only unanimous items drawn)
/// from giving an infinite pivot and a [0, 1] interval for a sparse outcome. The interval is clamped to
/// [clamp_low, clamp_high] (default [0, 1], a rate). When every valid replicate equals the
/// estimate the result is `degenerate` and low = high = estimate: report an exact or score
/// bound beside it, never the bare interval. `threads` changes speed only.
/// Errors: InvalidArgument if sizes differ, no clusters, sum(den) == 0, resamples < 1,
/// threads < 1 or level outside (0, 1); Undefined if no replicate is valid.
Result<ClusterRatioInterval> cluster_ratio_interval(const std::vector<double>& num, const std::vector<double>& den,
                                                    int resamples, uint64_t seed, double level = 0.95,
                                                    int threads = 1, double clamp_low = 0.0, double clamp_high = 1.0);

/// cluster_ratio_interval for K ratios over the same number of clusters G at once
/// (nums[k], dens[k] of ratio k, each of size G; e.g. a floor's outcome rows and its pooled
/// row): replicate r draws its G cluster indices once, from Rng::stream(seed, {r}), and every
/// ratio is resampled with them, so result k is bit-identical to
/// cluster_ratio_interval(nums[k], dens[k], resamples, seed, level, threads, clamp_low,
/// clamp_high) at about 1/K of the random draws (issue 14). `threads` changes speed only.
/// Errors: as cluster_ratio_interval for any ratio, and InvalidArgument if the ratios'
/// cluster counts differ. No ratios: an empty result.
Result<std::vector<ClusterRatioInterval>> cluster_ratio_intervals(const std::vector<std::vector<double>>& nums,
                                                                   const std::vector<std::vector<double>>& dens,
                                                                   int resamples, uint64_t seed, double level = 0.95,
                                                                   int threads = 1, double clamp_low = 0.0,
                                                                   double clamp_high = 1.0);

/// The inner loop cluster_ratio_intervals resamples with. Every kernel performs the same
/// IEEE operations in the same order, so results are bit-identical whichever runs
/// (tests/stats/cluster_intervals_batch_test.cc); only speed differs. kAuto: the widest the
/// CPU has: kAvx512 (512-bit vectors, 8 ratios per instruction, blocks of up to 32 ratios),
/// kAvx2 (256-bit, 4 per instruction, blocks of up to 16; both x86-64 with GCC/Clang only),
/// else kPortable (the compiler's baseline vectors, blocks of up to 16).
enum class ResampleKernel { kAuto, kPortable, kAvx2, kAvx512 };
/// The kernel in use now (never kAuto).
ResampleKernel resample_kernel();
/// Chooses the kernel for later calls, process-wide (tests and benchmarks; call before
/// starting threads that resample). kAuto restores the default. Returns false, changing
/// nothing, when the kernel is not available on this CPU or build.
bool set_resample_kernel(ResampleKernel kind);

/// True when every value equals the first (an empty vector is not degenerate): the
/// bootstrap distribution has no spread, so its interval says nothing about uncertainty.
bool all_equal(const std::vector<double>& values);

}  // namespace nf::stats
