// Agreement on a declared rating scale (issue 13 items 4 and 6): weighted Cohen kappa
// with weights by scale VALUE, and Fleiss' kappa / Gwet's AC1 over any number of raters
// with the category count taken from the declared scale, never from the labels that
// happened to occur. Layer 1: pure numerics.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "stats/agreement.h"
#include "util/status.h"

namespace nf::stats {

/// Disagreement weights of a weighted kappa.
enum class KappaWeights {
  kNone,       // d_ij = 1 if i != j (unweighted Cohen kappa)
  kLinear,     // d_ij = |v_i - v_j|
  kQuadratic,  // d_ij = (v_i - v_j)^2
};

/// Weighted Cohen kappa of two raters on a declared scale. a[i], b[i] are codes
/// 0..K-1 into `scale_values` (K = scale_values.size() >= 2, the values of the scale in
/// order, e.g. {1,2,3,4,5}; values nobody used still count); items where either code is
/// missing are dropped. With o_ij the observed and e_ij = o_i. o_.j the chance joint
/// proportions, kappa_w = 1 - sum d_ij o_ij / sum d_ij e_ij; observed = 1 - sum d o / max d,
/// expected = 1 - sum d e / max d (so kappa = (observed - expected) / (1 - expected)).
/// Weights follow the scale values, not the index of observed labels. Equals
/// statsmodels.stats.inter_rater.cohens_kappa(table, weights=scale_values, wt="linear" |
/// "quadratic") on the full K x K table (tests/reference/gen_issue13.py); kNone equals
/// cohen_kappa().
/// Errors: InvalidArgument if sizes differ, K < 2, scale values not finite or not
/// strictly increasing, or a code outside 0..K-1; Undefined if no item has both ratings
/// or sum d e == 0 (every rating at one scale value).
/// Source: Cohen (1968), Psychol. Bull. 70(4) (weighted kappa); Fleiss & Cohen (1973).
Result<Agreement> weighted_kappa(const std::vector<std::optional<int64_t>>& a,
                                 const std::vector<std::optional<int64_t>>& b,
                                 const std::vector<double>& scale_values, KappaWeights weights);

/// Fleiss' kappa of an items x raters table (any number of raters, missing allowed) on a
/// declared set of `n_categories` categories: codes must lie in 0..n_categories-1, and a
/// declared category nobody chose is part of the scale (it adds p_j = 0, so Fleiss'
/// kappa is unchanged by it; the count matters for Gwet's AC1 below). Same convention
/// and Undefined cases as fleiss_kappa_counts(). Errors: InvalidArgument if
/// n_categories < 1 or a code is outside the scale.
/// Source: Fleiss (1971); seed 004 §2.6.
Result<Agreement> fleiss_kappa_declared(const RatingTable& ratings, int64_t n_categories);

/// Gwet's AC1 of an items x raters table (any number of raters, missing allowed) on a
/// declared scale of q = n_categories categories. With r_ik the raters who put item i in
/// category k and r_i = sum_k r_ik: P_a = mean over items with r_i >= 2 of
/// sum_k r_ik (r_ik - 1) / (r_i (r_i - 1)); pi_k = mean over items with r_i >= 1 of
/// r_ik / r_i; P_e = sum_k pi_k (1 - pi_k) / (q - 1); AC1 = (P_a - P_e) / (1 - P_e).
/// For two raters without missing values this is gwet_ac1(a, b, q).
/// Errors: InvalidArgument if a code is outside 0..q-1; Undefined if q < 2 or no item
/// has >= 2 ratings.
/// Source: Gwet (2008), Br. J. Math. Stat. Psychol. 61(1); Gwet (2014), Handbook of
/// Inter-Rater Reliability, 4th ed., ch. 4 (multiple raters, missing ratings).
Result<Agreement> gwet_ac1_declared(const RatingTable& ratings, int64_t n_categories);

}  // namespace nf::stats
