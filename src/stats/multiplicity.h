// Multiple-testing adjustments: Benjamini-Hochberg and Holm. Layer 1.
#pragma once

#include <vector>

#include "util/status.h"

namespace nf::stats {

/// Benjamini-Hochberg (1995) step-up adjusted p-values (FDR), in input order: with the
/// m non-NaN p-values sorted ascending, q_(i) = min_{j >= i} min(1, m p_(j) / j). A NaN
/// input stays NaN in its position and does not count in m, so it neither poisons nor
/// inflates the others: [0.01, 0.04, NaN, 0.03, 0.2] -> [0.04, 0.0533, NaN, 0.0533, 0.2].
/// Matches statsmodels multipletests(method="fdr_bh") on the non-NaN subset.
/// Source: Benjamini & Hochberg (1995); seed 000 §III.B (BH across contrasts).
/// Errors: InvalidArgument if a p-value is outside [0, 1] (NaN allowed).
Result<std::vector<double>> benjamini_hochberg(const std::vector<double>& p);

/// Holm (1979) step-down adjusted p-values (FWER), in input order: with the m non-NaN
/// p-values sorted ascending, q_(i) = max_{j <= i} min(1, (m - j + 1) p_(j)). NaN stays
/// NaN and is not counted in m. Matches statsmodels multipletests(method="holm").
/// Errors: InvalidArgument if a p-value is outside [0, 1] (NaN allowed).
Result<std::vector<double>> holm(const std::vector<double>& p);

}  // namespace nf::stats
