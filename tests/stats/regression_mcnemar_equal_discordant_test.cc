// Fault: McNemar with b = c = 6 reported p = 1.2256 (2 * P[X <= 6] not capped at 1) and the corrected chi-square gave p < 1.
#include <gtest/gtest.h>

#include "stats/paired.h"

TEST(RegressionMcNemarEqualDiscordant, PIsCappedAtOne) {
  auto p = nf::stats::mcnemar_exact(6, 6);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(*p, 1.0);
  auto chi = nf::stats::mcnemar_chi2(6, 6, true);
  ASSERT_TRUE(chi.ok());
  EXPECT_EQ(chi->statistic, 0.0);
  EXPECT_EQ(chi->p_value, 1.0);
  auto near = nf::stats::mcnemar_chi2(6, 7, true);  // |b - c| - 1 = 0
  ASSERT_TRUE(near.ok());
  EXPECT_EQ(near->p_value, 1.0);
}
