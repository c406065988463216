// Slow tier (seed 000 S12): exact McNemar type-I error <= 0.05 for 16, 50 and 300
// vignettes with one draw per condition under no effect. Each vignette has its own action
// probability (heterogeneous), reference and counterfactual draws are independent with that
// same probability. 20,000 simulations per size: Monte Carlo SE <= 0.0016; the exact test
// is conservative (true size ~0.02-0.04), so the bound holds by many SE.
#include <gtest/gtest.h>

#include <cstdio>

#include <cstdint>

#include "stats/paired.h"
#include "util/rng.h"

namespace nf::stats {
namespace {

TEST(PairedTypeOneSlow, ExactMcNemarHoldsLevelUnderNoEffect) {
  for (int vignettes : {16, 50, 300}) {
    Rng rng(500 + static_cast<uint64_t>(vignettes));
    const int sims = 20000;
    int rejections = 0;
    for (int s = 0; s < sims; ++s) {
      int64_t b = 0, c = 0;
      for (int v = 0; v < vignettes; ++v) {
        const double p = rng.uniform();
        const bool ref = rng.uniform() < p;
        const bool cf = rng.uniform() < p;
        if (ref && !cf) ++b;
        if (!ref && cf) ++c;
      }
      auto pv = mcnemar_exact(b, c);
      ASSERT_TRUE(pv.ok());
      if (*pv <= 0.05) ++rejections;
    }
    const double rate = static_cast<double>(rejections) / sims;
    std::printf("exact McNemar type-I error, %d vignettes: %.4f\n", vignettes, rate);
    EXPECT_LE(rate, 0.05) << vignettes << " vignettes";
    EXPECT_GT(rate, 0.0) << vignettes << " vignettes";  // the test can reject at all
  }
}

}  // namespace
}  // namespace nf::stats
