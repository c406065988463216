// Fault: exact McNemar with b = c = 0 divided by zero / returned NaN instead of p = 1.
#include <gtest/gtest.h>

#include "stats/paired.h"

TEST(RegressionMcNemarZeroDiscordant, PIsOne) {
  auto p = nf::stats::mcnemar_exact(0, 0);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(*p, 1.0);
  auto chi = nf::stats::mcnemar_chi2(0, 0);
  ASSERT_TRUE(chi.ok());
  EXPECT_EQ(chi->p_value, 1.0);
}
