// Fault: a cluster drawn twice in a bootstrap resample was counted once (or clusters were averaged), giving 1/2 instead of the pooled 9/14.
#include <gtest/gtest.h>

#include <vector>

#include "stats/bootstrap.h"

TEST(RegressionClusterResamplePooled, RepeatedClusterCountsTwice) {
  // c1: 1,1,1,1   c2: 1,0   c3: 0,0,0,1,0,0  as (correct, items) per cluster.
  const std::vector<double> num = {4, 1, 1};
  const std::vector<double> den = {4, 2, 6};
  EXPECT_DOUBLE_EQ(nf::stats::ratio_of_sums(num, den, {2, 0, 0}), 9.0 / 14.0);
  EXPECT_DOUBLE_EQ(nf::stats::ratio_of_sums(num, den, {0, 1, 2}), 6.0 / 12.0);
}
