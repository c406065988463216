// Fault: exact McNemar for b = 2, c = 9 must be 2 * P[Bin(11, 0.5) <= 2] = 0.0654297 (a one-sided or normal approximation was reported).
#include <gtest/gtest.h>

#include "stats/paired.h"

TEST(RegressionMcNemarTwoNine, ExactTwoSided) {
  auto p = nf::stats::mcnemar_exact(2, 9);
  ASSERT_TRUE(p.ok());
  EXPECT_NEAR(*p, 134.0 / 2048.0, 1e-15);  // (1 + 11 + 55) * 2 / 2^11
  EXPECT_NEAR(*p, 0.0654297, 5e-8);
  auto q = nf::stats::mcnemar_exact(9, 2);
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(*p, *q);
}
