// Fault: a NaN p-value poisoned Benjamini-Hochberg (all NaN, or counted in m); must stay NaN with m = non-NaN count.
#include <gtest/gtest.h>

#include <cmath>

#include "stats/multiplicity.h"

TEST(RegressionBhNan, NanStaysInPlace) {
  auto q = nf::stats::benjamini_hochberg({0.01, 0.04, std::nan(""), 0.03, 0.2});
  ASSERT_TRUE(q.ok());
  ASSERT_EQ(q->size(), 5u);
  EXPECT_NEAR((*q)[0], 0.04, 1e-12);
  EXPECT_NEAR((*q)[1], 0.16 / 3.0, 1e-12);  // 0.0533333
  EXPECT_TRUE(std::isnan((*q)[2]));
  EXPECT_NEAR((*q)[3], 0.16 / 3.0, 1e-12);
  EXPECT_NEAR((*q)[4], 0.2, 1e-12);
  auto h = nf::stats::holm({0.01, std::nan(""), 0.03});
  ASSERT_TRUE(h.ok());
  EXPECT_NEAR((*h)[0], 0.02, 1e-12);
  EXPECT_TRUE(std::isnan((*h)[1]));
  EXPECT_NEAR((*h)[2], 0.03, 1e-12);
}
