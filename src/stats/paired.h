// Paired binary comparisons: exact McNemar and friends. Layer 1.
#pragma once

#include <cstdint>
#include <vector>

#include "util/status.h"

namespace nf::stats {

/// Exact two-sided McNemar p-value from the discordant counts b and c: the two-sided
/// binomial test of b successes in b + c trials at p = 0.5 (min(1, 2 * P[X <= min(b,c)])).
/// b + c == 0 gives 1. Never above 1. Source: McNemar (1947); seed 000 §III.B, S12;
/// seed 004 §3.5 (Table 11). Errors: InvalidArgument if b or c is negative.
Result<double> mcnemar_exact(int64_t b, int64_t c);

/// Mid-p McNemar test from the discordant counts b and c: the exact two-sided p with half
/// the probability of the observed count removed, min(1, 2 * (P[X <= m] - P[X = m] / 2)),
/// m = min(b, c), X ~ Binomial(b + c, 0.5) (the half point mass is subtracted before
/// capping at 1, so b == c gives exactly 1). b + c == 0 gives 1. Less conservative than
/// mcnemar_exact() (Fagerland, Lydersen & Laake 2013 recommend it for paired binary
/// data). Examples (issue 13 item 5): b = 3, c = 11 gives 0.03515625 (exact 0.057373);
/// b = c = 5 gives 1. Source: Lancaster (1961); Fagerland et al. (2013), BMC Med. Res.
/// Methodol. 13:91. Errors: InvalidArgument if b or c is negative.
Result<double> mcnemar_mid_p(int64_t b, int64_t c);

/// McNemar chi-square statistic and its p-value (chi-square, 1 df).
struct McNemarChi2 {
  double statistic = 0.0;
  double p_value = 1.0;
};

/// McNemar chi-square test with Edwards' continuity correction:
/// statistic = max(0, |b - c| - 1)^2 / (b + c), p = P[chi2_1 >= statistic]. The clamp at 0
/// means |b - c| <= 1 (b == c included) gives statistic 0 and p = 1 (statsmodels
/// mcnemar(exact=False) would square a negative |b-c|-1 and report p < 1 for b == c).
/// With correction = false the statistic is (b - c)^2 / (b + c). b + c == 0 gives
/// statistic 0, p = 1. Source: Edwards (1948); seed 000 S12.
/// Errors: InvalidArgument if b or c is negative.
Result<McNemarChi2> mcnemar_chi2(int64_t b, int64_t c, bool correction = true);

/// Paired difference of two proportions measured on the same items.
struct PairedDifference {
  double estimate = 0.0;  // mean(a) - mean(b)
  double low = 0.0;       // paired bootstrap percentile interval
  double high = 0.0;
  double rate_a = 0.0;    // mean(a)
  double rate_b = 0.0;    // mean(b)
  int64_t n = 0;          // items
  int64_t b10 = 0;        // items with a = 1, b = 0 (McNemar b)
  int64_t c01 = 0;        // items with a = 0, b = 1 (McNemar c)
  double se = 0.0;        // sd(a - b, ddof = 1) / sqrt(n): the paired standard error
  int resamples = 0;
  uint64_t seed = 0;
};

/// Paired difference mean(a) - mean(b) over n items (a[i], b[i] in {0, 1}) with a paired
/// bootstrap percentile CI at `level` (default 0.95): each of `resamples` (default 10000)
/// replicates resamples the n items with replacement (Rng::stream(seed, {r})) and takes
/// the mean of a[i] - b[i]; interval = numpy-linear quantiles (quantile_linear).
/// Source: Efron & Tibshirani (1993) ch. 6; seed 004 §3.5 (paired_medqa.json ci95/ci90,
/// which are reproduced to the 0.01 grid, not bit-for-bit: the publication's seed and
/// generator are unknown).
/// Errors: InvalidArgument if sizes differ, n == 0, a value is not 0/1, resamples < 1,
/// level outside (0, 1).
Result<PairedDifference> paired_difference(const std::vector<int>& a, const std::vector<int>& b,
                                           int resamples = 10000, uint64_t seed = 0, double level = 0.95);

/// Equivalence of two paired proportions within +/- margin.
struct Equivalence {
  PairedDifference diff;  // with the (1 - 2 alpha) = 90% paired bootstrap CI
  double margin = 0.0;
  bool equivalent = false;  // 90% bootstrap CI inside (-margin, +margin)  (seed 004 §3.5)
  double p_lower = 1.0;     // H0: delta <= -margin, one-sided t test
  double p_upper = 1.0;     // H0: delta >= +margin, one-sided t test
  double p_tost = 1.0;      // max(p_lower, p_upper)
};

/// Equivalence check of seed 004 §3.5: `equivalent` is true when the 90% paired
/// bootstrap CI (paired_difference at level 0.90) lies strictly inside (-margin, margin).
/// The TOST p-values are those of statsmodels ttost_paired(a, b, -margin, margin): with
/// d = a - b, se = sd(d, ddof=1) / sqrt(n) and t(n-1):
/// p_lower = P[T >= (mean d + margin) / se], p_upper = P[T <= (mean d - margin) / se],
/// p_tost = max of the two. Source: Schuirmann (1987); statsmodels.stats.weightstats.
/// Errors: as paired_difference; InvalidArgument if margin <= 0; Undefined if n < 2 or
/// all differences are equal (se = 0, the t statistic does not exist).
Result<Equivalence> tost_paired(const std::vector<int>& a, const std::vector<int>& b, double margin,
                                int resamples = 10000, uint64_t seed = 0);

}  // namespace nf::stats
