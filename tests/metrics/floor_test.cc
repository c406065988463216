#include "metrics/floor.h"

#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include "common/test_data.h"
#include "metrics/mcq_robustness.h"
#include "util/rng.h"
#include "util/strings.h"

namespace nf {
namespace {

TEST(PairDisagreement, CountsUnorderedPairs) {
  EXPECT_EQ(pair_disagreement({1, 1, 1, 1}), (std::pair<int64_t, int64_t>{0, 6}));
  EXPECT_EQ(pair_disagreement({1, 0, 1, 0}), (std::pair<int64_t, int64_t>{4, 6}));
  EXPECT_EQ(pair_disagreement({0, 1, 2}), (std::pair<int64_t, int64_t>{3, 3}));  // categorical
  EXPECT_EQ(pair_disagreement({1}), (std::pair<int64_t, int64_t>{0, 0}));
}

// Brute force over ordered pairs of disjoint subsets, halved: an independent reference.
std::pair<int64_t, int64_t> brute_majority(const std::vector<double>& v, int k) {
  const int n = static_cast<int>(v.size());
  int64_t d = 0, c = 0;
  auto vote = [&](unsigned mask) -> std::optional<double> {
    std::map<double, int> cnt;
    for (int i = 0; i < n; ++i)
      if (mask >> i & 1u) ++cnt[v[i]];
    int best = -1;
    std::optional<double> val;
    bool tie = false;
    for (auto [x, m] : cnt) {
      if (m > best) { best = m; val = x; tie = false; }
      else if (m == best) tie = true;
    }
    if (tie) return std::nullopt;
    return val;
  };
  for (unsigned a = 0; a < (1u << n); ++a) {
    if (__builtin_popcount(a) != k) continue;
    for (unsigned b = 0; b < (1u << n); ++b) {
      if (__builtin_popcount(b) != k || (a & b)) continue;
      auto va = vote(a), vb = vote(b);
      if (!va || !vb) continue;
      ++c;
      if (*va != *vb) ++d;
    }
  }
  return {d / 2, c / 2};
}

TEST(MajorityVote, MatchesBruteForceOnRandomInputs) {
  Rng rng(11);
  for (int trial = 0; trial < 60; ++trial) {
    const int n = 2 + static_cast<int>(rng.uniform_int(9));
    const int cats = 2 + static_cast<int>(rng.uniform_int(2));
    std::vector<double> v(n);
    for (auto& x : v) x = static_cast<double>(rng.uniform_int(cats));
    for (int k = 1; 2 * k <= n; ++k) {
      auto got = majority_vote_disagreement(v, k);
      ASSERT_TRUE(got.ok());
      EXPECT_EQ(*got, brute_majority(v, k)) << "n=" << n << " k=" << k;
    }
  }
  EXPECT_FALSE(majority_vote_disagreement({1, 0}, 0).ok());
}

std::vector<OutcomeRow> fairmedagent_rows() {
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

const FloorRow& find(const std::vector<FloorRow>& rows, const std::string& outcome) {
  for (const auto& r : rows)
    if (r.outcome == outcome) return r;
  ADD_FAILURE() << "no row " << outcome;
  return rows.front();
}

// Published values (seed 000 §IV.A; data README): pooled 374/4320 and per outcome of 720.
TEST(FloorOnFairMedAgentModelA, ReproducesPublishedCounts) {
  const auto rows = fairmedagent_rows();
  ASSERT_EQ(rows.size(), 10u * 16u * 6u);
  auto fr = compute_floor(rows, 1, {200, 7, 0.95});
  ASSERT_TRUE(fr.ok()) << fr.status().to_string();
  EXPECT_EQ(find(*fr, "pooled").discordant, 374);
  EXPECT_EQ(find(*fr, "pooled").comparisons, 4320);
  const std::map<std::string, int64_t> expected = {{"admit", 102},     {"cs_caution", 129}, {"high_acuity", 55},
                                                   {"referral", 54},   {"any_opioid", 18},  {"escalate_icu", 16}};
  for (const auto& [o, d] : expected) {
    EXPECT_EQ(find(*fr, o).discordant, d) << o;
    EXPECT_EQ(find(*fr, o).comparisons, 720) << o;
  }
  // seed 000 §IV.A: 75 of 96 vignette-action cells unanimous.
  EXPECT_EQ(find(*fr, "pooled").unanimous_cells, 75);
  EXPECT_EQ(find(*fr, "pooled").clusters, 16);
  const auto& p = find(*fr, "pooled");
  EXPECT_LT(p.ci_low, p.rate);
  EXPECT_GT(p.ci_high, p.rate);
}

TEST(FloorOnFairMedAgentModelA, ReproducesPublishedMajorityVoteFloors) {
  const auto rows = fairmedagent_rows();
  auto r3 = compute_floor(rows, 3, {100, 7, 0.95});
  auto r5 = compute_floor(rows, 5, {100, 7, 0.95});
  ASSERT_TRUE(r3.ok() && r5.ok());
  EXPECT_EQ(find(*r3, "pooled").discordant, 12660);
  EXPECT_EQ(find(*r3, "pooled").comparisons, 201600);
  EXPECT_EQ(find(*r5, "pooled").discordant, 636);
  EXPECT_EQ(find(*r5, "pooled").comparisons, 12096);
}

TEST(Floor, BootstrapIsReproducibleFromTheSeed) {
  const auto rows = fairmedagent_rows();
  auto a = compute_floor(rows, 1, {300, 42, 0.95});
  auto b = compute_floor(rows, 1, {300, 42, 0.95});
  auto c = compute_floor(rows, 1, {300, 43, 0.95});
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(find(*a, "pooled").ci_low, find(*b, "pooled").ci_low);
  EXPECT_EQ(find(*a, "pooled").ci_high, find(*b, "pooled").ci_high);
  EXPECT_NE(find(*a, "pooled").ci_low, find(*c, "pooled").ci_low);
}

TEST(McqRobustness, PairsNoneAndShuffleOnTheSameItems) {
  std::vector<OutcomeRow> rows;
  // 10 items: none correct on 0..7, shuffle correct on 2..9 -> b = 2 (items 0,1), c = 2 (items 8,9)
  for (int i = 0; i < 10; ++i) {
    const std::string item = "q" + std::to_string(i);
    rows.push_back({"s", "default", "none", item, item, 0, "correct", i < 8 ? 1.0 : 0.0, ""});
    rows.push_back({"s", "default", "shuffle", item, item, 0, "correct", i >= 2 ? 1.0 : 0.0, ""});
    rows.push_back({"s", "default", "remove_answer", item, item, 0, "correct", i < 3 ? 1.0 : 0.0, ""});
  }
  auto mr = compute_mcq_robustness(rows);
  ASSERT_TRUE(mr.ok());
  std::map<std::string, McqRobustnessRow> by;
  for (const auto& r : *mr) by[r.metric] = r;
  EXPECT_EQ(*by["accuracy_none"].x, 8);
  EXPECT_EQ(*by["shuffle_mcnemar"].b, 2);
  EXPECT_EQ(*by["shuffle_mcnemar"].c, 2);
  EXPECT_DOUBLE_EQ(*by["shuffle_mcnemar"].p_value, 1.0);
  EXPECT_EQ(*by["inappropriate_remove_answer"].x, 7);
  EXPECT_EQ(*by["inappropriate_remove_answer"].n, 10);
  EXPECT_EQ(by.count("inappropriate_remove_context"), 0u);
}

// Tester s11 finding 9: with a failed draw in replicate 0, the per-condition accuracies came
// from other draws than the McNemar pairs beside them (and pointed the other way), and
// "replicate 0" was said of items whose draws came from replicate 1.
TEST(McqRobustness, TheTestsOwnPairsGiveItsAccuraciesAndMixedReplicatesAreSaid) {
  std::vector<OutcomeRow> rows;
  auto add = [&](const char* cond, const char* item, int rep, double v) {
    rows.push_back({"s", "default", cond, item, item, rep, "correct", v, ""});
  };
  add("none", "q1", 0, 1);
  add("none", "q2", 1, 1);  // q2's replicate 0 under none failed (no outcome row)
  add("none", "q3", 0, 0);
  add("shuffle", "q1", 0, 0);
  add("shuffle", "q2", 0, 0);
  add("shuffle", "q2", 1, 1);
  add("shuffle", "q3", 0, 1);
  auto mr = compute_mcq_robustness(rows);
  ASSERT_TRUE(mr.ok());
  std::map<std::string, McqRobustnessRow> by;
  for (const auto& r : *mr) by[r.metric] = r;
  // Per condition, the lowest replicate per item: none 2/3 (q2 from replicate 1), shuffle 1/3.
  EXPECT_EQ(*by["accuracy_none"].x, 2);
  EXPECT_EQ(*by["accuracy_shuffle"].x, 1);
  EXPECT_EQ(by["accuracy_none"].replicate_items, (std::map<int, int64_t>{{0, 2}, {1, 1}}));
  EXPECT_EQ(by["accuracy_shuffle"].replicate_items, (std::map<int, int64_t>{{0, 3}}));
  // The pairs: q1 (r0: 1, 0), q2 (r1, the lowest both answered: 1, 1), q3 (r0: 0, 1).
  const McqRobustnessRow& t = by["shuffle_mcnemar"];
  EXPECT_EQ(*t.n, 3);
  EXPECT_EQ(*t.b, 1);
  EXPECT_EQ(*t.c, 1);
  EXPECT_EQ(*t.none_correct, 2);
  EXPECT_EQ(*t.shuffle_correct, 2);
  EXPECT_EQ(t.replicate_items, (std::map<int, int64_t>{{0, 2}, {1, 1}}));
  const nlohmann::json j = mcq_robustness_row_to_json(t);
  EXPECT_EQ(j["replicate_note"], "0 for 2 items, 1 for 1 item");
  EXPECT_EQ(j["paired"]["none_correct"], 2);
  EXPECT_EQ(j["paired"]["shuffle_correct"], 2);
  EXPECT_EQ(mcq_robustness_row_to_json(by["accuracy_shuffle"])["replicate_note"], "0");
}

}  // namespace
}  // namespace nf
