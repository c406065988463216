// Rank correlation: Kendall tau-b and Spearman rho. Layer 1.
#pragma once

#include <cstdint>
#include <vector>

#include "util/status.h"

namespace nf::stats {

/// A correlation coefficient with its test statistic and two-sided p-value.
struct Correlation {
  double estimate = 0.0;   // tau-b or rho, in [-1, 1]
  double statistic = 0.0;  // z (Kendall) or t (Spearman)
  double p_value = 1.0;    // two-sided
  int64_t n = 0;
};

/// Kendall tau-b with ties: (C - D) / sqrt((n0 - n1)(n0 - n2)), n0 = n(n-1)/2, n1/n2 the
/// tied pairs in x/y. p-value: the tie-corrected normal approximation exactly as scipy
/// 1.10 kendalltau(method="asymptotic"): var(C - D) = (n(n-1)(2n+5) - sum_x t(t-1)(2t+5)
/// - sum_y u(u-1)(2u+5)) / 18 + 2 n1 n2 / (n(n-1)) + sum_x t(t-1)(t-2) sum_y u(u-1)(u-2)
/// / (9 n(n-1)(n-2)); z = (C - D) / sqrt(var); p = 2 P[Z >= |z|]. O(n^2) pair count.
/// Source: Kendall (1945); scipy.stats.kendalltau; seed 003 §4 (mean Kendall tau).
/// Errors: InvalidArgument if sizes differ, n < 3 or a value is NaN; Undefined if x or y
/// is constant (tau-b has a zero denominator).
Result<Correlation> kendall_tau_b(const std::vector<double>& x, const std::vector<double>& y);

/// Average ranks (1-based; ties get the mean of the ranks they span), as
/// scipy.stats.rankdata(method="average"). Values must not be NaN (unchecked).
std::vector<double> average_ranks(const std::vector<double>& v);

/// Spearman rho as the Pearson correlation of average ranks (no sum-d^2 shortcut, so
/// ties are handled exactly); t = rho sqrt((n-2) / ((1+rho)(1-rho))), p = 2 P[T_{n-2} >= |t|]
/// (p = 0 when |rho| = 1), as scipy 1.10 spearmanr. Source: Spearman (1904).
/// Errors: InvalidArgument if sizes differ, n < 3 or a value is NaN; Undefined if x or y
/// is constant.
Result<Correlation> spearman(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace nf::stats
