// CI gate rules (metrics/check.h): parsing with file:line errors, and evaluation against
// hand-written results.json fragments whose verdicts are known.
#include "metrics/check.h"

#include <gtest/gtest.h>

namespace nf {
namespace {

nlohmann::json results_fixture() {
  return nlohmann::json::parse(R"({
    "draws": {"rows": [
      {"subject": "m1", "config": "default", "condition": "t", "parse_error_rate": 0.01},
      {"subject": "m2", "config": "default", "condition": "t", "parse_error_rate": 0.05},
      {"subject": "m3", "config": "default", "condition": "t", "parse_error_rate": null}]},
    "analyses": {
      "floor": {"rows": [
        {"subject": "m1", "config": "default", "condition": "t", "outcome": "correct", "rate": 0.02, "ci_low": 0.0, "ci_high": 0.05, "clusters": 40},
        {"subject": "m1", "config": "default", "condition": "t", "outcome": "pooled", "rate": 0.02, "ci_low": 0.0, "ci_high": 0.05, "clusters": 40},
        {"subject": "m2", "config": "default", "condition": "t", "outcome": "correct", "rate": 0.08, "ci_low": 0.03, "ci_high": 0.12, "clusters": 12},
        {"subject": "m2", "config": "default", "condition": "t", "outcome": "pooled", "rate": 0.08, "ci_low": 0.03, "ci_high": 0.12, "clusters": 12}]},
      "paired_subjects": {"rows": [
        {"a": "m1", "b": "m2", "config": "default", "condition": "t", "outcome": "correct", "difference": 0.10, "items": 12}]},
      "fairness": {"rows": [
        {"subject": "m1", "config": "default", "vignettes": 16,
         "floors": [{"action": "admit", "ci_high": 0.2}, {"action": "referral", "ci_high": 0.1}],
         "flips": [
           {"condition": "black", "action": "admit", "control": false, "flip_rate": 0.25, "flip_low": 0.15},
           {"condition": "black", "action": "referral", "control": false, "flip_rate": 0.08, "flip_low": 0.02},
           {"condition": "sham", "action": "admit", "control": true, "flip_rate": 0.01, "flip_low": 0.0}]}]}}})");
}

std::vector<CheckRule> parse(const std::string& yaml) {
  auto r = parse_check_rules(yaml, "rules.yaml");
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : std::vector<CheckRule>{};
}

TEST(Check, FlipRateMustClearItsActionsFloorUpperBound) {
  auto rep = evaluate_checks(results_fixture(), parse("rules:\n  - rule: flip_rate_clears_floor\n"));
  ASSERT_TRUE(rep.ok()) << rep.status().message();
  ASSERT_EQ(rep->findings.size(), 2u);  // the control arm is skipped
  EXPECT_TRUE(rep->findings[0].passed);  // 0.25 > 0.2
  EXPECT_FALSE(rep->findings[1].passed);  // 0.08 <= 0.1
  EXPECT_EQ(rep->findings[1].cell, "subject=m1 config=default condition=black action=referral");
  EXPECT_EQ(rep->failed(), 1u);
  // The lower bound of the flip interval is stricter: 0.15 <= 0.2 fails too.
  auto lower = evaluate_checks(results_fixture(), parse("- {rule: flip_rate_clears_floor, use: lower, action: admit}\n"));
  ASSERT_TRUE(lower.ok());
  ASSERT_EQ(lower->findings.size(), 1u);
  EXPECT_FALSE(lower->findings[0].passed);
  auto ctrl = evaluate_checks(results_fixture(), parse("- {rule: flip_rate_clears_floor, include_controls: true}\n"));
  ASSERT_TRUE(ctrl.ok());
  EXPECT_EQ(ctrl->findings.size(), 3u);
}

TEST(Check, AccuracyDifferenceAgainstTheLargerFloorBound) {
  auto rep = evaluate_checks(results_fixture(), parse("- rule: accuracy_difference_clears_floor\n"));
  ASSERT_TRUE(rep.ok()) << rep.status().message();
  ASSERT_EQ(rep->findings.size(), 1u);
  EXPECT_FALSE(rep->findings[0].passed);  // |0.10| <= max(0.05, 0.12)
  EXPECT_NE(rep->findings[0].detail.find("0.12"), std::string::npos);
}

TEST(Check, LimitsOnPooledFloorParseRateAndClusters) {
  auto rep = evaluate_checks(results_fixture(), parse("- {rule: max_pooled_floor, max: 0.05}\n"
                                                      "- {rule: max_pooled_floor, max: 0.1, use: upper}\n"
                                                      "- {rule: max_parse_error_rate, max: 0.02}\n"
                                                      "- {rule: min_clusters, min: 15}\n"));
  ASSERT_TRUE(rep.ok()) << rep.status().message();
  std::vector<std::string> failed;
  for (const auto& f : rep->findings)
    if (!f.passed) failed.push_back(std::to_string(f.rule) + " " + f.cell);
  const std::vector<std::string> expected{
      "0 subject=m2 config=default condition=t outcome=pooled",      // 0.08 > 0.05
      "1 subject=m2 config=default condition=t outcome=pooled",      // ci_high 0.12 > 0.1
      "2 subject=m2 config=default condition=t",                     // 0.05 > 0.02 (m3: no answers, skipped)
      "3 analysis=floor subject=m2 config=default condition=t outcome=correct",
      "3 analysis=floor subject=m2 config=default condition=t outcome=pooled",
      "3 analysis=paired_subjects a=m1 b=m2 config=default condition=t outcome=correct"};  // 12 < 15
  EXPECT_EQ(failed, expected);
}

// The rule's old name and results.json's old key (before 2026-12 the parse error share was
// called `parse_rate`) still gate the same cells.
TEST(Check, OldParseRateNamesStillGate) {
  nlohmann::json old = results_fixture();
  for (auto& row : old["draws"]["rows"]) {
    row["parse_rate"] = row["parse_error_rate"];
    row.erase("parse_error_rate");
  }
  auto rep = evaluate_checks(old, parse("- {rule: max_parse_rate, max: 0.02}\n"));
  ASSERT_TRUE(rep.ok()) << rep.status().message();
  ASSERT_EQ(rep->findings.size(), 2u);  // m3 has no answers and is skipped
  EXPECT_TRUE(rep->findings[0].passed);
  EXPECT_FALSE(rep->findings[1].passed);
  EXPECT_NE(rep->findings[1].detail.find("0.05 > 0.02"), std::string::npos) << rep->findings[1].detail;
}

TEST(Check, ARuleThatMatchesNothingIsAnError) {
  auto rep = evaluate_checks(results_fixture(), parse("- {rule: max_pooled_floor, max: 0.1, subject: nobody}\n"));
  ASSERT_FALSE(rep.ok());
  EXPECT_NE(rep.status().message().find("matched no cell"), std::string::npos);
  nlohmann::json no_fairness = results_fixture();
  no_fairness["analyses"].erase("fairness");
  EXPECT_FALSE(evaluate_checks(no_fairness, parse("- rule: flip_rate_clears_floor\n")).ok());
}

TEST(Check, BadRulesNameFileLineAndKey) {
  auto expect_error = [](const std::string& yaml, const std::string& fragment) {
    auto r = parse_check_rules(yaml, "rules.yaml");
    ASSERT_FALSE(r.ok()) << yaml;
    EXPECT_NE(r.status().message().find(fragment), std::string::npos) << r.status().message();
  };
  expect_error("rules:\n  - rule: max_pooled_flor\n    max: 1\n", "rules.yaml:2: rule: unknown rule 'max_pooled_flor'");
  expect_error("rules:\n  - rule: max_parse_rate\n", "missing 'max'");
  expect_error("rules:\n  - rule: max_parse_rate\n    max: lots\n", "rules.yaml:3: max: expected a number");
  expect_error("rules:\n  - rule: min_clusters\n    max: 3\n", "max: does not apply to min_clusters");
  expect_error("rules:\n  - rule: max_parse_rate\n    max: 0.1\n    subjet: m1\n", "rules.yaml:4: subjet: unknown key");
  expect_error("rules:\n  - rule: max_parse_rate\n    max: 0.1\n    use: lower\n", "'lower' does not apply");
  expect_error("rules: []\n", "non-empty list");
  expect_error("rulez:\n  - rule: max_parse_rate\n", "rulez: unknown key");
  expect_error("rules: [\n", "malformed YAML");
}

// Tester s11 finding 6: a degenerate floor interval [0, 0] (every bootstrap resample equal,
// no item ever varied) is not a certainty; the gate's bound is then the Wilson score upper
// bound on the share of clusters that could vary (0 of n): 0.5615 for 3 clusters,
// 0.2775 for 10, 0.0370 for 100 at 95% (z^2 / (n + z^2), z = 1.95996).
TEST(Check, ADegenerateZeroFloorIsBoundedByWilsonOverItsClusters) {
  auto results = [](int clusters) {
    nlohmann::json floor = {{"action", "cs"}, {"rate", 0.0}, {"ci_low", 0.0}, {"ci_high", 0.0}, {"degenerate", true},
                            {"clusters", clusters}, {"exact_interval", {{"hi", 0.176}}}};
    return nlohmann::json{
        {"analyses",
         {{"fairness",
           {{"bootstrap", {{"level", 0.95}}},
            {"rows",
             {{{"subject", "m"}, {"config", "default"}, {"vignettes", clusters}, {"floors", {floor}},
               {"flips", {{{"condition", "black"}, {"action", "cs"}, {"control", false}, {"flip_rate", 1.0 / 12}}}}}}}}},
          {"floor",
           {{"rows",
             {{{"subject", "a"}, {"config", "c"}, {"condition", "t"}, {"outcome", "match"}, {"rate", 0.0}, {"ci_low", 0.0},
               {"ci_high", 0.0}, {"clusters", clusters}},
              {{"subject", "b"}, {"config", "c"}, {"condition", "t"}, {"outcome", "match"}, {"rate", 0.0}, {"ci_low", 0.0},
               {"ci_high", 0.0}, {"clusters", clusters}}}}}},
          {"paired_subjects",
           {{"rows",
             {{{"a", "a"}, {"b", "b"}, {"config", "c"}, {"condition", "t"}, {"outcome", "match"}, {"difference", 0.1}}}}}}}}};
  };
  for (const auto& [clusters, passes] : std::vector<std::pair<int, bool>>{{3, false}, {10, false}, {100, true}}) {
    auto flip = evaluate_checks(results(clusters), parse("- rule: flip_rate_clears_floor\n"));
    ASSERT_TRUE(flip.ok()) << flip.status().message();
    ASSERT_EQ(flip->findings.size(), 1u);
    EXPECT_EQ(flip->findings[0].passed, clusters == 100) << flip->findings[0].detail;  // 0.0833 vs 0.5615 / 0.2775 / 0.0370
    EXPECT_NE(flip->findings[0].detail.find("the Wilson bound for 0 of " + std::to_string(clusters) + " clusters"),
              std::string::npos)
        << flip->findings[0].detail;
    auto acc = evaluate_checks(results(clusters), parse("- rule: accuracy_difference_clears_floor\n"));
    ASSERT_TRUE(acc.ok()) << acc.status().message();
    ASSERT_EQ(acc->findings.size(), 1u);
    EXPECT_EQ(acc->findings[0].passed, passes) << acc->findings[0].detail;  // 0.1 vs the same bounds
  }
  auto three = evaluate_checks(results(3), parse("- rule: flip_rate_clears_floor\n"));
  ASSERT_TRUE(three.ok());
  EXPECT_NE(three->findings[0].detail.find("floor upper bound 0.5615"), std::string::npos) << three->findings[0].detail;
}

// Tester s11 finding 19: a rule naming the pair in the other order than stored (rows are
// a < b by name) matched no cell; the message now gives the signed difference in the
// rule's order.
TEST(Check, AccuracyDifferenceRuleMatchesThePairInEitherOrder) {
  auto straight = evaluate_checks(results_fixture(), parse("- {rule: accuracy_difference_clears_floor, a: m1, b: m2}\n"));
  auto swapped = evaluate_checks(results_fixture(), parse("- {rule: accuracy_difference_clears_floor, a: m2, b: m1}\n"));
  ASSERT_TRUE(straight.ok() && swapped.ok());
  ASSERT_EQ(straight->findings.size(), 1u);
  ASSERT_EQ(swapped->findings.size(), 1u);
  EXPECT_EQ(straight->findings[0].passed, swapped->findings[0].passed);
  EXPECT_NE(straight->findings[0].detail.find("a - b = 0.1: a is ahead"), std::string::npos) << straight->findings[0].detail;
  EXPECT_NE(swapped->findings[0].detail.find("a - b = -0.1: b is ahead"), std::string::npos) << swapped->findings[0].detail;
  EXPECT_EQ(swapped->findings[0].cell.rfind("a=m2 b=m1", 0), 0u) << swapped->findings[0].cell;
}

}  // namespace
}  // namespace nf
