// Slow tier: cluster-bootstrap percentile CI coverage of a pooled rate (ratio of sums)
// over simulated clusters of unequal size with cluster-level heterogeneity. 2,000
// simulations give a Monte Carlo SE of 0.0049, so the 1.5-point band is ~3 SE (flake rate
// ~0.3% if the true coverage were exactly 95%; the seed is fixed, so the run is pinned).
#include <gtest/gtest.h>

#include <cstdio>

#include <vector>

#include "stats/bootstrap.h"
#include "util/rng.h"

namespace nf::stats {
namespace {

TEST(BootstrapCoverageSlow, ClusterBootstrapCoversWithin1Point5Of95) {
  const int sims = 2000;
  const int clusters = 100;
  const double truth = 0.3;  // E[p_i] with p_i independent of size: pooled ratio -> 0.3
  Rng rng(77);
  int covered = 0;
  std::vector<double> num(clusters), den(clusters);
  for (int s = 0; s < sims; ++s) {
    for (int i = 0; i < clusters; ++i) {
      const int m = 5 + static_cast<int>(rng.uniform_int(11));
      const double p = 0.1 + 0.4 * rng.uniform();
      int k = 0;
      for (int j = 0; j < m; ++j) k += rng.uniform() < p ? 1 : 0;
      num[static_cast<size_t>(i)] = k;
      den[static_cast<size_t>(i)] = m;
    }
    auto ci = cluster_bootstrap_ratio(num, den, 1000, static_cast<uint64_t>(s), 0.95, 2);
    ASSERT_TRUE(ci.ok());
    if (ci->low <= truth && truth <= ci->high) ++covered;
  }
  const double coverage = static_cast<double>(covered) / sims;
  std::printf("cluster bootstrap coverage: %.4f\n", coverage);
  EXPECT_NEAR(coverage, 0.95, 0.015);
}

}  // namespace
}  // namespace nf::stats
