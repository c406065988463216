// Slow tier: Wilson interval coverage on simulated binomial data. Goodness-of-fit with a
// stated flake rate: 40,000 simulated intervals give a Monte Carlo SE of 0.0011, so the
// 1.5-point band is > 13 SE wide around the nominal 95% (flake rate effectively 0 unless
// the true averaged coverage is off by more than ~1 point).
#include <gtest/gtest.h>

#include <cstdio>

#include <cstdint>

#include "stats/proportion.h"
#include "util/rng.h"

namespace nf::stats {
namespace {

TEST(ProportionCoverageSlow, WilsonCoversWithin1Point5Of95) {
  for (int64_t n : {30, 100, 400}) {
    Rng rng(1000 + static_cast<uint64_t>(n));
    const int sims = 40000;
    int covered = 0;
    for (int s = 0; s < sims; ++s) {
      const double p = 0.1 + 0.8 * rng.uniform();  // truth varies, away from the edges
      int64_t x = 0;
      for (int64_t i = 0; i < n; ++i) x += rng.uniform() < p ? 1 : 0;
      auto w = wilson(x, n);
      ASSERT_TRUE(w.ok());
      if (w->low <= p && p <= w->high) ++covered;
    }
    const double coverage = static_cast<double>(covered) / sims;
    std::printf("wilson coverage n=%lld: %.4f\n", static_cast<long long>(n), coverage);
    EXPECT_NEAR(coverage, 0.95, 0.015) << "n = " << n;
  }
}

}  // namespace
}  // namespace nf::stats
