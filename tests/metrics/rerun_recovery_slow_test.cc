// Slow tier: the sim recovery of seed 002's rerun metrics over many seeds (omission 0.3,
// misrouting 0.1, R = 5, the 80 tasks whose correct run orders; sim/sim_fhir_agent.h).
// The default-tier test (rerun_test.cc) pins one seed; this one checks, per metric
// (omission split, endpoint divergence, order-set divergence):
//   1. rerun_analysis's count and denominator equal a recount from the raw draws (what
//      each run posted, and where), every seed;
//   2. the sim's per-run omission and per-order misrouting frequencies are within 4
//      binomial sd of 0.3 and 0.1;
//   3. the mean estimate is within 3.5 sd of the exact truth at the omission and
//      misrouting frequencies the draws realised (a control variate: most of the
//      seed-to-seed spread of these rates is how many runs happened to misroute or omit,
//      so this check has about half the sd of 4. and catches a bias of 0.016);
//   4. the mean estimate is within 0.02 of the exact truth at the nominal 0.3 / 0.1, and
//      the Wilson 95% intervals contain that truth at about their nominal rate.
// Issue 25: the 60 seeds below give an endpoint divergence of 0.3187 against a nominal
// truth of 0.3031 (2.4 sd). It is the draw, not a bias: these seeds misroute 7.3% of the
// one-order runs (expected 7.0%, +2 sd), the truth at the realised frequencies is 0.3155
// (+0.0032, within check 3's tolerance), and 300 fresh seeds give 0.3059 +- 0.0030
// (docs/fhir-rerun.md "Sim recovery and the endpoint-divergence gap").
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "metrics/rerun_sim_util.h"

namespace nf {
namespace {

using Indicator = std::function<bool(const std::vector<int>&)>;

// The exact truth of one indicator for the study: tasks weighted by how many orders their
// correct run posts (`tasks_by_orders`: k -> tasks), each at P(indicator | ordering group).
double study_truth(const std::map<int, int>& tasks_by_orders, double om, double mis, int R, const Indicator& ind) {
  double num = 0, den = 0;
  for (const auto& [k, n] : tasks_by_orders) {
    num += n * testing::truth(testing::run_categories(om, mis, k), R, ind);
    den += n;
  }
  return num / den;
}

TEST(RerunSimRecoverySlow, WilsonIntervalsCoverTheTruthOverSeeds) {
  auto task = make_task(testing::fhir_study());
  ASSERT_TRUE(task.ok()) << task.status().message();
  const int R = 5, kSeeds = 60;
  const double om = 0.3, mis = 0.1;
  // Orders per task of the noise-free agent (79 tasks order once, task9_3 twice).
  std::map<std::string, int> n_orders;
  std::map<int, int> tasks_by_orders;
  for (const auto& r : testing::sim_runs(**task, nlohmann::json::object(), 0.0, 1)) {
    n_orders[r.item] = static_cast<int>(r.orders.size());
    if (!r.orders.empty()) ++tasks_by_orders[static_cast<int>(r.orders.size())];
  }
  ASSERT_EQ(tasks_by_orders.size(), 2u);
  const std::vector<std::pair<std::string, Indicator>> metrics{
      {"omission_split", testing::omission_split_of},
      {"endpoint_divergence", testing::endpoint_divergent_of},
      {"order_set_divergence", testing::order_set_divergent_of}};
  std::map<std::string, int> covered;
  std::map<std::string, double> mean_rate, sum_resid, sum_resid2;
  int64_t runs_total = 0, silent_total = 0, orders_total = 0, misrouted_total = 0;
  for (int s = 0; s < kSeeds; ++s) {
    auto runs = testing::sim_runs(**task, {{"omission", om}, {"misrouting", mis}, {"scale_with_temperature", false}},
                                  1.0, R, 7919LL * (s + 1));
    RerunOptions o;
    o.bootstrap.resamples = 50;
    auto res = rerun_analysis(runs, {}, o);
    ASSERT_TRUE(res.ok()) << res.status().message();
    const auto& m = (*res)["arms"][0]["metrics"];
    // The raw draws: per task, each run's category (0 = silent, else 1 + the bit pattern of
    // its misrouted orders), and this seed's omission / misrouting frequencies.
    std::map<std::string, std::vector<int>> cats;
    int64_t runs_s = 0, silent_s = 0, orders_s = 0, misrouted_s = 0;
    for (const auto& r : runs) {
      const int k = n_orders.at(r.item);
      if (k == 0) {
        EXPECT_TRUE(r.orders.empty()) << r.item << ": a task with no correct order never orders here";
        continue;
      }
      ++runs_s;
      if (r.orders.empty()) {
        ++silent_s;
        cats[r.item].push_back(0);
        continue;
      }
      EXPECT_EQ(static_cast<int>(r.orders.size()), k) << r.item << ": omission drops all orders or none";
      int bits = 0;
      for (size_t j = 0; j < r.orders.size(); ++j) {
        ++orders_s;
        if (r.orders[j].endpoint.empty()) {
          ++misrouted_s;
          bits |= 1 << j;
        }
      }
      cats[r.item].push_back(1 + bits);
    }
    runs_total += runs_s;
    silent_total += silent_s;
    orders_total += orders_s;
    misrouted_total += misrouted_s;
    const double om_s = static_cast<double>(silent_s) / runs_s, mis_s = static_cast<double>(misrouted_s) / orders_s;
    for (const auto& [name, ind] : metrics) {
      SCOPED_TRACE(name + " seed " + std::to_string(s));
      int64_t x = 0, n = 0;
      for (const auto& [item, t] : cats) {
        if (std::count(t.begin(), t.end(), 0) == static_cast<long>(t.size())) continue;  // not an ordering group
        ++n;
        x += ind(t);
      }
      const auto& j = m[name];
      EXPECT_EQ(j["count"].get<int64_t>(), x);  // check 1
      EXPECT_EQ(j["n"].get<int64_t>(), n);
      const double expected = study_truth(tasks_by_orders, om, mis, R, ind);
      if (j["low"].get<double>() <= expected && expected <= j["high"].get<double>()) ++covered[name];
      const double rate = j["rate"].get<double>();
      mean_rate[name] += rate / kSeeds;
      const double resid = rate - study_truth(tasks_by_orders, om_s, mis_s, R, ind);
      sum_resid[name] += resid;
      sum_resid2[name] += resid * resid;
    }
  }
  // Check 2: the sim's rates.
  const double om_hat = static_cast<double>(silent_total) / static_cast<double>(runs_total);
  const double mis_hat = static_cast<double>(misrouted_total) / static_cast<double>(orders_total);
  std::printf("sim draws: omission %.4f over %lld runs (nominal %.2f), misrouting %.4f over %lld orders (nominal %.2f)\n",
              om_hat, static_cast<long long>(runs_total), om, mis_hat, static_cast<long long>(orders_total), mis);
  EXPECT_NEAR(om_hat, om, 4 * std::sqrt(om * (1 - om) / static_cast<double>(runs_total)));
  EXPECT_NEAR(mis_hat, mis, 4 * std::sqrt(mis * (1 - mis) / static_cast<double>(orders_total)));
  for (const auto& [name, ind] : metrics) {
    SCOPED_TRACE(name);
    const double expected = study_truth(tasks_by_orders, om, mis, R, ind);
    const double realised = study_truth(tasks_by_orders, om_hat, mis_hat, R, ind);
    // The sd of the mean of (rate - truth at that seed's own frequencies), over seeds.
    const double mr = sum_resid[name] / kSeeds;
    const double sd_mean = std::sqrt(std::max(0.0, sum_resid2[name] / kSeeds - mr * mr) / (kSeeds - 1));
    const double tol = 3.5 * sd_mean;
    const double coverage = static_cast<double>(covered[name]) / kSeeds;
    std::printf(
        "%-22s truth %.4f  mean estimate %.4f (%+.4f)  truth at the realised frequencies %.4f (%+.4f, tolerance "
        "%.4f)  Wilson 95%% coverage %d/%d = %.3f\n",
        name.c_str(), expected, mean_rate[name], mean_rate[name] - expected, realised, mean_rate[name] - realised, tol,
        covered[name], kSeeds, coverage);
    // Check 3. For the divergences the tolerance must stay sharp enough that a bias of
    // 0.016 (issue 25's size) fails. The omission split gains little from the control
    // variate (its spread is within-group), so its check resolves only ~0.02.
    if (name != "omission_split") {
      EXPECT_LE(tol, 0.012);
    }
    EXPECT_NEAR(mean_rate[name], realised, tol);
    // Check 4. Nominal 0.95; 60 seeds give a binomial sd of 0.028, so 0.85 is ~3.5 sd below.
    EXPECT_GE(coverage, 0.85);
    // The mean over 60 seeds of a rate over ~80 groups: sd about 0.0066 (endpoint), so
    // 0.02 is 3 sd; check 3 is the sharp one.
    EXPECT_NEAR(mean_rate[name], expected, 0.02);
  }
}

}  // namespace
}  // namespace nf
