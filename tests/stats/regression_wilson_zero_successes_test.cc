// Fault: Wilson interval for 0/77 had a lower bound below 0 (or collapsed to [0, 0]); must be [0, 0.0475184].
#include <gtest/gtest.h>

#include "stats/proportion.h"

TEST(RegressionWilsonZeroSuccesses, ClampedAtZero) {
  auto w = nf::stats::wilson(0, 77);
  ASSERT_TRUE(w.ok());
  EXPECT_GE(w->low, 0.0);
  EXPECT_EQ(w->low, 0.0);
  EXPECT_NEAR(w->high, 0.0475184, 5e-8);
}
