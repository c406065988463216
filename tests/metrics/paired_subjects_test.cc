// paired_subjects against statsmodels golden vectors (tests/reference/gen_paired_subjects.py):
// per-subject means over all draws, per-pair discordant item majorities, exact McNemar, Holm.
#include "metrics/paired_subjects.h"

#include <gtest/gtest.h>

#include <cmath>

#include "common/golden.h"

namespace nf {
namespace {

TEST(PairedSubjects, MatchesStatsmodelsGoldenVectors) {
  const auto g = testing::load_golden("paired_subjects.json");
  ASSERT_EQ(g["cases"].size(), 5u);
  for (const auto& c : g["cases"]) {
    std::vector<OutcomeRow> rows;
    for (const auto& r : c["rows"]) {
      OutcomeRow o;
      o.subject = r["subject"];
      o.item = r["item"];
      o.cluster = o.item;
      o.config = "default";
      o.condition = "none";
      o.outcome = "correct";
      o.replicate = r["replicate"];
      o.value = r["value"].get<double>();
      rows.push_back(o);
    }
    auto res = compute_paired_subjects(rows);
    ASSERT_TRUE(res.ok()) << res.status().message();
    ASSERT_EQ(res->subjects.size(), c["subjects"].size()) << "case " << c["case"];
    for (size_t i = 0; i < res->subjects.size(); ++i) {
      const auto& e = c["subjects"][i];
      const auto& m = res->subjects[i];
      EXPECT_EQ(m.subject, e["subject"]);
      EXPECT_EQ(m.draws, e["draws"]);
      EXPECT_EQ(m.items, e["items"]);
      EXPECT_EQ(m.successes, e["successes"]);
      EXPECT_TRUE(m.binary);
      EXPECT_NEAR(m.mean, e["mean"].get<double>(), 1e-12);
    }
    ASSERT_EQ(res->pairs.size(), c["pairs"].size()) << "case " << c["case"];
    for (size_t i = 0; i < res->pairs.size(); ++i) {
      const auto& e = c["pairs"][i];
      const auto& p = res->pairs[i];
      SCOPED_TRACE(::testing::Message() << "case " << c["case"] << " pair " << p.a << "-" << p.b);
      EXPECT_EQ(p.a, e["a"]);
      EXPECT_EQ(p.b, e["b"]);
      EXPECT_EQ(p.items, e["items"]);
      EXPECT_NEAR(p.mean_a, e["mean_a"].get<double>(), 1e-12);
      EXPECT_NEAR(p.mean_b, e["mean_b"].get<double>(), 1e-12);
      EXPECT_NEAR(p.difference, e["mean_a"].get<double>() - e["mean_b"].get<double>(), 1e-12);
      EXPECT_EQ(p.b_count, e["b_count"]);
      EXPECT_EQ(p.c_count, e["c_count"]);
      EXPECT_EQ(p.undetermined, e["undetermined"]);
      EXPECT_NEAR(p.p_value, e["p_value"].get<double>(), 1e-12);
      EXPECT_NEAR(p.p_holm, e["p_holm"].get<double>(), 1e-12);
    }
  }
}

TEST(PairedSubjects, NumericScoresGiveMeansWithoutATest) {
  std::vector<OutcomeRow> rows;
  for (int r = 0; r < 2; ++r) {
    rows.push_back({"a", "default", "t", "i1", "i1", r, "score", 0.25, ""});
    rows.push_back({"b", "default", "t", "i1", "i1", r, "score", 1.0, ""});
  }
  auto res = compute_paired_subjects(rows);
  ASSERT_TRUE(res.ok());
  ASSERT_EQ(res->pairs.size(), 1u);
  EXPECT_FALSE(res->pairs[0].binary);
  EXPECT_TRUE(std::isnan(res->pairs[0].p_value));
  EXPECT_DOUBLE_EQ(res->pairs[0].difference, -0.75);
  const auto j = paired_subjects_to_json(*res);
  EXPECT_TRUE(j["rows"][0]["p_value"].is_null());
}

// Values near DBL_MAX: the means are representable, so they must not print inf / null
// (a plain sum overflowed). Reference: 1.7e308 / 2 + 1.15e308 / 2 = 1.425e308.
TEST(PairedSubjects, MeansNearTheLargestDoubleDoNotOverflow) {
  std::vector<OutcomeRow> rows;
  auto add = [&](const std::string& subject, const std::string& item, int rep, double v) {
    OutcomeRow o;
    o.subject = subject;
    o.item = item;
    o.cluster = item;
    o.config = "default";
    o.condition = "none";
    o.outcome = "score";
    o.replicate = rep;
    o.value = v;
    rows.push_back(o);
  };
  add("a", "q1", 0, 1.7e308);
  add("a", "q2", 0, 1.15e308);
  add("b", "q1", 0, -1.7e308);
  add("b", "q2", 0, -1.0e308);
  add("b", "q2", 1, -1.3e308);
  auto res = compute_paired_subjects(rows);
  ASSERT_TRUE(res.ok()) << res.status().message();
  ASSERT_EQ(res->subjects.size(), 2u);
  EXPECT_NEAR(res->subjects[0].mean / 1.425e308, 1.0, 1e-15);
  EXPECT_NEAR(res->subjects[1].mean / -1.3333333333333333e308, 1.0, 1e-15);  // -(1.7 + 1.0 + 1.3) / 3
  ASSERT_EQ(res->pairs.size(), 1u);
  EXPECT_NEAR(res->pairs[0].mean_a / 1.425e308, 1.0, 1e-15);
  EXPECT_NEAR(res->pairs[0].mean_b / -1.3333333333333333e308, 1.0, 1e-15);
  EXPECT_TRUE(std::isinf(res->pairs[0].difference));  // 2.76e308: really not representable
  const auto j = paired_subjects_to_json(*res);
  ASSERT_TRUE(j["subjects"][0]["mean"].is_number()) << j.dump();
  EXPECT_NEAR(j["subjects"][0]["mean"].get<double>() / 1.425e308, 1.0, 1e-15);
  ASSERT_TRUE(j["rows"][0]["mean_a"].is_number()) << j.dump();
  // Ordinary values keep the plain sum / n (bit-identical).
  std::vector<OutcomeRow> small = rows;
  for (auto& r : small) r.value = r.value > 0 ? 1.0 : 0.0;
  small[1].value = 0.0;
  auto s = compute_paired_subjects(small);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->subjects[0].mean, 0.5);
}

TEST(PairedSubjects, SubjectsWithoutCommonItemsAreNotCompared) {
  std::vector<OutcomeRow> rows{{"a", "default", "t", "i1", "i1", 0, "c", 1, ""},
                               {"b", "default", "t", "i2", "i2", 0, "c", 0, ""}};
  auto res = compute_paired_subjects(rows);
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res->subjects.size(), 2u);
  EXPECT_TRUE(res->pairs.empty());
}

}  // namespace
}  // namespace nf
