// Slow tier: the sim recovery of seed 002's rerun metrics over many seeds. The default-tier
// test (rerun_test.cc) pins one seed; this one checks that the Wilson 95% intervals of the
// omission split, endpoint divergence and order-set divergence contain the exact truth at
// about their nominal rate, so no seed choice hides a bias (omission 0.3, misrouting 0.1,
// R = 5, 80 write tasks; sim/sim_fhir_agent.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "metrics/rerun_sim_util.h"

namespace nf {
namespace {

TEST(RerunSimRecoverySlow, WilsonIntervalsCoverTheTruthOverSeeds) {
  auto task = make_task(testing::fhir_study());
  ASSERT_TRUE(task.ok()) << task.status().message();
  const int R = 5, kSeeds = 60;
  const double om = 0.3, mis = 0.1;
  // Orders per task of the noise-free agent: 79 tasks order once, one task twice.
  const int one = 79, two = 1;
  const std::vector<double> p1{om, (1 - om) * (1 - mis), (1 - om) * mis};
  const std::vector<double> p2{om, (1 - om) * (1 - mis) * (1 - mis), (1 - om) * mis * (1 - mis),
                               (1 - om) * (1 - mis) * mis, (1 - om) * mis * mis};
  const std::map<std::string, std::function<bool(const std::vector<int>&)>> metrics{
      {"omission_split", [](const std::vector<int>& t) { return std::count(t.begin(), t.end(), 0) > 0; }},
      {"endpoint_divergence",
       [](const std::vector<int>& t) {
         std::set<int> s;
         for (int c : t)
           if (c != 0) s.insert(c);
         return s.size() > 1;
       }},
      {"order_set_divergence", [](const std::vector<int>& t) { return std::set<int>(t.begin(), t.end()).size() > 1; }}};
  std::map<std::string, int> covered;
  std::map<std::string, double> mean_rate;
  for (int s = 0; s < kSeeds; ++s) {
    auto runs = testing::sim_runs(**task, {{"omission", om}, {"misrouting", mis}, {"scale_with_temperature", false}},
                                  1.0, R, 7919LL * (s + 1));
    RerunOptions o;
    o.bootstrap.resamples = 50;
    auto res = rerun_analysis(runs, {}, o);
    ASSERT_TRUE(res.ok()) << res.status().message();
    const auto& m = (*res)["arms"][0]["metrics"];
    for (const auto& [name, ind] : metrics) {
      const double expected =
          (one * testing::truth(p1, R, ind) + two * testing::truth(p2, R, ind)) / (one + two);
      const auto& x = m[name];
      if (x["low"].get<double>() <= expected && expected <= x["high"].get<double>()) ++covered[name];
      mean_rate[name] += x["rate"].get<double>() / kSeeds;
    }
  }
  for (const auto& [name, ind] : metrics) {
    const double expected = (one * testing::truth(p1, R, ind) + two * testing::truth(p2, R, ind)) / (one + two);
    const double coverage = static_cast<double>(covered[name]) / kSeeds;
    std::printf("%-22s truth %.4f  mean estimate %.4f  Wilson 95%% coverage %d/%d = %.3f\n", name.c_str(), expected,
                mean_rate[name], covered[name], kSeeds, coverage);
    // Nominal 0.95; 60 seeds give a binomial sd of 0.028, so 0.85 is ~3.5 sd below.
    EXPECT_GE(coverage, 0.85) << name;
    // The mean over 60 seeds of a rate over ~80 groups: sd about 0.006; a bias of 0.02 fails.
    EXPECT_NEAR(mean_rate[name], expected, 0.02) << name;
  }
}

}  // namespace
}  // namespace nf
