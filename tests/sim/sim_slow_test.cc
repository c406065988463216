// Slow tier: the simulator's empirical choice frequencies at more temperatures and with
// nucleus truncation, against option_probabilities (the ground truth).
#include <gtest/gtest.h>

#include "sim/sim.h"
#include "sim/sim_test_util.h"

namespace nf {
namespace {

TEST(SimSlow, EmpiricalFrequenciesMatchAcrossTemperaturesAndTopP) {
  SimBackend sim(SimParams{.seed = 17, .spread = 1.0});
  for (double T : {0.3, 1.3}) {
    for (double top_p : {1.0, 0.8}) testing::check_frequencies(sim, T, top_p);
  }
  testing::check_frequencies(sim, 0.7, 0.8);
}

}  // namespace
}  // namespace nf
