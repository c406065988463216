// Fault: Fleiss kappa with 14 of 15 ratings in one category (5 items x 3 raters, one dissent) must be exactly -1/14, a sign that chance agreement is computed from all ratings.
#include <gtest/gtest.h>

#include "stats/agreement.h"

namespace nf::stats {
namespace {

TEST(RegressionAgreement, Fleiss14Of15InOneCategoryIsMinusOneFourteenth) {
  // P_bar = (4 + 1/3) / 5 = 13/15; p = (14/15, 1/15) -> P_e = 197/225;
  // kappa = (195 - 197) / (225 - 197) = -1/14.
  auto r = fleiss_kappa_counts({3, 0, 3, 0, 3, 0, 3, 0, 2, 1}, 2);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_NEAR(r->estimate, -1.0 / 14.0, 1e-12);
  auto t = fleiss_kappa({{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 1, 0}});
  ASSERT_TRUE(t.ok());
  EXPECT_NEAR(t->estimate, -1.0 / 14.0, 1e-12);
}

}  // namespace
}  // namespace nf::stats
