// judge_panel on the released seed 004 votes (../shared/data/missing-info-judges, read in
// place) against the paper's Tables 4-6 and statsmodels (tests/reference/gen_judges.py).
#include "metrics/judge_panel.h"

#include <gtest/gtest.h>

#include "common/test_data.h"
#include "data/judge_import.h"
#include "spec/study.h"

namespace nf {
namespace {

using nlohmann::json;

std::vector<JudgmentRow> released_judgments() {
  auto votes = read_released_votes(testing::data_file("missing-info-judges/votes.jsonl"));
  EXPECT_TRUE(votes.ok()) << votes.status().message();
  std::vector<JudgmentRow> rows;
  if (!votes.ok()) return rows;
  for (const auto& v : *votes) {
    JudgmentRow r;
    r.subject = v.subject;
    r.subject_provider = v.subject_provider;
    r.item = v.item;
    r.cluster = v.cluster;
    r.judge = v.judge;
    r.judge_provider = v.judge_provider;
    r.label = v.label;
    r.status = v.label ? "ok" : "api_error";
    rows.push_back(r);
  }
  return rows;
}

json run(int resamples = 200, uint64_t seed = 7, const std::string& focus = "") {
  auto panel = build_panel(released_judgments());
  EXPECT_TRUE(panel.ok()) << panel.status().message();
  if (!panel.ok()) return {};
  JudgePanelOptions o;
  o.bootstrap = {resamples, seed, 0.95};
  o.focus_subject = focus;
  auto r = judge_panel_analysis(*panel, o);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : json();
}

double rate(const json& r, const std::string& judge, const std::string& subject) {
  for (const auto& x : r["rates"])
    if (x["judge"] == judge && x["subject"] == subject) return x["rate"].get<double>();
  ADD_FAILURE() << "no rate for " << judge << " x " << subject;
  return -1;
}

const json* find_row(const json& rows, const char* key, const std::string& value) {
  for (const auto& x : rows)
    if (x[key] == value) return &x;
  return nullptr;
}

double term(const json& r, const std::string& model, const std::string& name, const char* field = "coef") {
  for (const auto& m : r["logistic"]["models"])
    if (m["model"] == model)
      for (const auto& t : m["terms"])
        if (t["term"] == name) return t[field].get<double>();
  ADD_FAILURE() << "no term " << model << "/" << name;
  return 0;
}

class JudgePanelReleased : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { result_ = new json(run(100)); }
  static void TearDownTestSuite() { delete result_; }
  static const json& r() { return *result_; }
  static json* result_;
};
json* JudgePanelReleased::result_ = nullptr;

// Table 4 (exact: integer vote counts; Grok as judge lost 2 votes to moderation, so its
// GPT-5.5 cell is 33/49 = 0.673, which the paper prints as 0.67).
TEST_F(JudgePanelReleased, Table4RatesExact) {
  EXPECT_EQ(r()["votes"], 798);
  EXPECT_EQ(r()["not_votes"], 2);
  EXPECT_EQ(r()["clusters"], 50);
  EXPECT_DOUBLE_EQ(rate(r(), "openai", "gpt-5_5-high"), 43.0 / 50);
  EXPECT_DOUBLE_EQ(rate(r(), "anthropic", "gpt-5_5-high"), 39.0 / 50);
  EXPECT_DOUBLE_EQ(rate(r(), "xai", "gpt-5_5-high"), 33.0 / 49);
  EXPECT_DOUBLE_EQ(rate(r(), "google", "gpt-5_5-high"), 32.0 / 50);
  EXPECT_DOUBLE_EQ(rate(r(), "openai", "opus-4_8-high"), 0.94);
  EXPECT_DOUBLE_EQ(rate(r(), "xai", "gemini-3_5-flash"), 0.56);
  // Grok judged by xai: 36/49 = 0.7347 from the data; the paper prints 0.74 (Tables 4
  // and 5), apparently rounded twice (0.7347 -> 0.735 -> 0.74). Pinned to the data.
  EXPECT_DOUBLE_EQ(rate(r(), "xai", "grok-4_3"), 36.0 / 49);
  // "all subjects" row of Table 4, 0.84 / 0.81 / 0.72 / 0.76, printed from 168/200,
  // 161/200 = 0.805, 142/198 and 151/200 = 0.755 (half-up rounding).
  EXPECT_DOUBLE_EQ(rate(r(), "openai", "all"), 168.0 / 200);
  EXPECT_DOUBLE_EQ(rate(r(), "anthropic", "all"), 161.0 / 200);
  EXPECT_DOUBLE_EQ(rate(r(), "xai", "all"), 142.0 / 198);
  EXPECT_DOUBLE_EQ(rate(r(), "google", "all"), 151.0 / 200);
  EXPECT_NEAR(rate(r(), "xai", "all"), 0.72, 0.005);
}

TEST_F(JudgePanelReleased, FleissKappaOver198CompleteItems) {
  EXPECT_EQ(r()["fleiss"]["complete_units"], 198);
  EXPECT_NEAR(r()["fleiss"]["kappa"].get<double>(), 0.649, 5e-4);
  EXPECT_NEAR(r()["fleiss"]["mean_pairwise_agreement"].get<double>(), 0.88, 0.005);
  EXPECT_LT(r()["fleiss"]["low"].get<double>(), 0.649);
  EXPECT_GT(r()["fleiss"]["high"].get<double>(), 0.649);
}

// Table 5: raw own-minus-peer gap and DiD, to the paper's 2 decimals.
TEST_F(JudgePanelReleased, Table5RawGapAndDid) {
  struct Want {
    const char* subject;
    double raw, did;
  } want[] = {{"opus-4_8-high", 0.02, -0.02}, {"gpt-5_5-high", 0.16, 0.11}, {"grok-4_3", -0.05, 0.04},
              {"gemini-3_5-flash", 0.05, 0.11}};
  for (const auto& w : want) {
    const json* row = find_row(r()["same_provider_effect"], "subject", w.subject);
    ASSERT_NE(row, nullptr) << w.subject;
    EXPECT_NEAR((*row)["raw_gap"].get<double>(), w.raw, 0.005) << w.subject;
    EXPECT_NEAR((*row)["did"].get<double>(), w.did, 0.005) << w.subject;
  }
}

// statsmodels 0.13 Logit on the same design (tests/reference/gen_judges.py output).
constexpr double kStatsmodelsShared = 0.35039901989318734;
constexpr double kStatsmodelsSharedSe = 0.21889957880629882;
constexpr double kStatsmodelsGpt = 0.5150571957679914;
constexpr double kStatsmodelsOthers = 0.2973932226615296;
constexpr double kStatsmodelsPerSubjectGemini = 0.5863134099954086;
constexpr double kStatsmodelsPerSubjectOpus = -0.03928526229077291;

TEST_F(JudgePanelReleased, LogisticMatchesStatsmodels) {
  EXPECT_NEAR(term(r(), "shared", "same_provider"), kStatsmodelsShared, 1e-6);
  EXPECT_NEAR(term(r(), "shared", "same_provider", "se"), kStatsmodelsSharedSe, 1e-6);
  // Default focus subject = largest raw gap = GPT-5.5, as in the paper.
  EXPECT_NEAR(term(r(), "focus", "same_provider[gpt-5_5-high]"), kStatsmodelsGpt, 1e-6);
  EXPECT_NEAR(term(r(), "focus", "same_provider[others]"), kStatsmodelsOthers, 1e-6);
  EXPECT_NEAR(term(r(), "per_subject", "same_provider[gemini-3_5-flash]"), kStatsmodelsPerSubjectGemini, 1e-6);
  EXPECT_NEAR(term(r(), "per_subject", "same_provider[opus-4_8-high]"), kStatsmodelsPerSubjectOpus, 1e-6);
  // Published to 3 decimals: +0.350 shared, +0.515 GPT-5.5, +0.297 others.
  EXPECT_NEAR(term(r(), "shared", "same_provider"), 0.350, 5e-4);
  EXPECT_NEAR(term(r(), "focus", "same_provider[gpt-5_5-high]"), 0.515, 5e-4);
  EXPECT_NEAR(term(r(), "focus", "same_provider[others]"), 0.297, 5e-4);
  // The clustered CI brackets the estimate; paper (5000 reps, its own RNG): [+0.16, +0.56].
  EXPECT_LT(term(r(), "shared", "same_provider", "low"), 0.35);
  EXPECT_GT(term(r(), "shared", "same_provider", "high"), 0.35);
  EXPECT_GT(term(r(), "shared", "same_provider", "low"), 0.0);
}

TEST_F(JudgePanelReleased, ExactPermutationOver24Bijections) {
  EXPECT_EQ(r()["permutation"]["total"], 24);
  EXPECT_EQ(r()["permutation"]["at_least"], 1);
  EXPECT_DOUBLE_EQ(r()["permutation"]["p"].get<double>(), 1.0 / 24);
}

// Table 6 leave-own-provider-out 0.080 / 0.302 / 0.213 / 0.333 (3-decimal tolerance).
TEST_F(JudgePanelReleased, Table6LeaveOwnProviderOut) {
  struct Want {
    const char* subject;
    double lopo, own;
  } want[] = {{"opus-4_8-high", 0.080, 0.06}, {"gpt-5_5-high", 0.302, 0.14}, {"grok-4_3", 0.213, 0.265},
              {"gemini-3_5-flash", 0.333, 0.28}};
  for (const auto& w : want) {
    const json* row = find_row(r()["leave_own_provider_out"], "subject", w.subject);
    ASSERT_NE(row, nullptr);
    EXPECT_NEAR((*row)["leave_own_provider_out_inappropriate"].get<double>(), w.lopo, 5e-4) << w.subject;
    EXPECT_NEAR((*row)["own_judge_inappropriate"].get<double>(), w.own, 0.005) << w.subject;
  }
}

TEST_F(JudgePanelReleased, LeaveOneJudgeOutRankingStable) {
  const auto& l = r()["leave_one_judge_out"];
  EXPECT_EQ(l["full_ranking"], json({"opus-4_8-high", "grok-4_3", "gpt-5_5-high", "gemini-3_5-flash"}));
  EXPECT_TRUE(l["same_ranking_under_every_deletion"].get<bool>());
  EXPECT_EQ(l["rows"].size(), 4u);
  // Paper: Opus 0.07-0.08, Gemini 0.28-0.33 under every deletion.
  for (const auto& row : l["rows"]) {
    EXPECT_NEAR(row["inappropriate"]["opus-4_8-high"].get<double>(), 0.075, 0.0101);
    EXPECT_GE(row["inappropriate"]["gemini-3_5-flash"].get<double>(), 0.275);
  }
}

TEST_F(JudgePanelReleased, RankProbability) {
  // Paper (5000 reps): Opus best in 100%, Gemini worst in 87%.
  const json* opus = find_row(r()["rank_probability"]["rows"], "subject", "opus-4_8-high");
  const json* gem = find_row(r()["rank_probability"]["rows"], "subject", "gemini-3_5-flash");
  ASSERT_TRUE(opus && gem);
  EXPECT_GE((*opus)["p_first"].get<double>(), 0.99);
  EXPECT_NEAR((*gem)["p_last"].get<double>(), 0.87, 0.08);
  EXPECT_EQ(r()["bootstrap"]["clusters"], 50);
}

TEST(JudgePanel, BootstrapReproducibleFromSeed) {
  const json a = run(20, 11), b = run(20, 11), c = run(20, 12);
  EXPECT_EQ(a["logistic"], b["logistic"]);
  EXPECT_EQ(a["fleiss"], b["fleiss"]);
  EXPECT_NE(a["logistic"], c["logistic"]);
}

TEST(JudgePanel, UnknownFocusSubjectIsRejected) {
  auto panel = build_panel(released_judgments());
  ASSERT_TRUE(panel.ok());
  JudgePanelOptions o;
  o.bootstrap = {10, 1, 0.95};
  o.focus_subject = "gpt-5_5-hihg";
  auto r = judge_panel_analysis(*panel, o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("gpt-5_5-high"), std::string::npos) << r.status().message();
}

// Parse errors and API failures are never votes.
TEST(JudgePanel, NonOkJudgmentsAreNotVotes) {
  std::vector<JudgmentRow> rows;
  for (int i = 0; i < 4; ++i)
    for (const char* j : {"a", "b"}) {
      JudgmentRow r;
      r.subject = "s";
      r.subject_provider = "p";
      r.item = std::to_string(i);
      r.cluster = r.item;
      r.judge = j;
      r.judge_provider = j;
      r.label = i % 2;
      rows.push_back(r);
    }
  rows[0].status = "parse_error";
  rows[1].status = "api_error";
  rows[1].label.reset();
  auto p = build_panel(rows);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->votes.size(), 6u);
  EXPECT_EQ(p->not_votes, 2);
  rows[2].subject_provider = "q";  // subject "s" now has two providers
  EXPECT_FALSE(build_panel(rows).ok());
}

TEST(JudgePanel, NoVotesIsAnError) { EXPECT_FALSE(build_panel({}).ok()); }

// The report's name for the rate follows the criterion (label 1 = met).
TEST(JudgePanel, RateLabelFollowsTheCriterion) {
  EXPECT_EQ(judge_rate_label(""), "appropriate-response rate");
  EXPECT_EQ(judge_rate_label(default_judge_criterion()), "appropriate-response rate");
  EXPECT_EQ(judge_rate_label(xstest_judge_criterion()), "full-compliance rate");
  EXPECT_EQ(judge_rate_label("The answer cites a guideline."), "criterion-met rate");
}

}  // namespace
}  // namespace nf
