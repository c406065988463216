// Inter-rater agreement: Fleiss kappa, Cohen kappa, Scott's pi, Gwet AC1, raw agreement,
// Krippendorff alpha (nominal). Layer 1: pure numerics, no I/O.
//
// Categories are integer codes 0..K-1 (callers map labels to codes). A missing rating is
// std::nullopt. Every function returns Undefined (never NaN) when the statistic is
// mathematically undefined, e.g. when chance agreement is 1 because every rating falls in
// one category.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <optional>
#include <vector>

#include "util/status.h"

namespace nf::stats {

/// One agreement statistic and its ingredients.
///  estimate  the chance-corrected coefficient (kappa, pi, AC1, alpha) or, for
///            raw_agreement(), the observed agreement itself;
///  observed  observed agreement P_o (for Krippendorff: 1 - D_o);
///  expected  chance agreement P_e (for Krippendorff: 1 - D_e);
///  units     items (or rater pairs' shared items) that entered the computation;
///  ratings   ratings that entered the computation;
///  categories number of categories K used for chance agreement.
struct Agreement {
  double estimate = 0.0;
  double observed = 0.0;
  double expected = 0.0;
  int64_t units = 0;
  int64_t ratings = 0;
  int64_t categories = 0;
};

/// Items x raters table of category codes; std::nullopt = missing rating. Rows may be
/// ragged (a short row means the remaining raters are missing).
using RatingTable = std::vector<std::vector<std::optional<int64_t>>>;

/// Fleiss' kappa from a row-major items x categories count table: counts[i*K + j] is the
/// number of raters who put item i in category j (n_categories = K >= 1).
/// Convention for items with different numbers of raters n_i (Fleiss 1971 assumes equal
/// n): per-item agreement P_i = sum_j n_ij (n_ij - 1) / (n_i (n_i - 1)); items with
/// n_i < 2 are excluded; P_bar = mean of P_i over the included items; p_j = share of
/// category j among all ratings of the included items; P_e = sum_j p_j^2;
/// kappa = (P_bar - P_e) / (1 - P_e). With equal n_i this is exactly Fleiss (1971) and
/// statsmodels.stats.inter_rater.fleiss_kappa(method="fleiss"); statsmodels requires equal
/// n_i, so the unequal case is checked against the documented numpy reference in
/// tests/reference/gen_models.py. For two raters per item it equals Scott's pi.
/// Errors: InvalidArgument if n_categories < 1, counts.size() not a multiple of it, or a
/// count < 0; Undefined if no item has >= 2 ratings, or P_e == 1 (every rating in one
/// category).
/// Source: Fleiss (1971), Psychol. Bull. 76(5); seed 004 §2.6, §3.3 (kappa 0.649).
Result<Agreement> fleiss_kappa_counts(const std::vector<int64_t>& counts, int64_t n_categories);

/// Fleiss' kappa from an items x raters table of codes (converted to counts; the number
/// of categories is max code + 1). Same convention and errors as fleiss_kappa_counts(),
/// plus InvalidArgument for a negative code.
Result<Agreement> fleiss_kappa(const RatingTable& ratings);

/// Cohen's kappa for two raters: a[i], b[i] are the two codes of item i; items where
/// either is missing are dropped. P_o = share of equal codes; P_e = sum_k p_ak p_bk with
/// each rater's own marginals. K = the number of categories either rater used.
/// Errors: InvalidArgument if sizes differ or a code is negative; Undefined if no item
/// has both ratings or P_e == 1.
/// Source: Cohen (1960), Educ. Psychol. Meas. 20; seed 004 §3.4 Table 7.
Result<Agreement> cohen_kappa(const std::vector<std::optional<int64_t>>& a,
                              const std::vector<std::optional<int64_t>>& b);

/// Scott's pi for two raters: as cohen_kappa() but P_e = sum_k pi_k^2 with pooled
/// marginals pi_k = (p_ak + p_bk) / 2. Equals fleiss_kappa() on the same two columns
/// (the identity tested in agreement_test.cc). Same errors as cohen_kappa().
/// Source: Scott (1955), Public Opinion Quarterly 19(3).
Result<Agreement> scott_pi(const std::vector<std::optional<int64_t>>& a,
                           const std::vector<std::optional<int64_t>>& b);

/// Gwet's AC1 for two raters and K categories: P_e = sum_k pi_k (1 - pi_k) / (K - 1),
/// pi_k = (p_ak + p_bk) / 2, AC1 = (P_o - P_e) / (1 - P_e). `n_categories` is K, the size
/// of the rating scale (default 0 = max(2, largest code seen + 1), i.e. codes are taken to
/// be 0..K-1 of a scale with at least two categories).
/// Errors: InvalidArgument as cohen_kappa() or if a code >= n_categories; Undefined if no
/// item has both ratings or K < 2.
/// Source: Gwet (2008), Br. J. Math. Stat. Psychol. 61(1), eq. for AC1; seed 004 §3.4.
Result<Agreement> gwet_ac1(const std::vector<std::optional<int64_t>>& a,
                           const std::vector<std::optional<int64_t>>& b, int64_t n_categories = 0);

/// Raw (observed) agreement of two raters: share of items rated by both with equal codes;
/// estimate == observed, expected = 0. Errors: as cohen_kappa() (Undefined if no item
/// has both ratings).
Result<Agreement> raw_agreement(const std::vector<std::optional<int64_t>>& a,
                                const std::vector<std::optional<int64_t>>& b);

/// Krippendorff's alpha, nominal metric, from an items x raters table with missing
/// values. Coincidence matrix o_ck = sum over units with m_u >= 2 pairable values of
/// (ordered pairs of values c,k from different raters) / (m_u - 1); n_c = sum_k o_ck,
/// n = sum_c n_c; alpha = 1 - (n - 1) sum_{c != k} o_ck / sum_{c != k} n_c n_k.
/// Units with fewer than 2 values are not pairable and are dropped.
/// Errors: InvalidArgument for a negative code; Undefined if fewer than 2 pairable
/// values or only one category occurs (D_e = 0).
/// Source: Krippendorff (2011), "Computing Krippendorff's alpha-reliability", §A.
Result<Agreement> krippendorff_alpha_nominal(const RatingTable& ratings);

/// A statistic of a rating table (e.g. fleiss_kappa, or a lambda calling cohen_kappa on
/// two columns), for agreement_bootstrap().
using AgreementFn = std::function<Result<Agreement>(const RatingTable&)>;

/// A percentile bootstrap interval of an agreement statistic.
struct AgreementInterval {
  double estimate = 0.0;
  double low = 0.0;
  double high = 0.0;
  int resamples = 0;      // replicates requested
  int undefined = 0;      // replicates where the statistic was Undefined (skipped)
  uint64_t seed = 0;
};

/// Cluster-bootstrap percentile CI of `stat` over the rows of `ratings`: clusters
/// (clusters[i] labels row i; empty = every row its own cluster) are resampled with
/// replacement, a cluster drawn twice counts twice. Replicate r uses Rng::stream(seed,
/// {r}), so the result does not depend on scheduling. Replicates where `stat` is Undefined
/// are skipped and counted; quantiles use linear interpolation (numpy's default).
/// Default level 0.95. Errors: InvalidArgument if clusters has the wrong size, resamples
/// < 1 or level outside (0, 1); the error of `stat` on the full table; Undefined if every
/// replicate is undefined.
/// Source: Efron & Tibshirani (1993) ch. 13; seed 004 §2.6 (prompt-clustered CIs of kappa
/// and AC1).
Result<AgreementInterval> agreement_bootstrap(const RatingTable& ratings, const AgreementFn& stat, int resamples,
                                              uint64_t seed, double level = 0.95,
                                              const std::vector<std::string>& clusters = {});

/// The agreement_bootstrap() interval of fleiss_kappa_counts() from the counts layout: a
/// row-major items x categories table (counts[i*K + j] raters put item i in category j), the
/// items (or, with `clusters`, one label per item, whole clusters) resampled with
/// replacement. Fleiss' kappa depends on each item only through its count row, so this is
/// the same bootstrap as agreement_bootstrap(ratings, fleiss_kappa, ...) on any ratings table
/// with those counts in the same item order: replicate r draws the same items from
/// Rng::stream(seed, {r}) and the interval is identical (tested). Default level 0.95.
/// Errors: those of fleiss_kappa_counts() on the full table; InvalidArgument as
/// agreement_bootstrap(); Undefined if every replicate is undefined (e.g. every rating in
/// one category).
/// Source: Efron & Tibshirani (1993) ch. 13; Fleiss (1971).
Result<AgreementInterval> fleiss_kappa_counts_bootstrap(const std::vector<int64_t>& counts, int64_t n_categories,
                                                        int resamples, uint64_t seed, double level = 0.95,
                                                        const std::vector<std::string>& clusters = {});

}  // namespace nf::stats
