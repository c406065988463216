// Binomial proportions: Wilson and Clopper-Pearson intervals, exact binomial test.
// Layer 1: pure numerics, no I/O. Special functions come from Boost.Math.
#pragma once

#include <cstdint>

#include "util/status.h"

namespace nf::stats {

/// A confidence interval [low, high] for an estimate.
struct Interval {
  double estimate = 0.0;
  double low = 0.0;
  double high = 0.0;
};

/// Wilson score interval for x successes in n trials at confidence `level` (default
/// 0.95), bounds clamped to [0, 1] (exactly 0 when x == 0, exactly 1 when x == n);
/// estimate = x / n; z is the normal quantile at 1 - (1 - level) / 2. Matches statsmodels
/// proportion_confint(method="wilson") to 1e-9 (tests/reference/core_proportion.json).
/// Source: Wilson (1927); seed 004 §2.7 (Table 12).
/// Errors: InvalidArgument if n == 0, x > n ("wilson: successes (7) exceeds trials (5)"),
/// or level outside (0, 1).
Result<Interval> wilson(int64_t x, int64_t n, double level = 0.95);

/// Clopper-Pearson exact interval at `level` (default 0.95): low = Beta(x, n-x+1)
/// quantile at alpha/2 (0 when x == 0), high = Beta(x+1, n-x) quantile at 1 - alpha/2
/// (1 when x == n), as statsmodels proportion_confint(method="beta"). Estimate x / n.
/// Source: Clopper & Pearson (1934). Same errors as wilson().
Result<Interval> clopper_pearson(int64_t x, int64_t n, double level = 0.95);

/// Exact binomial test of H0: p = p0. Two-sided p-value sums the probabilities of all
/// outcomes no more likely than the observed one (with a 1e-7 relative tolerance), as
/// scipy.stats.binomtest; "less"/"greater" are one-sided. Never above 1.
enum class Alternative { kTwoSided, kLess, kGreater };
/// x successes in n trials; p0 in (0, 1) (default 0.5). The two-sided rule: with
/// d = P[X = x], p = sum of P[X = j] over all j with P[X = j] <= d * (1 + 1e-7), found by
/// binary search on the monotone tail opposite x, exactly as scipy 1.10
/// `binomtest(...).pvalue`; x == n * p0 gives 1. Source: scipy.stats.binomtest; seed 004 §3.5.
/// Errors: as wilson(), and InvalidArgument if p0 is outside (0, 1).
Result<double> binom_test(int64_t x, int64_t n, double p0 = 0.5, Alternative alt = Alternative::kTwoSided);

/// Quantile of the standard normal distribution at probability p in (0, 1) (Boost.Math).
/// Errors: InvalidArgument if p is outside (0, 1).
Result<double> normal_quantile(double p);

/// The shared check of a confidence level: OK if level is in (0, 1), else
/// InvalidArgument "<fn>: level must be in (0, 1), got <level>".
Status check_level(const char* fn, double level);

}  // namespace nf::stats
