#include "stats/permutation.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <utility>

#include "util/rng.h"

namespace nf::stats {

namespace {

bool at_least(double value, double observed) {
  return value >= observed - 1e-12 * std::max(1.0, std::fabs(observed));
}

}  // namespace

Result<PermutationResult> permutation_test_exact(int k, const PermutationStatistic& statistic) {
  if (k < 2 || k > 10) {
    return InvalidArgument("permutation_test_exact: group size must be in [2, 10], got " + std::to_string(k));
  }
  std::vector<int> perm(static_cast<size_t>(k));
  std::iota(perm.begin(), perm.end(), 0);
  PermutationResult out;
  out.observed = statistic(perm);
  if (std::isnan(out.observed)) return Undefined("permutation_test_exact: the observed statistic is NaN");
  do {
    ++out.total;
    if (at_least(statistic(perm), out.observed)) ++out.at_least;
  } while (std::next_permutation(perm.begin(), perm.end()));
  out.p_value = static_cast<double>(out.at_least) / static_cast<double>(out.total);
  return out;
}

Result<PermutationResult> permutation_test_monte_carlo(int k, const PermutationStatistic& statistic, int resamples,
                                                       uint64_t seed) {
  if (k < 2) return InvalidArgument("permutation_test_monte_carlo: group size must be >= 2, got " + std::to_string(k));
  if (resamples < 1) return InvalidArgument("permutation_test_monte_carlo: resamples must be >= 1");
  std::vector<int> perm(static_cast<size_t>(k));
  std::iota(perm.begin(), perm.end(), 0);
  PermutationResult out;
  out.exact = false;
  out.observed = statistic(perm);
  if (std::isnan(out.observed)) return Undefined("permutation_test_monte_carlo: the observed statistic is NaN");
  for (int r = 0; r < resamples; ++r) {
    Rng rng = Rng::stream(seed, {static_cast<uint64_t>(r)});
    std::iota(perm.begin(), perm.end(), 0);
    for (size_t i = perm.size() - 1; i > 0; --i) {
      std::swap(perm[i], perm[static_cast<size_t>(rng.uniform_int(i + 1))]);
    }
    if (at_least(statistic(perm), out.observed)) ++out.at_least;
  }
  out.total = resamples;
  out.p_value = static_cast<double>(out.at_least + 1) / static_cast<double>(resamples + 1);
  return out;
}

}  // namespace nf::stats
