// Analysis `rerun` (metrics/rerun.h; seed 002 §4, Table 1, App. A/B): hand-computed
// groups pinned, and the sim recovery of known omission and misrouting rates.
#include "metrics/rerun.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "common/test_data.h"
#include "metrics/rerun_sim_util.h"
#include "runner/runner.h"
#include "sim/sim.h"
#include "stats/proportion.h"

namespace nf {
namespace {

const nlohmann::json kX = {{"resourceType", "ServiceRequest"},
                           {"code", {{"coding", {{{"system", "http://loinc.org"}, {"code", "4548-4"}}}}}},
                           {"authoredOn", "2023-11-13T10:15:00+00:00"},
                           {"status", "active"},
                           {"subject", {{"reference", "Patient/S1"}}}};

RerunRun run_with(std::vector<RerunOrder> orders, std::vector<std::string> actions = {}, bool pass = false) {
  RerunRun r;
  r.subject = "s";
  r.config = "c";
  r.item = "task8_1";
  r.family = "task8";
  r.orders = std::move(orders);
  r.actions = std::move(actions);
  r.pass = pass;
  return r;
}

TEST(RerunGroupTest, OmissionCaseFromTheIssue) {
  // Runs with orders {X}, {X}, {}: order-set divergent, omission split, not endpoint
  // divergent (only emitting runs count), pairwise 2 of 3 pairs differ.
  const RerunOrder x{"ServiceRequest", kX, false};
  const RerunGroup g = rerun_group({run_with({x}), run_with({x}), run_with({})});
  EXPECT_TRUE(g.ordering);
  EXPECT_TRUE(g.order_set_divergent);
  EXPECT_TRUE(g.omission_split);
  EXPECT_FALSE(g.endpoint_divergent);
  EXPECT_FALSE(g.clinical_divergent);
  EXPECT_EQ(g.pairs, 3);
  EXPECT_EQ(g.pairs_differing, 2);
}

TEST(RerunGroupTest, MisroutingPayloadAndLabels) {
  const RerunOrder typed{"ServiceRequest", kX, false}, base{"", kX, true};
  const RerunGroup mis = rerun_group({run_with({typed}), run_with({base})});
  EXPECT_TRUE(mis.order_set_divergent);
  EXPECT_TRUE(mis.endpoint_divergent);
  EXPECT_FALSE(mis.omission_split);
  EXPECT_FALSE(mis.clinical_divergent) << "same payload at another endpoint is not a content change";
  EXPECT_EQ(mis.rejected, 1);
  // A timestamp, status or display label changes the order set but not the clinical content.
  nlohmann::json later = kX;
  later["authoredOn"] = "2023-11-13T10:16:00+00:00";
  later["status"] = "draft";
  later["code"]["coding"][0]["display"] = "HbA1c";
  const RerunGroup label = rerun_group({run_with({typed}), run_with({{"ServiceRequest", later, false}})});
  EXPECT_TRUE(label.order_set_divergent);
  EXPECT_FALSE(label.clinical_divergent);
  // A code change is clinical.
  nlohmann::json other = kX;
  other["code"]["coding"][0]["code"] = "2823-3";
  EXPECT_TRUE(rerun_group({run_with({typed}), run_with({{"ServiceRequest", other, false}})}).clinical_divergent);
  // 1 and 1.0 are the same number.
  nlohmann::json a = {{"v", 1}}, b = {{"v", 1.0}};
  EXPECT_EQ(canonical_json(a), canonical_json(b));
  // No orders anywhere: not an ordering group, no action-level divergence.
  const RerunGroup none = rerun_group({run_with({}), run_with({})});
  EXPECT_FALSE(none.ordering);
  EXPECT_FALSE(none.order_set_divergent);
  EXPECT_EQ(none.pairs, 0);
}

TEST(RerunGroupTest, TrajectoryAndVerdict) {
  const RerunGroup g = rerun_group({run_with({}, {"GET a", "GET b", "FINISH [1]"}, true),
                                    run_with({}, {"GET a", "GET b", "FINISH [2]"}, false),
                                    run_with({}, {"GET a", "GET b", "FINISH [1]"}, true)});
  EXPECT_TRUE(g.trajectory_divergent);
  EXPECT_EQ(g.first_divergent_turn, 2);
  EXPECT_TRUE(g.verdict_unstable);
  const RerunGroup shorter = rerun_group({run_with({}, {"GET a"}), run_with({}, {"GET a", "GET b"})});
  EXPECT_EQ(shorter.first_divergent_turn, 1) << "a run that ended differs from one that goes on";
  const RerunGroup same = rerun_group({run_with({}, {"GET a"}, false), run_with({}, {"GET a"}, false)});
  EXPECT_FALSE(same.trajectory_divergent);
  EXPECT_FALSE(same.verdict_unstable);
  EXPECT_TRUE(same.all_fail);
}

TEST(RerunAnalysisTest, CountsIntervalsAndMcNemarAgainstHandValues) {
  // Arm A (t=0): 20 groups, none divergent; arm B (t=1): the same 20 groups, each with
  // orders {X}, {X}, {} (divergent, omission split). Two families of 10 groups.
  std::vector<RerunRun> runs;
  const RerunOrder x{"ServiceRequest", kX, false};
  for (int i = 0; i < 20; ++i) {
    for (int r = 0; r < 3; ++r) {
      RerunRun a = run_with({x}, {"POST ServiceRequest"}, true);
      a.config = "t=0";
      a.item = "task" + std::string(i < 10 ? "3_" : "8_") + std::to_string(i);
      a.family = i < 10 ? "task3" : "task8";
      a.replicate = r;
      runs.push_back(a);
      RerunRun b = a;
      b.config = "t=1";
      if (r == 2) {
        b.orders.clear();
        b.actions = {"FINISH []"};
        b.pass = false;
      }
      runs.push_back(b);
    }
  }
  RerunOptions o;
  o.bootstrap.resamples = 200;
  auto res = rerun_analysis(runs, {{"s|t=1", {3, 1}}}, o);
  ASSERT_TRUE(res.ok()) << res.status().message();
  const auto& arms = (*res)["arms"];
  ASSERT_EQ(arms.size(), 2u);
  const auto& b = arms[1];
  EXPECT_EQ(b["config"], "t=1");
  EXPECT_EQ(b["excluded_runs"]["parse_error"], 3);
  const auto& osd = b["metrics"]["order_set_divergence"];
  EXPECT_EQ(osd["count"], 20);
  EXPECT_EQ(osd["n"], 20);
  auto w = stats::wilson(20, 20);
  EXPECT_DOUBLE_EQ(osd["low"].get<double>(), w->low);
  EXPECT_TRUE(osd["family_bootstrap"].contains("warning")) << "2 family clusters";
  EXPECT_TRUE(osd["family_bootstrap"].contains("degenerate")) << "every resample is 20/20";
  EXPECT_EQ(b["metrics"]["pairwise_order_set_disagreement"]["pairs"], 60);
  EXPECT_EQ(b["metrics"]["pairwise_order_set_disagreement"]["pairs_differing"], 40);
  EXPECT_EQ(b["metrics"]["endpoint_divergence"]["count"], 0);
  EXPECT_EQ(b["decomposition"]["with_omission"], 20);
  EXPECT_EQ(b["decomposition"]["payload_only"], 0);
  EXPECT_EQ(arms[0]["metrics"]["order_set_divergence"]["count"], 0);
  // McNemar A vs B on order-set divergence: b = 0, c = 20, exact two-sided p = 2 * 0.5^20.
  const auto& comps = (*res)["comparisons"];
  ASSERT_EQ(comps.size(), 6u);
  EXPECT_EQ(comps[0]["metric"], "order_set_divergence");
  EXPECT_EQ(comps[0]["b"], 0);
  EXPECT_EQ(comps[0]["c"], 20);
  EXPECT_NEAR(comps[0]["p"].get<double>(), 2.0 * std::pow(0.5, 20), 1e-15);
  // Holm over 6: the smallest p times 6 (the five equal ones step down alike), capped at 1.
  EXPECT_NEAR(comps[0]["p_holm"].get<double>(), 6 * 2.0 * std::pow(0.5, 20), 1e-12);
  EXPECT_EQ(comps[2]["metric"], "endpoint_divergence");
  EXPECT_EQ(comps[2]["p"], 1.0);
  // An arm whose runs all failed to parse: reported, not compared (no error).
  auto partial = rerun_analysis(runs, {{"s|t=9", {5, 0}}}, o);
  ASSERT_TRUE(partial.ok()) << partial.status().message();
  EXPECT_EQ((*partial)["arms"].size(), 3u);
  EXPECT_EQ((*partial)["arms"][2]["groups"], 0);
  EXPECT_TRUE((*partial)["arms"][2]["metrics"]["order_set_divergence"]["rate"].is_null());
  EXPECT_EQ((*partial)["comparisons"].size(), 6u);
  EXPECT_FALSE((*partial)["warnings"].empty());
  // Unknown arm in the options.
  RerunOptions bad = o;
  bad.pairs = {{"s|t=0", "s|t=9"}};
  EXPECT_FALSE(rerun_analysis(runs, {}, bad).ok());
}

using testing::fhir_study;
using testing::sim_runs;
using testing::truth;

TEST(RerunSimRecoveryTest, OmissionAndMisroutingRatesContainTheTruth) {
  auto task = make_task(fhir_study());
  ASSERT_TRUE(task.ok()) << task.status().message();
  const int R = 5;
  const double om = 0.3, mis = 0.1;
  auto runs = sim_runs(**task, {{"omission", om}, {"misrouting", mis}, {"scale_with_temperature", false}}, 1.0, R);
  RerunOptions o;
  o.bootstrap.resamples = 200;
  auto res = rerun_analysis(runs, {}, o);
  ASSERT_TRUE(res.ok()) << res.status().message();
  const auto& m = (*res)["arms"][0]["metrics"];
  // The correct (noise-free) runs order once in 79 tasks and twice in one (task9 low K);
  // per run: no orders (omission) or each order at its endpoint / at the base URL.
  auto correct = sim_runs(**task, nlohmann::json::object(), 0.0, 1);
  int one = 0, two = 0;
  for (const auto& r : correct) {
    one += r.orders.size() == 1;
    two += r.orders.size() == 2;
  }
  ASSERT_EQ(one, 79);
  ASSERT_EQ(two, 1);
  // A task whose 5 runs all omit is not an ordering group (probability 0.3^5 each).
  EXPECT_LE(m["order_set_divergence"]["n"].get<int>(), 80);
  EXPECT_GE(m["order_set_divergence"]["n"].get<int>(), 77);
  // Categories, one order: 0 none, 1 typed, 2 base. Two orders: 0 none, 1 (T,T), 2 (B,T), 3 (T,B), 4 (B,B).
  const std::vector<double> p1{om, (1 - om) * (1 - mis), (1 - om) * mis};
  const std::vector<double> p2{om, (1 - om) * (1 - mis) * (1 - mis), (1 - om) * mis * (1 - mis),
                               (1 - om) * (1 - mis) * mis, (1 - om) * mis * mis};
  auto split = [](const std::vector<int>& t) {
    return std::count(t.begin(), t.end(), 0) > 0;
  };
  auto endpoint = [](const std::vector<int>& t) {
    std::set<int> s;
    for (int c : t)
      if (c != 0) s.insert(c);
    return s.size() > 1;
  };
  auto divergent = [](const std::vector<int>& t) { return std::set<int>(t.begin(), t.end()).size() > 1; };
  struct Check {
    const char* metric;
    std::function<bool(const std::vector<int>&)> ind;
  };
  for (const Check& c : {Check{"omission_split", split}, Check{"endpoint_divergence", endpoint},
                         Check{"order_set_divergence", divergent}}) {
    const double expected = (one * truth(p1, R, c.ind) + two * truth(p2, R, c.ind)) / (one + two);
    const auto& x = m[c.metric];
    SCOPED_TRACE(c.metric);
    EXPECT_LE(x["low"].get<double>(), expected);
    EXPECT_GE(x["high"].get<double>(), expected);
    EXPECT_GT(x["count"].get<int>(), 0);
  }
  EXPECT_EQ(m["clinical_content_divergence"]["count"], 0) << "no payload noise";
}

TEST(RerunSimRecoveryTest, TruthEnumerationMatchesClosedForms) {
  // testing::truth enumerates every R-tuple of run categories; the closed forms below are
  // the independent reference (o = P(silent), p_c = P(category c), conditional on >= 1
  // emitting run): omission split (1 - (1-o)^R - o^R) / (1 - o^R); order-set divergence
  // (1 - o^R - sum_c p_c^R) / (1 - o^R); endpoint divergence (emitting runs not all in one
  // category) (1 - o^R - sum_c ((o + p_c)^R - o^R)) / (1 - o^R).
  for (int R : {2, 3, 5})
    for (double om : {0.0, 0.3, 0.6})
      for (double mis : {0.05, 0.1, 0.5})
        for (int k : {1, 2}) {
          SCOPED_TRACE(::testing::Message() << "R " << R << " om " << om << " mis " << mis << " k " << k);
          const std::vector<double> p = testing::run_categories(om, mis, k);
          ASSERT_EQ(p.size(), static_cast<size_t>(1 + (1 << k)));
          double total = 0, same = 0, same_emit = 0;
          for (size_t c = 0; c < p.size(); ++c) {
            total += p[c];
            if (c == 0) continue;
            same += std::pow(p[c], R);
            same_emit += std::pow(om + p[c], R) - std::pow(om, R);
          }
          EXPECT_NEAR(total, 1.0, 1e-12);
          const double o_r = std::pow(om, R), ordering = 1 - o_r;
          EXPECT_NEAR(truth(p, R, testing::omission_split_of), (1 - std::pow(1 - om, R) - o_r) / ordering, 1e-12);
          EXPECT_NEAR(truth(p, R, testing::order_set_divergent_of), (1 - o_r - same) / ordering, 1e-12);
          EXPECT_NEAR(truth(p, R, testing::endpoint_divergent_of), (1 - o_r - same_emit) / ordering, 1e-12);
        }
  // Issue 25's numbers: one order, o = 0.3, mis = 0.1, R = 5: 1 - 0.93^5 - 0.37^5 + 0.3^5
  // over 1 - 0.3^5.
  EXPECT_NEAR(truth(testing::run_categories(0.3, 0.1, 1), 5, testing::endpoint_divergent_of),
              (1 - std::pow(0.93, 5) - std::pow(0.37, 5) + std::pow(0.3, 5)) / (1 - std::pow(0.3, 5)), 1e-12);
}

TEST(RerunSimRecoveryTest, NoNoiseMeansEveryMetricIsZero) {
  auto task = make_task(fhir_study());
  ASSERT_TRUE(task.ok());
  auto runs = sim_runs(**task, {{"omission", 0.0}, {"misrouting", 0.0}, {"payload_noise", 0.0}, {"extra_get", 0.0}}, 0.7, 3);
  RerunOptions o;
  o.bootstrap.resamples = 100;
  auto res = rerun_analysis(runs, {}, o);
  ASSERT_TRUE(res.ok());
  const auto& a = (*res)["arms"][0];
  for (const char* k : {"order_set_divergence", "omission_split", "endpoint_divergence", "trajectory_divergence",
                        "verdict_instability", "clinical_content_divergence"})
    EXPECT_EQ(a["metrics"][k]["count"], 0) << k;
  EXPECT_EQ(a["metrics"]["pairwise_order_set_disagreement"]["pairs_differing"], 0);
  EXPECT_EQ(a["rejected_writes"]["count"], 0);
  EXPECT_EQ(a["changing_orders_stable_verdict"]["count"], 0);
}

}  // namespace
}  // namespace nf
