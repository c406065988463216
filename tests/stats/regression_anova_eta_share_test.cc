// Fault: eta-squared and omega-squared were taken as shares of the sum of the Type-II rows instead of the corrected total sum of squares, which is wrong for unbalanced designs (0.3028 instead of 0.363064 for the prompt factor here).
#include <gtest/gtest.h>

#include "stats/linear_model.h"

namespace nf::stats {
namespace {

TEST(RegressionAnova, UnbalancedTwoByTwoSharesOfCorrectedTotal) {
  ModelFrame f;
  FactorColumn prompt{"prompt", {}};
  FactorColumn model{"model", {}};
  auto cell = [&](const char* p, const char* m, std::initializer_list<double> ys) {
    for (double y : ys) {
      f.response.push_back(y);
      prompt.values.emplace_back(p);
      model.values.emplace_back(m);
    }
  };
  cell("p1", "m1", {0.70, 0.74, 0.68});
  cell("p1", "m2", {0.80, 0.83});
  cell("p2", "m1", {0.60, 0.66});
  cell("p2", "m2", {0.71, 0.69, 0.75, 0.78});
  f.factors = {prompt, model};
  f.interactions = {{"prompt", "model"}};
  auto t = anova_type2(f);
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  ASSERT_EQ(t->rows.size(), 3u);
  const AnovaRow& p = t->rows[0];
  EXPECT_EQ(p.term, "prompt");
  EXPECT_NEAR(p.eta_sq, 0.363064, 5e-7);
  EXPECT_NEAR(p.omega_sq, 0.324708, 5e-7);
  double row_sum = t->rss;
  for (const auto& r : t->rows) row_sum += r.sum_sq;
  EXPECT_GT(std::abs(row_sum - t->ss_total), 1e-3);  // unbalanced: Type-II rows do not add up
  EXPECT_GT(std::abs(p.sum_sq / row_sum - p.eta_sq), 0.05);
}

}  // namespace
}  // namespace nf::stats
