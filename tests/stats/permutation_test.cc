// Permutation tests: exact enumeration (24 bijections, seed 004 §2.6) and Monte Carlo.
#include "stats/permutation.h"

#include <gtest/gtest.h>

#include <vector>

namespace nf::stats {
namespace {

// A 4x4 judge-by-subject score matrix; statistic = sum of the matched cells.
const double kScores[4][4] = {{5, 1, 1, 1}, {1, 4, 2, 1}, {0, 1, 3, 1}, {1, 1, 1, 2}};

double matched(const std::vector<int>& perm) {
  double s = 0;
  for (size_t i = 0; i < perm.size(); ++i) s += kScores[i][perm[i]];
  return s;
}

TEST(Permutation, ExactEnumeratesAll24Bijections) {
  auto r = permutation_test_exact(4, matched);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->total, 24);
  EXPECT_EQ(r->observed, 14.0);
  // Count by brute force independent of the implementation's loop.
  int ge = 0;
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 4; ++b)
      for (int c = 0; c < 4; ++c)
        for (int d = 0; d < 4; ++d) {
          if (a == b || a == c || a == d || b == c || b == d || c == d) continue;
          if (matched({a, b, c, d}) >= 14.0) ++ge;
        }
  EXPECT_EQ(r->at_least, ge);
  EXPECT_DOUBLE_EQ(r->p_value, ge / 24.0);
  EXPECT_GE(r->p_value, 1.0 / 24.0);
  EXPECT_TRUE(r->exact);
}

TEST(Permutation, ConstantStatisticGivesOne) {
  auto r = permutation_test_exact(5, [](const std::vector<int>&) { return 1.0; });
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->total, 120);
  EXPECT_EQ(r->p_value, 1.0);
}

TEST(Permutation, MonteCarloNeverZeroAndReproducible) {
  // Identity is the unique maximiser of a strongly diagonal statistic on 8 elements.
  auto stat = [](const std::vector<int>& p) {
    double s = 0;
    for (size_t i = 0; i < p.size(); ++i) s += p[i] == static_cast<int>(i) ? 1 : 0;
    return s;
  };
  auto r = permutation_test_monte_carlo(8, stat, 999, 7);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->exact);
  EXPECT_EQ(r->total, 999);
  EXPECT_EQ(r->at_least, 0);
  EXPECT_DOUBLE_EQ(r->p_value, 1.0 / 1000.0);
  auto again = permutation_test_monte_carlo(8, stat, 999, 7);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->p_value, r->p_value);
  // Monte Carlo approaches the exact p on the 4x4 example.
  auto mc = permutation_test_monte_carlo(4, matched, 20000, 1);
  auto ex = permutation_test_exact(4, matched);
  ASSERT_TRUE(mc.ok() && ex.ok());
  EXPECT_NEAR(mc->p_value, ex->p_value, 0.01);
}

TEST(Permutation, RejectsBadGroupSizes) {
  EXPECT_FALSE(permutation_test_exact(1, matched).ok());
  EXPECT_FALSE(permutation_test_exact(11, matched).ok());
  EXPECT_FALSE(permutation_test_monte_carlo(1, matched, 10, 0).ok());
  EXPECT_FALSE(permutation_test_monte_carlo(4, matched, 0, 0).ok());
}

}  // namespace
}  // namespace nf::stats
