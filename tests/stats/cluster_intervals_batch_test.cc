// cluster_ratio_intervals (stats/cluster_interval.h, issue 14): several ratios resampled with
// one set of cluster draws must give, ratio by ratio, exactly what cluster_ratio_interval gives.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "stats/cluster_interval.h"
#include "util/rng.h"

namespace nf::stats {
namespace {

void expect_same(const ClusterRatioInterval& a, const ClusterRatioInterval& b) {
  EXPECT_EQ(a.estimate, b.estimate);
  EXPECT_EQ(a.low, b.low);
  EXPECT_EQ(a.high, b.high);
  EXPECT_EQ(a.percentile_low, b.percentile_low);
  EXPECT_EQ(a.percentile_high, b.percentile_high);
  EXPECT_EQ(a.se, b.se);
  EXPECT_EQ(a.clusters, b.clusters);
  EXPECT_EQ(a.valid_replicates, b.valid_replicates);
  EXPECT_EQ(a.degenerate, b.degenerate);
  EXPECT_EQ(a.method, b.method);
}

TEST(ClusterIntervals, EachRatioEqualsItsOwnInterval) {
  // 3, 5, 12 and 18 ratios: blocks of width 4, 8, 12 and two of 16 (padded).
  for (auto [g, ratios] : {std::pair<size_t, int>{1, 5}, {2, 3}, {7, 12}, {40, 5}, {40, 18}}) {
    Rng rng(g);
    std::vector<std::vector<double>> nums, dens;
    for (int k = 0; k < ratios; ++k) {
      std::vector<double> num, den;
      for (size_t i = 0; i < g; ++i) {
        // Ratio 3 has empty clusters (den 0), ratio 4 is unanimous (degenerate).
        den.push_back(k == 3 && i % 3 == 0 ? 0.0 : static_cast<double>(1 + rng.uniform_int(45)));
        num.push_back(k == 4 ? 0.0 : std::floor(den.back() * rng.uniform() * 0.7));
      }
      if (k == 3) den[g - 1] = 9;  // at least one non-empty cluster
      nums.push_back(num);
      dens.push_back(den);
    }
    for (int threads : {1, 3}) {
      auto batch = cluster_ratio_intervals(nums, dens, 700, 5, 0.9, threads);
      ASSERT_TRUE(batch.ok()) << batch.status().message();
      ASSERT_EQ(batch->size(), nums.size());
      for (size_t k = 0; k < nums.size(); ++k) {
        auto one = cluster_ratio_interval(nums[k], dens[k], 700, 5, 0.9);
        ASSERT_EQ(one.ok(), true) << one.status().message();
        SCOPED_TRACE(testing::Message() << "G=" << g << " ratio " << k << " threads " << threads);
        expect_same((*batch)[k], *one);
      }
    }
  }
}

// The portable, AVX2 and AVX-512 resampling kernels (ResampleKernel; each where the CPU has
// it) must give bit-identical intervals, for every block width (4..32, one to three blocks)
// and any thread count; all equal the one-ratio path.
TEST(ClusterIntervals, KernelsAndThreadCountsGiveIdenticalIntervals) {
  struct Restore {
    ~Restore() { set_resample_kernel(ResampleKernel::kAuto); }
  } restore;
  std::vector<ResampleKernel> kernels{ResampleKernel::kPortable};
  if (set_resample_kernel(ResampleKernel::kAvx2)) kernels.push_back(ResampleKernel::kAvx2);
  if (set_resample_kernel(ResampleKernel::kAvx512)) kernels.push_back(ResampleKernel::kAvx512);
  ASSERT_TRUE(set_resample_kernel(ResampleKernel::kAuto));
  // Widths 4, 8, 12, 16 and two blocks; non-integer sums, so any reordering of an addition
  // would show in the last bits.
  // Integer sums go through the int32 layout, the others through doubles. Large integers
  // (up to 2^30) leave the AVX-512 kernel's int32 sums room for only two clusters at a time:
  // many runs, each added to the double sums.
  for (int mode : {0, 1, 2})
  for (auto [g, ratios] : {std::pair<size_t, int>{3, 2}, {57, 7}, {57, 11}, {120, 16}, {33, 22}, {20, 30}, {9, 70}}) {
    const bool integers = mode > 0;
    Rng rng(100 + g + 1000 * static_cast<uint64_t>(mode));
    std::vector<std::vector<double>> nums, dens;
    for (int k = 0; k < ratios; ++k) {
      std::vector<double> num, den;
      for (size_t i = 0; i < g; ++i) {
        den.push_back(mode == 2   ? static_cast<double>(rng.uniform_int(uint64_t{1} << 30))
                      : integers ? static_cast<double>(rng.uniform_int(3000))
                                 : 0.1 + 45.0 * rng.uniform());
        num.push_back(integers ? std::floor(den.back() * rng.uniform() * 0.6) : den.back() * rng.uniform() * 0.6);
      }
      if (integers && den[0] == 0) den[0] = 1;
      nums.push_back(num);
      dens.push_back(den);
    }
    std::vector<ClusterRatioInterval> reference;
    for (size_t k = 0; k < nums.size(); ++k) {
      auto one = cluster_ratio_interval(nums[k], dens[k], 501, 11, 0.95);
      ASSERT_TRUE(one.ok()) << one.status().message();
      reference.push_back(*one);
    }
    for (ResampleKernel kernel : kernels) {
      ASSERT_TRUE(set_resample_kernel(kernel));
      EXPECT_EQ(resample_kernel(), kernel);
      for (int threads : {1, 2, 5}) {
        auto batch = cluster_ratio_intervals(nums, dens, 501, 11, 0.95, threads);
        ASSERT_TRUE(batch.ok()) << batch.status().message();
        for (size_t k = 0; k < nums.size(); ++k) {
          SCOPED_TRACE(testing::Message() << "G=" << g << " ratio " << k << " threads " << threads << " kernel "
                                          << static_cast<int>(kernel) << " data mode " << mode);
          expect_same((*batch)[k], reference[k]);
        }
      }
    }
  }
}

TEST(ClusterIntervals, BadInput) {
  EXPECT_TRUE(cluster_ratio_intervals({}, {}, 10, 1).ok());
  EXPECT_FALSE(cluster_ratio_intervals({{1, 2}}, {{1}}, 10, 1).ok());
  EXPECT_FALSE(cluster_ratio_intervals({{1, 2}, {1}}, {{2, 2}, {1}}, 10, 1).ok());  // cluster counts differ
  EXPECT_FALSE(cluster_ratio_intervals({{0}}, {{0}}, 10, 1).ok());
  EXPECT_FALSE(cluster_ratio_intervals({{1}}, {{2}}, 0, 1).ok());
}

}  // namespace
}  // namespace nf::stats
