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
/// 0.95), bounds clamped to [0, 1]; estimate = x / n.
/// Source: Wilson (1927); seed 004 §2.7 (Table 12).
/// Errors: InvalidArgument if n == 0, x > n ("wilson: successes (7) exceeds trials (5)"),
/// or level outside (0, 1).
Result<Interval> wilson(int64_t x, int64_t n, double level = 0.95);

/// Clopper-Pearson exact interval (beta quantiles). Same errors as wilson().
Result<Interval> clopper_pearson(int64_t x, int64_t n, double level = 0.95);

/// Exact binomial test of H0: p = p0. Two-sided p-value sums the probabilities of all
/// outcomes no more likely than the observed one (with a 1e-7 relative tolerance), as
/// scipy.stats.binomtest; "less"/"greater" are one-sided. Never above 1.
enum class Alternative { kTwoSided, kLess, kGreater };
Result<double> binom_test(int64_t x, int64_t n, double p0 = 0.5, Alternative alt = Alternative::kTwoSided);

}  // namespace nf::stats
