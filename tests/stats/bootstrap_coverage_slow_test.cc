// Slow tier: coverage of the cluster-bootstrap intervals of a pooled rate (ratio of sums)
// over simulated clusters of unequal size (5-15) with cluster-level heterogeneity (rates
// U(0.1, 0.5)), 1,000 resamples, 2,000 simulations per cluster count. 2,000 simulations
// give a Monte Carlo SE of 0.0049, so the 1.5-point band is ~3 SE (the seed is fixed, so
// the run is pinned). The percentile interval under-covers with few clusters (issue 12:
// 86% at 6, 92% at 16); the studentized interval (stats/cluster_interval.h) is the one the
// floors report and must hold 95% within 1.5 points at 16 and 33 clusters (and 100).
// With 6 clusters it is reported and held to a looser 2.5 points.
#include <gtest/gtest.h>

#include <cstdio>
#include <vector>

#include "stats/bootstrap.h"
#include "stats/cluster_interval.h"
#include "util/rng.h"

namespace nf::stats {
namespace {

struct Coverage {
  double percentile = 0.0, studentized = 0.0;
};

// sparse: a cluster has a rate U(0.1, 0.5) with probability 0.2 and 0 otherwise (a rare
// action such as escalate_icu: most items unanimous), truth 0.2 x 0.3 = 0.06.
Coverage simulate(int clusters, uint64_t seed, bool sparse = false) {
  const int sims = 2000;
  const double truth = sparse ? 0.06 : 0.3;  // E[p_i] with p_i independent of size: pooled ratio
  Rng rng(seed);
  int pct = 0, stud = 0;
  std::vector<double> num(static_cast<size_t>(clusters)), den(static_cast<size_t>(clusters));
  for (int s = 0; s < sims; ++s) {
    for (int i = 0; i < clusters; ++i) {
      const int m = 5 + static_cast<int>(rng.uniform_int(11));
      double p = 0.1 + 0.4 * rng.uniform();
      if (sparse && rng.uniform() >= 0.2) p = 0.0;
      int k = 0;
      for (int j = 0; j < m; ++j) k += rng.uniform() < p ? 1 : 0;
      num[static_cast<size_t>(i)] = k;
      den[static_cast<size_t>(i)] = m;
    }
    auto ci = cluster_ratio_interval(num, den, 1000, static_cast<uint64_t>(s), 0.95, 2);
    EXPECT_TRUE(ci.ok());
    if (!ci.ok()) continue;
    if (ci->percentile_low <= truth && truth <= ci->percentile_high) ++pct;
    if (ci->low <= truth && truth <= ci->high) ++stud;
  }
  Coverage c{static_cast<double>(pct) / sims, static_cast<double>(stud) / sims};
  std::printf("%s clusters %3d: percentile coverage %.4f, studentized coverage %.4f\n", sparse ? "sparse" : "dense ",
              clusters, c.percentile, c.studentized);
  return c;
}

TEST(BootstrapCoverageSlow, StudentizedCoversWithin1Point5Of95At100Clusters) {
  const Coverage c = simulate(100, 77);
  EXPECT_NEAR(c.studentized, 0.95, 0.015);
  EXPECT_NEAR(c.percentile, 0.95, 0.015);  // the percentile interval is fine with many clusters
}

TEST(BootstrapCoverageSlow, StudentizedCoversWithin1Point5Of95At33Clusters) {
  EXPECT_NEAR(simulate(33, 33).studentized, 0.95, 0.015);
}

TEST(BootstrapCoverageSlow, StudentizedCoversWithin1Point5Of95At16Clusters) {
  const Coverage c = simulate(16, 16);
  EXPECT_NEAR(c.studentized, 0.95, 0.015);
  EXPECT_LT(c.percentile, 0.935);  // the under-coverage the studentized interval fixes
}

TEST(BootstrapCoverageSlow, StudentizedAt6ClustersWithin2Point5) {
  const Coverage c = simulate(6, 6);
  EXPECT_NEAR(c.studentized, 0.95, 0.025);
  EXPECT_LT(c.percentile, 0.9);
}

// Not part of the design: a sparse outcome. The percentile interval covers ~84% at
// 16 clusters; the studentized one (with its se floor) does clearly better but not 95%:
// with ~3 non-unanimous clusters nothing can. Reported, held to >= 90%.
TEST(BootstrapCoverageSlow, SparseOutcomeAt16ClustersBeatsPercentile) {
  const Coverage c = simulate(16, 160, true);
  EXPECT_GE(c.studentized, 0.90);
  EXPECT_GT(c.studentized, c.percentile + 0.03);
}

}  // namespace
}  // namespace nf::stats
