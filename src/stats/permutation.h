// Permutation tests: exact enumeration for small groups, Monte Carlo otherwise. Layer 1.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "util/status.h"

namespace nf::stats {

/// Statistic of one permutation `perm` of 0..k-1 (perm[i] = the element assigned to
/// position i, e.g. the subject judged by judge i). Larger = more extreme.
using PermutationStatistic = std::function<double(const std::vector<int>& perm)>;

/// Result of a one-sided (">=") permutation test.
struct PermutationResult {
  double observed = 0.0;  // statistic at the identity permutation
  double p_value = 1.0;
  int64_t at_least = 0;   // permutations (or draws) with statistic >= observed
  int64_t total = 0;      // permutations enumerated (k!) or Monte Carlo draws B
  bool exact = true;
};

/// Exact permutation test by enumerating all k! permutations of 0..k-1 in
/// lexicographic order (std::next_permutation), identity included (e.g. the 24
/// bijections of 4 judges to 4 subjects, seed 004 §2.6). observed = statistic(identity);
/// p = #{perm : statistic(perm) >= observed - 1e-12 max(1, |observed|)} / k!, so
/// p >= 1/k!. Source: Fisher (1935); seed 004 §2.6.
/// Errors: InvalidArgument if k < 2 or k > 10 (10! = 3,628,800 is the enumeration cap;
/// use permutation_test_monte_carlo above it); Undefined if observed is NaN.
Result<PermutationResult> permutation_test_exact(int k, const PermutationStatistic& statistic);

/// Monte Carlo permutation test: `resamples` uniform random permutations (Fisher-Yates,
/// draw r from Rng::stream(seed, {r})); p = (at_least + 1) / (B + 1), never 0 (Phipson &
/// Smyth 2010). Same tie tolerance as the exact test.
/// Errors: InvalidArgument if k < 2 or resamples < 1; Undefined if observed is NaN.
Result<PermutationResult> permutation_test_monte_carlo(int k, const PermutationStatistic& statistic, int resamples,
                                                       uint64_t seed);

}  // namespace nf::stats
