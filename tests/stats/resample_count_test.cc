// Issue 37 (tester s9 F15): the fewest resamples with a resample in each tail of a
// two-sided percentile interval, ceil(2 / (1 - level)), and the warning below 1,000.
#include "stats/resample_count.h"

#include <gtest/gtest.h>

namespace nf::stats {
namespace {

TEST(ResampleCount, MinimumPutsOneResampleInEachTail) {
  // Each tail holds B (1 - level) / 2 resamples: at 0.95, 40 x 0.025 = 1.
  EXPECT_EQ(*min_percentile_resamples(0.95), 40);
  EXPECT_EQ(*min_percentile_resamples(0.99), 200);
  EXPECT_EQ(*min_percentile_resamples(0.9), 20);
  EXPECT_EQ(*min_percentile_resamples(0.5), 4);
  EXPECT_EQ(*min_percentile_resamples(0.96), 50);
  EXPECT_EQ(*min_percentile_resamples(0.97), 67);  // 66.67 -> 67
  EXPECT_FALSE(min_percentile_resamples(1.0).ok());
  EXPECT_FALSE(min_percentile_resamples(0.0).ok());
}

TEST(ResampleCount, RefusesBelowTheMinimumWithTheOptionNamed) {
  EXPECT_TRUE(check_resamples(40, 0.95, "--resamples").ok());
  const Status one = check_resamples(1, 0.95, "--resamples");
  ASSERT_FALSE(one.ok());
  EXPECT_EQ(one.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(one.message(),
            "--resamples: 1 resample leaves the tails of a 95% percentile interval empty (each tail holds resamples "
            "x 0.025 < 1 of them, so its ends are no quantiles at that level): use at least 40 (2 / (1 - level)); "
            "1000 or more advised");
  EXPECT_FALSE(check_resamples(39, 0.95, "x").ok());
  EXPECT_FALSE(check_resamples(199, 0.99, "x").ok());
  EXPECT_TRUE(check_resamples(200, 0.99, "x").ok());
  EXPECT_FALSE(check_resamples(2000, 1.5, "x").ok());
  EXPECT_FALSE(resamples_problem(40, 0.95).has_value());
  EXPECT_TRUE(resamples_problem(5, 0.95).has_value());
}

TEST(ResampleCount, WarnsBelowOneThousand) {
  EXPECT_FALSE(resamples_warning(1000, 0.95, "bootstrap").has_value());
  const auto w = resamples_warning(200, 0.95, "bootstrap");
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(*w,
            "bootstrap: 200 bootstrap resamples (fewer than 1000): the ends of each 95% interval rest on about 5 "
            "resamples per tail and move with the seed");
}

}  // namespace
}  // namespace nf::stats
