// Rank correlation: Kendall tau-b and Spearman rho. Layer 1.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "util/status.h"

namespace nf::stats {

/// How a rank correlation's p-value is computed. kAuto picks as scipy 1.10 does by default
/// (see kendall_tau_b and spearman); kExact refuses input it cannot do exactly.
enum class RankPMethod { kAuto, kExact, kAsymptotic };

/// A correlation coefficient with its test statistic and two-sided p-value.
struct Correlation {
  double estimate = 0.0;   // tau-b or rho, in [-1, 1]
  double statistic = 0.0;  // z (Kendall) or t (Spearman); for an exact p still the approximation's statistic
  double p_value = 1.0;    // two-sided; 0 only when the exact value underflows a double (n > 170)
  int64_t n = 0;
  bool exact = false;      // p_value is exact (the null distribution enumerated), not an approximation
  std::string p_method;    // how p_value was computed, in words, e.g. "exact null distribution (no ties, n <= 33)"
};

/// Kendall tau-b with ties: (C - D) / sqrt((n0 - n1)(n0 - n2)), n0 = n(n-1)/2, n1/n2 the
/// tied pairs in x/y. O(n^2) pair count.
/// p-value, as scipy 1.10 kendalltau(method=...):
///  * exact (the default kAuto when there are no ties in x or y and n <= 33 or
///    min(C, D) <= 1, which is scipy 1.10's 'auto' rule): kendall_exact_p_value(n, D);
///  * asymptotic (kAuto otherwise, or kAsymptotic): the tie-corrected normal
///    approximation var(C - D) = (n(n-1)(2n+5) - sum_x t(t-1)(2t+5) - sum_y u(u-1)(2u+5)) / 18
///    + 2 n1 n2 / (n(n-1)) + sum_x t(t-1)(t-2) sum_y u(u-1)(u-2) / (9 n(n-1)(n-2));
///    z = (C - D) / sqrt(var); p = 2 P[Z >= |z|].
/// `statistic` is that z in every case.
/// Source: Kendall (1945), Kendall (1970) Rank Correlation Methods ch. 4; scipy.stats.kendalltau;
/// seed 003 §4 (mean Kendall tau).
/// Errors: InvalidArgument if sizes differ, n < 3, a value is NaN, or kExact with ties;
/// Undefined if x or y is constant (tau-b has a zero denominator).
Result<Correlation> kendall_tau_b(const std::vector<double>& x, const std::vector<double>& y,
                                  RankPMethod method = RankPMethod::kAuto);

/// The exact two-sided p-value of Kendall's tau for n untied pairs with `discordant`
/// discordant pairs: 2 P[K <= min(D, n0 - D)] (capped at 1; exactly 1 when D = n0 / 2), K the
/// number of inversions of a uniformly random permutation of n, whose distribution is
/// counted with the recurrence f_j(k) = sum_{i=0}^{min(k, j-1)} f_{j-1}(k - i) (kept as
/// probabilities, f_j / j!). O(n min(D, n0 - D)) time. Equals scipy 1.10's
/// mstats_basic._kendall_p_exact(n, n0 - D). Underflows to 0 only when the tail is below
/// ~1e-308 (n > 170 with D = 0 or n0). Source: Kendall (1970) ch. 4.
/// Errors: InvalidArgument if n < 1, D is outside [0, n(n-1)/2], or n min(D, n0 - D) > 2e9
/// (about 2 s of work; the auto rule never gets there).
Result<double> kendall_exact_p_value(int64_t n, int64_t discordant);

/// Average ranks (1-based; ties get the mean of the ranks they span), as
/// scipy.stats.rankdata(method="average"). Values must not be NaN (unchecked).
std::vector<double> average_ranks(const std::vector<double>& v);

/// Largest n for which spearman enumerates every pairing (10! = 3,628,800 permutations).
inline constexpr int64_t kSpearmanExactMaxN = 10;

/// Spearman rho as the Pearson correlation of average ranks (no sum-d^2 shortcut, so
/// ties are handled exactly); t = rho sqrt((n-2) / ((1+rho)(1-rho))) (infinite at |rho| = 1).
/// p-value (two-sided):
///  * exact permutation p (kAuto when n <= kSpearmanExactMaxN, ties or not; kExact): every
///    one of the n! pairings of the y ranks with the x ranks is enumerated and
///    p = min(1, 2 min(P[rho* >= rho], P[rho* <= rho])), as scipy 1.10
///    permutation_test((x,), lambda x: spearmanr(x, y).statistic, permutation_type="pairings",
///    n_resamples=inf) (compared in exact integer arithmetic on doubled ranks);
///  * kAuto with n > kSpearmanExactMaxN: the t distribution with n-2 df (scipy 1.10
///    spearmanr), except |rho| = 1, where the t approximation says 0 and the exact
///    permutation p is used instead: 2 prod_g t_g! / n! over the tie groups g of y (2 / n!
///    without ties), which underflows to 0 only for n > 170;
///  * kAsymptotic: the t distribution always (p = 0 at |rho| = 1, as scipy spearmanr).
/// Source: Spearman (1904); scipy.stats.spearmanr, scipy.stats.permutation_test.
/// Errors: InvalidArgument if sizes differ, n < 3, a value is NaN, or kExact with
/// n > kSpearmanExactMaxN; Undefined if x or y is constant.
Result<Correlation> spearman(const std::vector<double>& x, const std::vector<double>& y,
                             RankPMethod method = RankPMethod::kAuto);

}  // namespace nf::stats
