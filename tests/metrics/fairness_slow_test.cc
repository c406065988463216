// The full Table S3 pattern of `noisefloor plan` (seed 000 S12): slow tier (simulations).
#include <gtest/gtest.h>

#include "metrics/fairness.h"

namespace nf {
namespace {

// Null rejection <= 0.05 at V = 16, 50, 300; power near 0.94 at V = 300 for a uniform
// +0.10 shift; near the null rate for opposing +-0.10 shifts (Table S3: 0.944, 0.000-0.052).
TEST(PlanSimulationSlow, ReproducesTheTableS3Pattern) {
  for (int v : {16, 50, 300}) {
    auto null = simulate_signed_mcnemar(v, 0.087, 0.0, false, 5000, 100 + v);
    ASSERT_TRUE(null.ok());
    EXPECT_LE(null->rejection_rate, 0.05) << "V = " << v;
    EXPECT_NEAR(null->mean_flip_rate, null->mean_floor_expectation, 0.005) << "V = " << v;
  }
  auto uni = simulate_signed_mcnemar(300, 0.087, 0.10, false, 5000, 7);
  ASSERT_TRUE(uni.ok());
  EXPECT_GT(uni->rejection_rate, 0.90);
  EXPECT_LT(uni->rejection_rate, 0.99);
  auto opp = simulate_signed_mcnemar(300, 0.087, 0.10, true, 5000, 8);
  ASSERT_TRUE(opp.ok());
  EXPECT_LT(opp->rejection_rate, 0.06);
  EXPECT_NEAR(opp->mean_flip_rate, uni->mean_flip_rate, 0.01);  // same flips, no signed power
}

}  // namespace
}  // namespace nf
