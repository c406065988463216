// The headline (report/summary.h) picks the right rows of results.json: the pooled floor on the
// reference condition for each configuration, the contrasts furthest above their floor (control
// arms excluded), the MCQ replicate it used, and the judge-panel lines.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "report/markdown.h"
#include "report/summary.h"

namespace nf {
namespace {

using nlohmann::json;

json floor_row(const std::string& config, const std::string& condition, const std::string& outcome, int d, int n) {
  return {{"subject", "s1"}, {"config", config}, {"condition", condition}, {"outcome", outcome},
          {"discordant", d}, {"comparisons", n}, {"rate", static_cast<double>(d) / n},
          {"ci_low", 0.01}, {"ci_high", 0.2}};
}

json flip(const std::string& condition, const std::string& action, double rate, double floor, bool control) {
  return {{"condition", condition}, {"action", action}, {"flip_rate", rate}, {"floor", floor},
          {"flip_low", rate / 2}, {"flip_high", rate * 1.5}, {"control", control}, {"control_max", 0.07},
          {"q_value", 0.5}, {"reading", control ? "control" : "not significant"}};
}

json results() {
  json r;
  r["analyses"]["floor"]["rows"] = {floor_row("t=0", "a_first", "pooled", 5, 100),
                                    floor_row("t=0", "ref", "pooled", 7, 100),
                                    floor_row("t=0", "ref", "admit", 3, 50),
                                    floor_row("t=1", "ref", "pooled", 9, 100)};
  json row = {{"subject", "s1"}, {"config", "t=0"}, {"reference", "ref"}};
  row["floors"] = {{{"action", "admit"}, {"rate", 0.05}, {"discordant", 3}, {"comparisons", 50}},
                   {{"action", "pooled"}, {"rate", 0.07}, {"discordant", 7}, {"comparisons", 100}}};
  row["flips"] = {flip("b", "admit", 0.10, 0.05, false), flip("c", "admit", 0.30, 0.05, false),
                  flip("ctl", "admit", 0.90, 0.05, true), flip("d", "admit", 0.04, 0.05, false),
                  flip("e", "admit", 0.20, 0.05, false), flip("f", "admit", 0.08, 0.05, false)};
  r["analyses"]["fairness"]["rows"] = {row};
  return r;
}

TEST(Summary, PooledFloorOnTheReferenceConditionForEachConfig) {
  const auto h = headline(results());
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].subject, "s1");
  // The fairness reference "ref" is chosen over the first-named condition "a_first".
  EXPECT_NE(h[0].lines[0].find("at t=0, condition ref (pooled over outcomes): 0.070 = 7/100"), std::string::npos)
      << h[0].lines[0];
  EXPECT_NE(h[0].lines[1].find("at t=1, condition ref"), std::string::npos) << h[0].lines[1];
}

// Issue 37: a pooled row says what it summed (results.json pooled_over / derived_excluded).
TEST(Summary, PooledFloorSaysWhatItPoolsAndWhichDerivedOutcomesItLeftOut) {
  json r;
  json pooled = floor_row("t=0", "none", "pooled", 5, 12);
  pooled["pooled_over"] = {"choice"};
  pooled["derived_excluded"] = {"correct"};
  r["analyses"]["floor"]["rows"] = {floor_row("t=0", "none", "choice", 5, 12), floor_row("t=0", "none", "correct", 4, 12),
                                    pooled};
  const auto h = headline(r);
  ASSERT_EQ(h.size(), 1u);
  EXPECT_NE(h[0].lines[0].find("condition none (pooled over 1 independent outcome (derived excluded: correct)): "
                               "0.417 = 5/12"),
            std::string::npos)
      << h[0].lines[0];
  json two = pooled;
  two["pooled_over"] = {"admit", "refer"};
  two["derived_excluded"] = json::array();
  EXPECT_EQ(pooled_over_text(two), "pooled over 2 independent outcomes");
  EXPECT_EQ(pooled_over_text(floor_row("t=0", "none", "pooled", 1, 2)), "pooled over outcomes");  // older results
  const std::string md = render_markdown(r);
  EXPECT_NE(md.find("**pooled** = pooled over 1 independent outcome (derived excluded: correct)"), std::string::npos)
      << md;
}

TEST(Summary, LargestEffectsAboveTheFloorFirstControlArmsExcluded) {
  const auto h = headline(results());
  std::vector<std::string> contrasts;
  for (const auto& l : h[0].lines)
    if (l.rfind("Contrast ", 0) == 0) contrasts.push_back(l);
  ASSERT_EQ(contrasts.size(), 3u);  // top three of c (0.30), e (0.20), b (0.10), f (0.08); d is below its floor
  EXPECT_EQ(contrasts[0].rfind("Contrast c on admit", 0), 0u) << contrasts[0];
  EXPECT_EQ(contrasts[1].rfind("Contrast e on admit", 0), 0u) << contrasts[1];
  EXPECT_EQ(contrasts[2].rfind("Contrast b on admit", 0), 0u) << contrasts[2];
  EXPECT_NE(contrasts[0].find("largest control arm on this action 0.070"), std::string::npos) << contrasts[0];
  // The fairness pooled floor repeats the floor analysis's pooled line only when that one is absent.
  int pooled_lines = 0;
  for (const auto& l : h[0].lines) pooled_lines += l.find("(pooled)") != std::string::npos;
  EXPECT_EQ(pooled_lines, 0);
}

// Tester s11 finding 4: with reference draws only (no descriptor contrast at all) the
// Summary said "No descriptor contrast ... flips more often than its action's floor", which
// reads as "no bias found"; it says no flip rate was tested.
TEST(Summary, NoContrastsIsNotANegativeFinding) {
  json r = results();
  r["analyses"]["fairness"]["rows"][0]["flips"] = json::array();
  std::vector<std::string> lines;
  {
    const auto h = headline(r);
    lines = h[0].lines;
  }
  bool said = false;
  for (const auto& l : lines) {
    EXPECT_EQ(l.find("flips more often"), std::string::npos) << l;
    said = said || l == "No descriptor contrasts at t=0: the store holds reference draws only, so no flip rate was "
                        "tested (floors only).";
  }
  EXPECT_TRUE(said);
  // Contrasts that all stay below their floors are still a finding.
  r["analyses"]["fairness"]["rows"][0]["flips"] = {flip("d", "admit", 0.04, 0.05, false)};
  const auto h = headline(r);
  bool below = false;
  for (const auto& l : h[0].lines)
    below = below || l == "No descriptor contrast at t=0 flips more often than its action's floor.";
  EXPECT_TRUE(below);
}

TEST(Summary, FlagsAndMcqReplicateAreSaid) {
  json r = results();
  r["analyses"]["floor"]["rows"][1]["degenerate"] = true;
  r["analyses"]["floor"]["rows"][1]["exact_interval"] = {{"method", "Wilson"}, {"lo", 0.0}, {"hi", 0.023}};
  r["analyses"]["mcq_robustness"]["rows"] = {
      {{"subject", "s1"}, {"config", "t=0"}, {"metric", "accuracy_none"}, {"x", 7}, {"n", 24}, {"rate", 7.0 / 24},
       {"replicate", 0}},
      {{"subject", "s1"}, {"config", "t=0"}, {"metric", "accuracy_shuffle"}, {"x", 6}, {"n", 24}, {"rate", 0.25}},
      {{"subject", "s1"}, {"config", "t=0"}, {"metric", "shuffle_mcnemar"}, {"p_value", 1.0}}};
  const auto h = headline(r);
  EXPECT_NE(h[0].lines[0].find("degenerate interval"), std::string::npos) << h[0].lines[0];
  EXPECT_NE(h[0].lines[0].find("Wilson [0.000, 0.023]"), std::string::npos) << h[0].lines[0];
  bool mcq = false;
  for (const auto& l : h[0].lines)
    if (l.find("MCQ accuracy at t=0 (replicate 0): 0.292 = 7/24 as written, 0.250 = 6/24 with shuffled options "
               "(exact McNemar p = 1.0000)") != std::string::npos)
      mcq = true;
  EXPECT_TRUE(mcq);
}

// Tester s11 finding 9: beside the paired test, the Summary gives the accuracies of the
// test's own pairs, and says which replicates they came from.
TEST(Summary, McqAccuraciesAreTheMcNemarPairs) {
  json r = results();
  r["analyses"]["mcq_robustness"]["rows"] = {
      {{"subject", "s1"}, {"config", "t=0"}, {"metric", "accuracy_none"}, {"x", 6}, {"n", 24}, {"rate", 0.25},
       {"replicate", 0}, {"replicate_note", "0 for 19 items, 1 for 5 items"}},
      {{"subject", "s1"}, {"config", "t=0"}, {"metric", "accuracy_shuffle"}, {"x", 6}, {"n", 24}, {"rate", 0.25}},
      {{"subject", "s1"}, {"config", "t=0"}, {"metric", "shuffle_mcnemar"}, {"n", 23}, {"b", 4}, {"c", 1},
       {"p_value", 0.375}, {"replicate", 0}, {"replicate_note", "0 for 20 items, 1 for 3 items"},
       {"paired", {{"n", 23}, {"none_correct", 9}, {"shuffle_correct", 6}, {"none_rate", 9.0 / 23}, {"shuffle_rate", 6.0 / 23}}}}};
  bool found = false;
  const auto h = headline(r);
  for (const auto& l : h[0].lines) {
    EXPECT_EQ(l.find("6/24"), std::string::npos) << l;
    if (l.find("MCQ accuracy at t=0 on the 23 items answered in both conditions (replicate 0 for 20 items, 1 for 3 "
               "items): 0.391 = 9/23 as written, 0.261 = 6/23 with shuffled options (exact McNemar b = 4, c = 1, p = "
               "0.3750).") != std::string::npos)
      found = true;
  }
  EXPECT_TRUE(found);
}

TEST(Summary, MarkdownReportOpensWithTheSummary) {
  json r = results();
  r["analyses"].erase("fairness");  // render_markdown needs a complete fairness section
  r["study"] = {{"name", "x"}};
  const std::string md = render_markdown(r);
  const size_t summary = md.find("## Summary"), draws = md.find("## Draws");
  ASSERT_NE(summary, std::string::npos);
  EXPECT_LT(summary, draws);
  EXPECT_EQ(render_summary_markdown(json::object()), "");
}

// Issue 33 (F3): beside a degenerate 0/9000 interval the Wilson bound is 4.27e-4, which 3
// decimals would print as 0.000; the summary and the floor table print 0.00043.
// /usr/bin/python3 -c "from statsmodels.stats.proportion import proportion_confint as pc;
//   print(pc(0, 9000, method='wilson'))"  -> (-2.7e-20, 0.000426646652794048)
TEST(Summary, TinyWilsonBoundKeepsItsDigits) {
  json r = results();
  r["analyses"].erase("fairness");
  r["study"] = {{"name", "x"}};
  for (auto& row : r["analyses"]["floor"]["rows"]) {
    row["degenerate"] = true;
    row["ci_method"] = "degenerate (all resamples equal)";
    row["ci_low"] = 0.0;
    row["ci_high"] = 0.0;
    row["exact_interval"] = {{"method", "wilson"}, {"lo", 0.0}, {"hi", 0.000426646652794048}};
  }
  const auto h = headline(r);
  bool said = false;
  for (const auto& l : h[0].lines) said = said || l.find("wilson [0.000, 0.00043]") != std::string::npos;
  EXPECT_TRUE(said) << h[0].lines[0];
  const std::string md = render_markdown(r);
  EXPECT_NE(md.find("degenerate [0.000, 0.000]; Wilson [0.000, 0.00043]"), std::string::npos) << md;
  EXPECT_EQ(md.find("Wilson [0.000, 0.000]"), std::string::npos) << md;
}

}  // namespace
}  // namespace nf
