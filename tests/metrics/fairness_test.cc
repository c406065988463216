// The fairness audit (metrics/fairness.h) on the shipped model-A draws (seed 000 §IV.A,
// S2, S8) and on the simulated agent with known truth (seed 000 §III.B, S12).
#include "metrics/fairness.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "common/test_data.h"
#include "core/draw_seed.h"
#include "data/vignettes.h"
#include "sim/sim.h"
#include "sim/sim_agent.h"
#include "stats/paired.h"
#include "task/vignette_task.h"
#include "util/strings.h"

namespace nf {
namespace {

std::vector<OutcomeRow> model_a_rows() {
  std::istringstream in(testing::fairmedagent_model_a_csv());
  std::string line;
  std::getline(in, line);
  std::vector<OutcomeRow> rows;
  while (std::getline(in, line)) {
    auto f = split(line, ',');
    rows.push_back({f[0], f[4], f[3], f[1], f[2], std::stoi(f[5]), f[6], std::stod(f[7]), ""});
  }
  return rows;
}

const ActionFloor& floor_of(const FairnessResult& r, const std::string& action) {
  for (const auto& f : r.floors)
    if (f.action == action) return f;
  ADD_FAILURE() << "no floor row " << action;
  return r.floors.front();
}

TEST(FairnessModelA, ReproducesPublishedFloorNumbers) {
  auto res = compute_fairness(model_a_rows(), FairnessOptions{}, {400, 3, 0.95});
  ASSERT_TRUE(res.ok()) << res.status().to_string();
  ASSERT_EQ(res->size(), 1u);
  const FairnessResult& r = res->front();
  EXPECT_EQ(r.reference, "reference");
  EXPECT_EQ(r.vignettes, 16);
  // 75 of 96 vignette-action cells unanimous (seed 000 §IV.A, §IV.D).
  EXPECT_EQ(floor_of(r, "pooled").cells, 96);
  EXPECT_EQ(floor_of(r, "pooled").unanimous_cells, 75);
  // Pooled 374/4320; without cs_caution 245/3600 = 0.068.
  EXPECT_EQ(floor_of(r, "pooled").discordant, 374);
  EXPECT_EQ(floor_of(r, "pooled").comparisons, 4320);
  EXPECT_EQ(floor_of(r, "pooled_without_cs_caution").discordant, 245);
  EXPECT_EQ(floor_of(r, "pooled_without_cs_caution").comparisons, 3600);
  EXPECT_NEAR(floor_of(r, "pooled_without_cs_caution").rate, 0.068, 0.0005);
  // Paired difference cs_caution - escalate_icu = (129 - 16) / 720 = 113/720 = 0.157.
  ASSERT_TRUE(r.paired_defined);
  EXPECT_EQ(r.paired.discordant_a - r.paired.discordant_b, 113);
  EXPECT_EQ(r.paired.comparisons, 720);
  EXPECT_DOUBLE_EQ(r.paired.difference, 113.0 / 720.0);
  EXPECT_LT(r.paired.ci_low, r.paired.difference);
  EXPECT_GT(r.paired.ci_high, r.paired.difference);
  EXPECT_GT(r.paired.ci_low, 0.0);  // the published interval [0.051, 0.269] excludes 0
  // Vignettes to reach 25 discordant pairs (S2): 289 pooled, 140 cs_caution, 1,125 escalate_icu.
  EXPECT_EQ(floor_of(r, "pooled").plan.vignettes, 289);
  EXPECT_EQ(floor_of(r, "cs_caution").plan.vignettes, 140);
  EXPECT_EQ(floor_of(r, "escalate_icu").plan.vignettes, 1125);
  // Prevalence-normalised ratios: 0.05 any_opioid to 0.42 cs_caution (seed 000 §IV.A).
  EXPECT_NEAR(floor_of(r, "any_opioid").normalised_ratio, 0.05, 0.006);
  EXPECT_NEAR(floor_of(r, "cs_caution").normalised_ratio, 0.42, 0.006);
  // Subsampling curve: K = 16 is the whole set (374/4320); smaller K are prefixes.
  ASSERT_EQ(r.subsample.size(), 4u);
  EXPECT_EQ(r.subsample[3].k, 16);
  EXPECT_EQ(r.subsample[3].discordant, 374);
  EXPECT_EQ(r.subsample[3].comparisons, 4320);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(r.subsample[i].comparisons, 270 * r.subsample[i].k);
  // Majority vote R' = 5 gives 0.053 (seed 000 §D).
  bool saw_r5 = false;
  for (const auto& m : r.majority) {
    if (m.action == "pooled" && m.vote_size == 5) {
      saw_r5 = true;
      EXPECT_NEAR(m.rate, 0.053, 0.0005);
    }
  }
  EXPECT_TRUE(saw_r5);
  // No contrasts in reference-only data.
  EXPECT_TRUE(r.flips.empty());
  EXPECT_FALSE(r.within_range_note.empty());
}

TEST(FairnessModelA, SubsamplingOrderIsAParameter) {
  const auto rows = model_a_rows();
  auto base = compute_fairness(rows, FairnessOptions{}, {50, 3, 0.95});
  ASSERT_TRUE(base.ok());
  FairnessOptions o;
  std::vector<std::string> ids;
  for (const auto& row : rows) ids.push_back(row.item);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  std::reverse(ids.begin(), ids.end());
  o.subsample_order = ids;
  auto rev = compute_fairness(rows, o, {50, 3, 0.95});
  ASSERT_TRUE(rev.ok());
  // Same K = 16 total; K = 4 differs because the first four vignettes differ.
  EXPECT_EQ(rev->front().subsample[3].discordant, 374);
  const int64_t sum_first = base->front().subsample[0].discordant;
  const int64_t sum_last = rev->front().subsample[0].discordant;
  // The two K = 4 prefixes are disjoint vignette sets, so together they are at most K = 8 of both orders.
  EXPECT_LE(sum_first + sum_last, 374);
  o.subsample_order = {"no_such_vignette"};
  EXPECT_FALSE(compute_fairness(rows, o, {50, 3, 0.95}).ok());
}

TEST(FairnessOptions, RejectsBadOptionsByName) {
  EXPECT_TRUE(FairnessOptions::from_json(nlohmann::json::object()).ok());
  auto bad = FairnessOptions::from_json({{"target_pair", 25}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("target_pair"), std::string::npos);
  EXPECT_FALSE(FairnessOptions::from_json({{"paired_difference", {"admit"}}}).ok());
  EXPECT_FALSE(FairnessOptions::from_json({{"alpha", 1.5}}).ok());
  auto ok = FairnessOptions::from_json({{"paired_difference", {"admit", "referral"}}, {"target_pairs", 10}});
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->paired_difference.first, "admit");
  EXPECT_EQ(ok->target_pairs, 10);
}

// An option the user gave that the data cannot honour is an error naming the option and
// the value and listing what is valid, never a dropped line or "0/0 = n/a" (model A: 16
// vignettes, 6 actions, 10 replicates per vignette x action cell). The defaults stay quiet.
TEST(FairnessOptions, GivenOptionsTheDataCannotHonourAreErrors) {
  const auto rows = model_a_rows();
  auto run = [&](const nlohmann::json& j) {
    auto o = FairnessOptions::from_json(j);
    EXPECT_TRUE(o.ok()) << j.dump();
    return compute_fairness(rows, *o, {50, 3, 0.95});
  };
  auto expect_error = [&](const nlohmann::json& j, const std::vector<std::string>& parts) {
    auto r = run(j);
    ASSERT_FALSE(r.ok()) << j.dump();
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    for (const auto& p : parts) EXPECT_NE(r.status().message().find(p), std::string::npos) << r.status().message();
  };
  expect_error({{"paired_difference", {"admit", "nope"}}},
               {"analyses.fairness.paired_difference: unknown action 'nope'", "admit, any_opioid, cs_caution"});
  expect_error({{"pooled_exclude", {"nope"}}}, {"analyses.fairness.pooled_exclude: unknown action 'nope'"});
  expect_error({{"pooled_exclude", {"admit", "any_opioid", "cs_caution", "escalate_icu", "high_acuity", "referral"}}},
               {"analyses.fairness.pooled_exclude", "excludes every action"});
  expect_error({{"subsample_k", {4, 100}}}, {"analyses.fairness.subsample_k: K = 100 exceeds the 16 vignettes",
                                             "valid: 1 to 16"});
  expect_error({{"vote_sizes", {3, 6}}}, {"analyses.fairness.vote_sizes: R' = 6 needs 12 replicates",
                                          "at most 10", "valid: 1 to 5"});
  // At the edges they are honoured.
  auto edge = run({{"subsample_k", {16}}, {"vote_sizes", {5}}, {"paired_difference", {"admit", "referral"}},
                   {"pooled_exclude", {"referral"}}});
  ASSERT_TRUE(edge.ok()) << edge.status().to_string();
  const auto& r = edge->front();
  ASSERT_EQ(r.subsample.size(), 1u);
  EXPECT_EQ(r.subsample[0].comparisons, 4320);
  EXPECT_TRUE(r.paired_defined);
  EXPECT_EQ(r.paired.a, "admit");
  EXPECT_EQ(floor_of(r, "pooled_without_referral").comparisons, 3600);
  EXPECT_FALSE(r.majority.empty());
  // The defaults (cs_caution / escalate_icu, K up to 16, R' = 3, 5) on data they do not
  // fit are not errors: 4 vignettes of admit only.
  std::vector<OutcomeRow> few;
  std::set<std::string> kept_items;
  for (const auto& row : rows) {
    if (row.outcome != "admit") continue;
    if (kept_items.size() < 4 || kept_items.count(row.item)) {
      kept_items.insert(row.item);
      few.push_back(row);
    }
  }
  EXPECT_TRUE(compute_fairness(few, FairnessOptions{}, {50, 3, 0.95}).ok());
}

TEST(FairnessRegistry, DemotesRegisteredDirectionsOnly) {
  const auto vig = nlohmann::json::parse(testing::slurp(testing::data_file("fairmedagent-floor16/vignettes.json")));
  const auto& reg = vig["confounded_registry"];
  EXPECT_TRUE(registry_demotes(reg, "lep", "referral"));
  EXPECT_TRUE(registry_demotes(reg, "age", "any_opioid"));         // analgesia_tier: requires adjudication
  EXPECT_FALSE(registry_demotes(reg, "insurance", "any_opioid"));  // deliberately unregistered
  EXPECT_FALSE(registry_demotes(reg, "race", "admit"));
  EXPECT_FALSE(registry_demotes(reg, "age", "cs_caution"));  // never exempt
  EXPECT_EQ(changed_attributes("hispanic_man_medicaid_lep"), (std::vector<std::string>{"race", "insurance", "lep"}));
  EXPECT_TRUE(changed_attributes("rerender_control").empty());
}

// Hand-made draws: 4 vignettes, reference and one contrast, 2 replicates.
std::vector<OutcomeRow> toy_rows() {
  std::vector<OutcomeRow> rows;
  auto add = [&](const std::string& cond, const std::string& item, int rep, double v) {
    rows.push_back({"m", "default", cond, item, item, rep, "admit", v, ""});
  };
  // v1: ref 0,0 ; cond 1,1  (b at replicate 0)
  add("ref_white_man_private", "v1", 0, 0);
  add("ref_white_man_private", "v1", 1, 0);
  add("white_man_medicaid", "v1", 0, 1);
  add("white_man_medicaid", "v1", 1, 1);
  // v2: ref 1,0 ; cond 1,1
  add("ref_white_man_private", "v2", 0, 1);
  add("ref_white_man_private", "v2", 1, 0);
  add("white_man_medicaid", "v2", 0, 1);
  add("white_man_medicaid", "v2", 1, 1);
  // v3: ref 1,1 ; cond 0,1 (c at replicate 0)
  add("ref_white_man_private", "v3", 0, 1);
  add("ref_white_man_private", "v3", 1, 1);
  add("white_man_medicaid", "v3", 0, 0);
  add("white_man_medicaid", "v3", 1, 1);
  // v4: ref 0,0 ; cond 0,0
  add("ref_white_man_private", "v4", 0, 0);
  add("ref_white_man_private", "v4", 1, 0);
  add("white_man_medicaid", "v4", 0, 0);
  add("white_man_medicaid", "v4", 1, 0);
  return rows;
}

TEST(FairnessFlips, CountsPairsOneDrawCasesAndRefusesWithinRange) {
  auto res = compute_fairness(toy_rows(), FairnessOptions{}, {200, 5, 0.95});
  ASSERT_TRUE(res.ok()) << res.status().to_string();
  const auto& r = res->front();
  ASSERT_EQ(r.flips.size(), 1u);
  const FlipRow& f = r.flips[0];
  // Cross pairs: v1 4 of 4, v2 2 of 4, v3 2 of 4, v4 0 of 4 -> 8/16.
  EXPECT_EQ(f.flips, 8);
  EXPECT_EQ(f.pairs, 16);
  // Floor on the reference: one discordant pair (v2) of 4.
  EXPECT_DOUBLE_EQ(f.floor, 0.25);
  // One draw per case (replicate 0): b = 1 (v1), c = 1 (v3).
  EXPECT_EQ(f.cases, 4);
  EXPECT_EQ(f.b, 1);
  EXPECT_EQ(f.c, 1);
  EXPECT_DOUBLE_EQ(f.p_value, *stats::mcnemar_exact(1, 1));
  EXPECT_EQ(f.direction, 0);
  // Disparity: cond 5/8 - ref 3/8.
  EXPECT_DOUBLE_EQ(f.disparity, 0.25);
  EXPECT_EQ(f.reading, "not significant");
  EXPECT_NE(r.within_range_note.find("refused"), std::string::npos);
  EXPECT_TRUE(f.within_range.is_null());

  // With a band file: v1 and v2 accept {0, 1}, v3 only {1}.
  testing::TempDir dir;
  std::ofstream(dir / "bands.json") << R"({"v1": {"admit": [0, 1]}, "v2": {"admit": [0, 1]}, "v3": {"admit": [1]}})";
  FairnessOptions o;
  o.acceptable_bands = dir / "bands.json";
  auto wr = compute_fairness(toy_rows(), o, {200, 5, 0.95});
  ASSERT_TRUE(wr.ok()) << wr.status().to_string();
  const auto& w = wr->front().flips[0].within_range;
  EXPECT_EQ(w["pairs"], 2);  // v1 (0 vs 1, both in band), v2 (1 vs 1); v3 has 0 out of band
  EXPECT_EQ(w["flips"], 1);
  EXPECT_TRUE(wr->front().within_range_note.empty());
  o.acceptable_bands = dir / "missing.json";
  EXPECT_FALSE(compute_fairness(toy_rows(), o, {200, 5, 0.95}).ok());
}

// Runs the vignette agent task against the in-process simulator and returns ok rows.
std::vector<OutcomeRow> run_sim_agent(const VignetteSet& set, const std::vector<std::string>& conditions, int reps,
                                      const nlohmann::json& agent, double temperature = 1.0) {
  auto task = VignetteTask::create(set);
  EXPECT_TRUE(task.ok()) << task.status().to_string();
  EXPECT_TRUE((*task)->prepare(conditions, 1).ok());
  SimParams params;
  if (const char* e = std::getenv("NF_TEST_SIM_SEED"))
    params.seed = std::strtoull(e, nullptr, 10);  // robustness checks
  SimBackend sim(params);
  std::vector<OutcomeRow> rows;
  for (size_t i = 0; i < set.vignettes.size(); ++i) {
    for (const auto& c : conditions) {
      for (int r = 0; r < reps; ++r) {
        DrawContext ctx;
        ctx.model = "agent-sim";
        ctx.config.temperature = temperature;
        ctx.key = {"agent", set.vignettes[i].id, c, "default", r};
        ctx.seed = draw_request_seed(0, 1, ctx.key);  // one stream per draw, as the runner sends
        ctx.extra_body = {{"sim_agent", agent}};
        auto out = (*task)->run(i, c, ctx, [&](const ChatRequest& req) { return sim.complete(req); });
        EXPECT_EQ(out.calls, 5);
        if (out.status != DrawStatus::kOk) continue;
        for (const auto& o : out.outcomes)
          rows.push_back({"agent", "default", c, set.vignettes[i].id, set.vignettes[i].id, r, o.name, o.value, ""});
      }
    }
  }
  return rows;
}

TEST(FairnessSimAgent, NoEffectFlipsMatchTheFloorAndUniformEffectIsDetected) {
  auto set = read_vignettes_json(testing::data_file("fairmedagent-floor16/vignettes.json"));
  ASSERT_TRUE(set.ok()) << set.status().to_string();
  // 64 vignettes: the 16 released ones and three variants of each (a distinct clinical core
  // gives the simulated agent a distinct policy), so one draw per case has power.
  const auto base = set->vignettes;
  for (int k = 1; k <= 3; ++k)
    for (auto v : base) {
      v.id += "_v" + std::to_string(k);
      v.clinical_core += " Variant " + std::to_string(k) + ".";
      set->vignettes.push_back(v);
    }
  const std::vector<std::string> conds{"ref_white_man_private", "race_black_man_private", "white_man_medicaid",
                                       "rerender_control",      "sham_attribute_control", "rare_token_control"};
  // Known floor 0.2 for every action, uniform +0.45 admit shift for "Black".
  const nlohmann::json agent = {{"floor", 0.2},
                                {"effects", {{{"match", "Black"}, {"action", "admit"}, {"shift", 0.45}}}}};
  const auto rows = run_sim_agent(*set, conds, 6, agent);
  auto res = compute_fairness(rows, FairnessOptions{}, {300, 9, 0.95});
  ASSERT_TRUE(res.ok()) << res.status().to_string();
  const auto& r = res->front();
  EXPECT_NEAR(floor_of(r, "pooled").rate, 0.2, 0.06);
  int null_rows = 0, null_in_ci = 0, null_reject = 0;
  double flip_sum = 0.0;
  for (const auto& f : r.flips) {
    const bool effect = f.condition == "race_black_man_private" && f.action == "admit";
    if (effect) {
      // The truth: flips exceed the floor, more admissions, significant and above every control.
      EXPECT_GT(f.flip_rate, f.floor);
      EXPECT_GT(f.disparity_low, 0.0);
      EXPECT_EQ(f.direction, 1);
      EXPECT_LT(f.p_value, 0.05);
      EXPECT_EQ(f.reading, "credible");
      continue;
    }
    ++null_rows;
    flip_sum += f.flip_rate;
    // Under no effect the expected flip rate is the floor (0.2).
    null_in_ci += (f.flip_low <= 0.2 && 0.2 <= f.flip_high) ? 1 : 0;
    null_reject += (!f.control && f.p_value < 0.05) ? 1 : 0;
    EXPECT_NE(f.reading, "credible") << f.condition << " " << f.action;
  }
  EXPECT_EQ(null_rows, 29);
  // Under no effect the mean flip rate is the floor; the 16-cluster bootstrap intervals
  // are approximate (seed 000 §D), so ask for about 70% coverage of the true 0.2, not 95%.
  EXPECT_NEAR(flip_sum / null_rows, 0.2, 0.02);
  // Rows share reference draws, so their coverage is correlated: over simulator seeds 0-16
  // (NF_TEST_SIM_SEED) the count ranged 21-29 of 29.
  EXPECT_GE(null_in_ci, 20);
  EXPECT_LE(null_reject, 3);  // 24 null contrasts at a conservative nominal 0.05: P(> 3) < 1%
}

TEST(FairnessSimAgent, TemperatureZeroIsDeterministic) {
  auto set = read_vignettes_json(testing::data_file("fairmedagent-floor16/vignettes.json"));
  ASSERT_TRUE(set.ok());
  const auto rows = run_sim_agent(*set, {"ref_white_man_private", "rerender_control"}, 3, {{"floor", 0.3}}, 0.0);
  auto res = compute_fairness(rows, FairnessOptions{}, {50, 9, 0.95});
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(floor_of(res->front(), "pooled").discordant, 0);
  for (const auto& f : res->front().flips) EXPECT_EQ(f.flips, 0);
}

// Table S3 pattern (seed 000 S12), small fast version; the full one is the slow tier.
TEST(PlanSimulation, NullIsConservativeAndUniformShiftHasPower) {
  auto null = simulate_signed_mcnemar(50, 0.087, 0.0, false, 400, 11);
  ASSERT_TRUE(null.ok());
  EXPECT_LE(null->rejection_rate, 0.05);
  EXPECT_NEAR(null->mean_flip_rate, null->mean_floor_expectation, 0.01);
  EXPECT_NEAR(null->mean_floor_expectation, 0.087, 1e-9);
  auto uni = simulate_signed_mcnemar(300, 0.087, 0.10, false, 200, 12);
  ASSERT_TRUE(uni.ok());
  EXPECT_GT(uni->rejection_rate, 0.8);
  auto opp = simulate_signed_mcnemar(300, 0.087, 0.10, true, 200, 13);
  ASSERT_TRUE(opp.ok());
  EXPECT_LT(opp->rejection_rate, 0.15);
  EXPECT_FALSE(simulate_signed_mcnemar(0, 0.1, 0.0, false, 10, 1).ok());
  EXPECT_FALSE(simulate_signed_mcnemar(10, 0.6, 0.0, false, 10, 1).ok());
}

}  // namespace
}  // namespace nf
