// Fault: on a 2x2 rater table 90/5/5/0 Cohen kappa must be -0.0526316 (the high-prevalence kappa paradox) while Gwet AC1 is 0.889503; code that confused the two, or used a K other than 2, got these wrong.
#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "stats/agreement.h"

namespace nf::stats {
namespace {

TEST(RegressionAgreement, KappaParadox90_5_5_0) {
  std::vector<std::optional<int64_t>> a, b;
  auto add = [&](int n, int x, int y) {
    for (int i = 0; i < n; ++i) {
      a.push_back(x);
      b.push_back(y);
    }
  };
  add(90, 0, 0);
  add(5, 0, 1);
  add(5, 1, 0);
  auto k = cohen_kappa(a, b);
  auto g = gwet_ac1(a, b);
  ASSERT_TRUE(k.ok() && g.ok());
  EXPECT_NEAR(k->estimate, -0.0526316, 5e-8);   // (0.9 - 0.905) / 0.095 = -1/19
  EXPECT_NEAR(k->estimate, -1.0 / 19.0, 1e-15);
  EXPECT_NEAR(g->estimate, 0.889503, 5e-7);      // (0.9 - 0.095) / 0.905
  EXPECT_NEAR(raw_agreement(a, b)->estimate, 0.9, 1e-15);
}

}  // namespace
}  // namespace nf::stats
