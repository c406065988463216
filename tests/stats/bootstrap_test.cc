// Cluster bootstrap: numpy-linear quantiles (golden), resampling semantics, seeded
// reproducibility and independence from the thread count.
#include "common/golden.h"
#include "stats/bootstrap.h"
#include "stats/cluster_interval.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/rng.h"

namespace nf::stats {
namespace {

using testing::load_golden;

TEST(Bootstrap, QuantileMatchesNumpyLinear) {
  const auto g = load_golden("core_quantile.json");
  ASSERT_GE(g["rows"].size(), 200u);
  for (const auto& r : g["rows"]) {
    auto q = quantile_linear(r["values"].get<std::vector<double>>(), r["q"].get<double>());
    ASSERT_TRUE(q.ok());
    EXPECT_NEAR(*q, r["quantile"].get<double>(), 1e-9);
  }
  EXPECT_FALSE(quantile_linear({}, 0.5).ok());
  EXPECT_FALSE(quantile_linear({1.0}, 1.5).ok());
  EXPECT_FALSE(quantile_linear({1.0, std::nan("")}, 0.5).ok());
}

// quantile_linear and percentile_interval select order statistics (std::nth_element)
// instead of sorting: the results must equal the sorted-array definition exactly, with
// ties, tiny and unsorted inputs, and q at 0 and 1.
TEST(Bootstrap, QuantileBySelectionEqualsSortedDefinition) {
  auto sorted_quantile = [](std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    const double h = static_cast<double>(v.size() - 1) * q;
    const size_t lo = static_cast<size_t>(std::floor(h));
    if (lo + 1 >= v.size()) return v.back();
    return v[lo] + (h - static_cast<double>(lo)) * (v[lo + 1] - v[lo]);
  };
  Rng rng(77);
  for (size_t n : {1, 2, 3, 10, 101, 1000}) {
    for (int rep = 0; rep < 20; ++rep) {
      std::vector<double> v;
      for (size_t i = 0; i < n; ++i)
        v.push_back(rep % 2 == 0 ? static_cast<double>(rng.uniform_int(5)) : rng.uniform() - 0.5);  // ties / none
      for (double q : {0.0, 0.025, 0.1, 0.5, 0.9, 0.975, 1.0}) {
        auto got = quantile_linear(v, q);
        ASSERT_TRUE(got.ok());
        EXPECT_EQ(*got, sorted_quantile(v, q)) << "n " << n << " q " << q;
      }
      for (double level : {0.5, 0.9, 0.95, 0.999}) {
        auto iv = percentile_interval(v, level);
        ASSERT_TRUE(iv.ok());
        EXPECT_EQ(iv->low, sorted_quantile(v, (1 - level) / 2)) << "n " << n << " level " << level;
        EXPECT_EQ(iv->high, sorted_quantile(v, 1 - (1 - level) / 2)) << "n " << n << " level " << level;
      }
    }
  }
  EXPECT_FALSE(percentile_interval({}, 0.95).ok());
  EXPECT_FALSE(percentile_interval({1.0, std::nan("")}, 0.95).ok());
}

std::vector<double> random_clusters(std::vector<double>& den, uint64_t seed) {
  Rng rng(seed);
  std::vector<double> num;
  den.clear();
  for (int i = 0; i < 200; ++i) {
    const double d = static_cast<double>(1 + rng.uniform_int(20));
    double k = 0;
    for (int j = 0; j < static_cast<int>(d); ++j) k += rng.uniform() < 0.3 ? 1 : 0;
    num.push_back(k);
    den.push_back(d);
  }
  return num;
}

TEST(Bootstrap, RatioIsIdenticalForOneAndFourThreads) {
  std::vector<double> den;
  const std::vector<double> num = random_clusters(den, 11);
  auto one = cluster_bootstrap_ratio(num, den, 2000, 42, 0.95, 1);
  auto four = cluster_bootstrap_ratio(num, den, 2000, 42, 0.95, 4);
  ASSERT_TRUE(one.ok() && four.ok());
  EXPECT_EQ(one->low, four->low);
  EXPECT_EQ(one->high, four->high);
  EXPECT_LT(one->low, one->estimate);
  EXPECT_GT(one->high, one->estimate);
  auto other = cluster_bootstrap_ratio(num, den, 2000, 43, 0.95, 1);
  ASSERT_TRUE(other.ok());
  EXPECT_NE(one->low, other->low);  // a different seed gives different replicates
}

TEST(Bootstrap, GenericAndRatioFormsAgree) {
  std::vector<double> den;
  const std::vector<double> num = random_clusters(den, 5);
  auto ratio = cluster_bootstrap_ratio(num, den, 1000, 9);
  auto generic = cluster_bootstrap(
      num.size(), [&](const std::vector<size_t>& idx) { return ratio_of_sums(num, den, idx); }, 1000, 9, 0.95, 3);
  ASSERT_TRUE(ratio.ok() && generic.ok());
  EXPECT_DOUBLE_EQ(ratio->estimate, generic->estimate);
  EXPECT_DOUBLE_EQ(ratio->low, generic->low);
  EXPECT_DOUBLE_EQ(ratio->high, generic->high);
  EXPECT_EQ(generic->valid_replicates, 1000);
  EXPECT_EQ(generic->seed, 9u);
}

// Issue 33 (F4): the replicates form counts the dropped 0/0 resamples and equals the
// generic form draw for draw (same replicates, so the same count of NaN ones).
TEST(Bootstrap, RatioReplicatesCountTheZeroDenominatorResamples) {
  const std::vector<double> num = {1, 0, 3}, den = {10, 0, 10};
  auto ratio = cluster_bootstrap_ratio_replicates(num, den, 5000, 7);
  auto generic = cluster_bootstrap(
      3, [&](const std::vector<size_t>& idx) { return ratio_of_sums(num, den, idx); }, 5000, 7);
  ASSERT_TRUE(ratio.ok() && generic.ok());
  EXPECT_EQ(ratio->valid_replicates, generic->valid_replicates);
  EXPECT_EQ(ratio->replicates, generic->replicates);
  // P[a resample draws only cluster 1] = (1/3)^3 = 1/27: about 185 of 5000 (sd 13).
  const int dropped = ratio->resamples - ratio->valid_replicates;
  EXPECT_GT(dropped, 185 - 80);
  EXPECT_LT(dropped, 185 + 80);
  // 0/n in every cluster: every valid replicate is 0, a degenerate interval.
  auto zero = cluster_bootstrap_ratio_replicates({0, 0, 0}, {10, 10, 5}, 500, 1);
  ASSERT_TRUE(zero.ok());
  EXPECT_TRUE(all_equal(zero->replicates));
  EXPECT_EQ(zero->low, zero->high);
}

TEST(Bootstrap, InvalidReplicatesAreSkippedAndErrorsReported) {
  // Cluster 0 has denominator 0: resamples that draw only it are skipped.
  auto r = cluster_bootstrap(
      2, [](const std::vector<size_t>& idx) { return idx[0] == 0 && idx[1] == 0 ? std::nan("") : 1.0; }, 400, 1);
  ASSERT_TRUE(r.ok());
  EXPECT_LT(r->valid_replicates, 400);
  EXPECT_GT(r->valid_replicates, 200);
  EXPECT_FALSE(cluster_bootstrap_ratio({1, 2}, {1}, 10, 0).ok());
  EXPECT_FALSE(cluster_bootstrap_ratio({}, {}, 10, 0).ok());
  EXPECT_FALSE(cluster_bootstrap_ratio({0, 0}, {0, 0}, 10, 0).ok());
  EXPECT_FALSE(cluster_bootstrap_ratio({1}, {2}, 0, 0).ok());
  EXPECT_FALSE(cluster_bootstrap_ratio({1}, {2}, 10, 0, 1.5).ok());
  auto undefined = cluster_bootstrap(3, [](const std::vector<size_t>&) { return std::nan(""); }, 10, 0);
  ASSERT_FALSE(undefined.ok());
  EXPECT_EQ(undefined.status().code(), StatusCode::kUndefined);
}

}  // namespace
}  // namespace nf::stats
