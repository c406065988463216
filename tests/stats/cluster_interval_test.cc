// Studentized cluster bootstrap and degenerate intervals (stats/cluster_interval.h).
#include "stats/cluster_interval.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "common/golden.h"
#include "stats/bootstrap.h"
#include "util/rng.h"

namespace nf::stats {
namespace {

using testing::load_golden;

TEST(ClusterInterval, LinearizedSeMatchesStatsmodelsClusterRobustSe) {
  const auto g = load_golden("stats_cluster_interval.json");
  ASSERT_GE(g["ratio_se"].size(), 20u);
  for (const auto& r : g["ratio_se"]) {
    const auto num = r["num"].get<std::vector<double>>(), den = r["den"].get<std::vector<double>>();
    std::vector<size_t> idx(num.size());
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    EXPECT_NEAR(ratio_of_sums(num, den, idx), r["estimate"].get<double>(), 1e-12);
    EXPECT_NEAR(ratio_linearized_se(num, den, idx), r["se"].get<double>(), 1e-10) << r.dump();
  }
}

TEST(ClusterInterval, LinearizedSeWorkedExample) {
  // Clusters 1/2 and 3/4: R = 2/3, se = sqrt(2 ((1 - 4/3)^2 + (3 - 8/3)^2)) / 6 = 1/9.
  EXPECT_NEAR(ratio_linearized_se({1, 3}, {2, 4}, {0, 1}), 1.0 / 9.0, 1e-12);
  EXPECT_EQ(ratio_linearized_se({1, 3}, {2, 4}, {0}), 0.0);  // one cluster: no spread
  EXPECT_TRUE(std::isnan(ratio_linearized_se({0, 0}, {0, 0}, {0, 1})));
}

TEST(ClusterInterval, StudentizedIntervalMatchesNumpyQuantiles) {
  const auto g = load_golden("stats_cluster_interval.json");
  for (const auto& r : g["studentized"]) {
    auto iv = studentized_interval(r["estimate"].get<double>(), r["se"].get<double>(),
                                   r["t"].get<std::vector<double>>(), r["level"].get<double>());
    ASSERT_TRUE(iv.ok());
    EXPECT_NEAR(iv->low, r["low"].get<double>(), 1e-12);
    EXPECT_NEAR(iv->high, r["high"].get<double>(), 1e-12);
  }
  EXPECT_FALSE(studentized_interval(0.1, 0.1, {}, 0.95).ok());
  EXPECT_FALSE(studentized_interval(0.1, -1.0, {0.0}, 0.95).ok());
  EXPECT_FALSE(studentized_interval(0.1, 0.1, {std::nan("")}, 0.95).ok());
  // An infinite pivot in the upper tail leaves the lower side unbounded.
  const double inf = std::numeric_limits<double>::infinity();
  auto open = studentized_interval(0.2, 0.1, {-1.0, 0.0, inf, inf}, 0.95);
  ASSERT_TRUE(open.ok());
  EXPECT_EQ(open->low, -inf);
}

// studentized_interval selects its two pivot quantiles (std::nth_element) instead of
// sorting: the bounds must equal the sorted-array definition exactly, infinite pivots
// and ties included.
TEST(ClusterInterval, StudentizedQuantilesBySelectionEqualSortedDefinition) {
  const double inf = std::numeric_limits<double>::infinity();
  auto reference = [&](double est, double se, std::vector<double> t, double level) {
    std::sort(t.begin(), t.end());
    auto q = [&](double p) {
      const double h = static_cast<double>(t.size() - 1) * p;
      const size_t lo = static_cast<size_t>(std::floor(h));
      if (lo + 1 >= t.size()) return t.back();
      const double frac = h - static_cast<double>(lo), a = t[lo], b = t[lo + 1];
      if (std::isinf(a) || std::isinf(b)) return frac == 0.0 ? a : (std::isinf(b) ? b : a);
      return a + frac * (b - a);
    };
    const double t_lo = q((1 - level) / 2), t_hi = q(1 - (1 - level) / 2);
    return std::pair<double, double>{std::isinf(t_hi) ? (t_hi > 0 ? -inf : inf) : est - t_hi * se,
                                     std::isinf(t_lo) ? (t_lo < 0 ? inf : -inf) : est - t_lo * se};
  };
  Rng rng(5);
  for (size_t n : {1, 2, 5, 40, 999}) {
    for (int rep = 0; rep < 12; ++rep) {
      std::vector<double> t;
      for (size_t i = 0; i < n; ++i) {
        const uint64_t u = rng.uniform_int(20);
        t.push_back(rep % 3 == 0 && u == 0 ? inf : rep % 3 == 1 && u == 1 ? -inf
                    : rep % 2 == 0           ? static_cast<double>(rng.uniform_int(4)) - 2.0
                                             : 3.0 * (rng.uniform() - 0.5));
      }
      for (double level : {0.5, 0.9, 0.95}) {
        auto iv = studentized_interval(0.3, 0.05, t, level);
        ASSERT_TRUE(iv.ok());
        const auto [low, high] = reference(0.3, 0.05, t, level);
        EXPECT_EQ(iv->low, low) << "n " << n << " rep " << rep << " level " << level;
        EXPECT_EQ(iv->high, high) << "n " << n << " rep " << rep << " level " << level;
      }
    }
  }
}

TEST(ClusterInterval, PercentileSideEqualsClusterBootstrapRatio) {
  Rng rng(3);
  std::vector<double> num, den;
  for (int i = 0; i < 16; ++i) {
    den.push_back(static_cast<double>(5 + rng.uniform_int(11)));
    num.push_back(std::floor(den.back() * rng.uniform() * 0.5));
  }
  auto a = cluster_ratio_interval(num, den, 500, 11, 0.95);
  auto b = cluster_bootstrap_ratio(num, den, 500, 11, 0.95);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->percentile_low, b->low);
  EXPECT_EQ(a->percentile_high, b->high);
  EXPECT_EQ(a->clusters, 16);
  EXPECT_FALSE(a->degenerate);
  EXPECT_EQ(a->method, "studentized cluster bootstrap");
  // Wider than the percentile interval with 16 clusters (it corrects the narrowness).
  EXPECT_GT(a->high - a->low, a->percentile_high - a->percentile_low);
  EXPECT_LE(a->low, a->estimate);
  EXPECT_GE(a->high, a->estimate);
  // Thread count changes nothing.
  auto c = cluster_ratio_interval(num, den, 500, 11, 0.95, 2);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(a->low, c->low);
  EXPECT_EQ(a->high, c->high);
}

TEST(ClusterInterval, ZeroOfNIsDegenerate) {
  // 16 items x 10 pairs, none discordant: every resample is 0/160.
  auto r = cluster_ratio_interval(std::vector<double>(16, 0.0), std::vector<double>(16, 10.0), 200, 1);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->degenerate);
  EXPECT_EQ(r->low, 0.0);
  EXPECT_EQ(r->high, 0.0);
  EXPECT_EQ(r->method, "degenerate (all resamples equal)");
  auto all = cluster_ratio_interval(std::vector<double>(4, 3.0), std::vector<double>(4, 3.0), 200, 1);
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE(all->degenerate);
  EXPECT_EQ(all->estimate, 1.0);
}

TEST(ClusterInterval, BadInput) {
  EXPECT_FALSE(cluster_ratio_interval({1}, {1, 2}, 10, 1).ok());
  EXPECT_FALSE(cluster_ratio_interval({}, {}, 10, 1).ok());
  EXPECT_FALSE(cluster_ratio_interval({0}, {0}, 10, 1).ok());
  EXPECT_FALSE(cluster_ratio_interval({1}, {2}, 0, 1).ok());
  EXPECT_FALSE(cluster_ratio_interval({1}, {2}, 10, 1, 1.5).ok());
}

TEST(ClusterInterval, AllEqual) {
  EXPECT_FALSE(all_equal({}));
  EXPECT_TRUE(all_equal({0.5, 0.5}));
  EXPECT_FALSE(all_equal({0.5, 0.6}));
}

}  // namespace
}  // namespace nf::stats
