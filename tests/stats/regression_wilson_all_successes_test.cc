// Fault: Wilson interval for 38/38 had an upper bound above 1 from rounding; must be [0.908190, 1] with the bound clamped.
#include <gtest/gtest.h>

#include "stats/proportion.h"

TEST(RegressionWilsonAllSuccesses, ClampedAtOne) {
  auto w = nf::stats::wilson(38, 38);
  ASSERT_TRUE(w.ok());
  EXPECT_NEAR(w->low, 0.908190, 5e-7);
  EXPECT_LE(w->high, 1.0);
  EXPECT_EQ(w->high, 1.0);
}
