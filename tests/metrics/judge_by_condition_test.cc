// judge_rates_by_condition (metrics/judge_panel.h): appropriate-response rates by subject
// x condition, per judge and pooled, on a hand-made set whose rates are worked out below.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "metrics/judge_panel.h"

namespace nf {
namespace {

JudgmentRow vote(int64_t draw, const std::string& judge, int label, const std::string& cluster,
                 const std::string& status = "ok") {
  JudgmentRow r;
  r.subject = "m1";
  r.subject_provider = "p";
  r.item = "i" + std::to_string(draw);
  r.cluster = cluster;
  r.judge = judge;
  r.judge_provider = judge;
  r.draw_id = draw;
  r.status = status;
  if (status == "ok") r.label = label;
  return r;
}

TEST(JudgeRatesByCondition, CountsRatesAndPooledRowByHand) {
  // Draws 1-4 under none, 5-8 truncated; clusters P1 (draws 1,2,5,6) and P2 (3,4,7,8).
  std::map<int64_t, std::string> cond;
  for (int64_t d = 1; d <= 8; ++d) cond[d] = d <= 4 ? "none" : "truncate_last_turn";
  auto cl = [](int64_t d) { return (d == 1 || d == 2 || d == 5 || d == 6) ? std::string("P1") : std::string("P2"); };
  std::vector<JudgmentRow> rows;
  // Judge a: none 1,0,0,0 (1/4); truncated 1,1,1,0 (3/4). Judge b: none 0,0,0,0; truncated 1,1,0,0.
  const int a[] = {1, 0, 0, 0, 1, 1, 1, 0}, b[] = {0, 0, 0, 0, 1, 1, 0, 0};
  for (int64_t d = 1; d <= 8; ++d) {
    rows.push_back(vote(d, "a", a[d - 1], cl(d)));
    rows.push_back(vote(d, "b", b[d - 1], cl(d)));
  }
  rows.push_back(vote(1, "c", 0, "P1", "api_error"));    // never a vote
  rows.push_back(vote(2, "c", 0, "P1", "parse_error"));  // never a vote
  rows.push_back(vote(99, "a", 1, "P9"));                // draw without a known condition (import)
  BootstrapOptions boot;
  boot.resamples = 400;
  auto r = judge_rates_by_condition(rows, cond, boot);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->size(), 6u);  // 2 conditions x (a, b, all judges)
  std::map<std::string, nlohmann::json> by;
  for (const auto& row : *r) by[row["condition"].get<std::string>() + "/" + row["judge"].get<std::string>()] = row;
  EXPECT_EQ(by["none/a"]["met"], 1);
  EXPECT_EQ(by["none/a"]["votes"], 4);
  EXPECT_DOUBLE_EQ(by["none/a"]["rate"].get<double>(), 0.25);
  EXPECT_DOUBLE_EQ(by["truncate_last_turn/a"]["rate"].get<double>(), 0.75);
  EXPECT_DOUBLE_EQ(by["none/b"]["rate"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(by["truncate_last_turn/b"]["rate"].get<double>(), 0.5);
  EXPECT_EQ(by["truncate_last_turn/all judges"]["met"], 5);
  EXPECT_EQ(by["truncate_last_turn/all judges"]["votes"], 8);
  EXPECT_DOUBLE_EQ(by["none/all judges"]["rate"].get<double>(), 0.125);
  for (const auto& row : *r) {
    EXPECT_LE(row["low"].get<double>(), row["rate"].get<double>() + 1e-12) << row.dump();
    EXPECT_GE(row["high"].get<double>(), row["rate"].get<double>() - 1e-12) << row.dump();
  }
  // Two clusters of the pooled truncated row: P1 has 4/4 met, P2 1/4; resampling whole
  // clusters can only give 8/8, 5/8 or 2/8, so the CI lies within [0.25, 1].
  EXPECT_GE(by["truncate_last_turn/all judges"]["low"].get<double>(), 0.25);
  // "all judges" comes after the single judges of its cell.
  EXPECT_EQ((*r)[2]["judge"], "all judges");
}

TEST(JudgeRatesByCondition, OneConditionGivesNoRows) {
  std::map<int64_t, std::string> cond{{1, "none"}, {2, "none"}};
  std::vector<JudgmentRow> rows = {vote(1, "a", 1, "P1"), vote(2, "a", 0, "P2")};
  auto r = judge_rates_by_condition(rows, cond, BootstrapOptions{});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->empty());
}

}  // namespace
}  // namespace nf

namespace nf {
namespace {

TEST(LeaveOneJudgeOut, ADeletionThatLeavesASubjectUnratedIsUndefinedNotDifferent) {
  // Judges j1 and j2 both rate subject A; only j1 rates subject B (j2's calls on B all
  // failed). Dropping j1 leaves B without votes: that deletion has no ranking.
  std::vector<JudgmentRow> rows;
  auto add = [&](const std::string& subject, const std::string& item, const std::string& judge, int label) {
    JudgmentRow r;
    r.subject = subject;
    r.subject_provider = subject == "A" ? "pa" : "pb";
    r.item = item;
    r.cluster = item;
    r.judge = judge;
    r.judge_provider = judge == "j1" ? "pa" : "pc";
    r.label = label;
    rows.push_back(r);
  };
  for (int i = 0; i < 6; ++i) {
    const std::string item = "q" + std::to_string(i);
    add("A", item, "j1", i % 2);
    add("A", item, "j2", i % 3 == 0);
    add("B", item, "j1", i < 4);
  }
  auto panel = build_panel(rows);
  ASSERT_TRUE(panel.ok()) << panel.status().to_string();
  JudgePanelOptions o;
  o.bootstrap.resamples = 50;
  auto r = judge_panel_analysis(*panel, o);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const auto& lojo = (*r)["leave_one_judge_out"];
  ASSERT_EQ(lojo["undefined_deletions"].size(), 1u) << lojo.dump();
  EXPECT_EQ(lojo["undefined_deletions"][0], "j1");
  bool saw_undefined = false;
  for (const auto& row : lojo["rows"]) {
    if (row["dropped_judge"] == "j1") {
      EXPECT_TRUE(row["ranking"].is_null());
      EXPECT_NE(row["undefined"].get<std::string>().find("on B"), std::string::npos);
      saw_undefined = true;
    } else {
      EXPECT_TRUE(row["same_as_full"].get<bool>()) << row.dump();
    }
  }
  EXPECT_TRUE(saw_undefined);
  EXPECT_TRUE(lojo["same_ranking_under_every_deletion"].get<bool>());
}

}  // namespace
}  // namespace nf

namespace nf {
namespace {

TEST(JudgePanelNotVotes, SplitByStatus) {
  std::vector<JudgmentRow> rows;
  auto add = [&](const std::string& subject, const std::string& item, const std::string& judge,
                 std::optional<int> label, const std::string& status) {
    JudgmentRow r;
    r.subject = subject;
    r.subject_provider = subject;
    r.item = item;
    r.cluster = item;
    r.judge = judge;
    r.judge_provider = judge;
    r.label = label;
    r.status = status;
    rows.push_back(r);
  };
  for (int i = 0; i < 4; ++i) {
    const std::string item = "q" + std::to_string(i);
    add("A", item, "j1", i % 2, "ok");
    add("B", item, "j1", 1, "ok");
  }
  add("A", "q0", "j2", std::nullopt, "api_error");
  add("A", "q1", "j2", std::nullopt, "api_error");
  add("B", "q0", "j2", std::nullopt, "parse_error");
  add("B", "q1", "j2", std::nullopt, "ok");  // a missing vote (null in votes.jsonl)
  add("B", "q2", "j2", 0, "ok");
  auto panel = build_panel(rows);
  ASSERT_TRUE(panel.ok()) << panel.status().to_string();
  JudgePanelOptions o;
  o.bootstrap.resamples = 20;
  auto r = judge_panel_analysis(*panel, o);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)["votes"], 9);
  EXPECT_EQ((*r)["not_votes"], 4);
  EXPECT_EQ((*r)["not_votes_by_status"]["api_error"], 2);
  EXPECT_EQ((*r)["not_votes_by_status"]["parse_error"], 1);
  EXPECT_EQ((*r)["not_votes_by_status"]["no_label"], 1);
}

}  // namespace
}  // namespace nf
