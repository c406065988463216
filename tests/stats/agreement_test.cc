// Agreement statistics: hand-checked cases, identities between related coefficients,
// input checks, and the published values of seed 004 (read in place from shared/data).
#include "common/test_data.h"
#include "stats/agreement.h"

#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace nf::stats {
namespace {

using Codes = std::vector<std::optional<int64_t>>;

std::string data_dir() { return testing::data_dir() + "/missing-info-judges"; }

// annotation id -> 0/1 label from labels_<rater>.csv.
std::map<std::string, int64_t> read_labels(const std::string& rater) {
  std::map<std::string, int64_t> out;
  std::ifstream in(data_dir() + "/labels_" + rater + ".csv");
  EXPECT_TRUE(in.good()) << "missing " << data_dir() << "/labels_" << rater << ".csv";
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    const auto comma = line.find(',');
    if (comma == std::string::npos) continue;
    out[line.substr(0, comma)] = std::stoll(line.substr(comma + 1));
  }
  return out;
}

// Two raters' labels aligned on annotation id (absent -> missing).
std::pair<Codes, Codes> aligned(const std::map<std::string, int64_t>& x, const std::map<std::string, int64_t>& y) {
  Codes a, b;
  for (const auto& [id, v] : x) {
    a.push_back(v);
    auto it = y.find(id);
    b.push_back(it == y.end() ? std::optional<int64_t>() : it->second);
  }
  return {a, b};
}

// Codes from a K x K contingency table (row = rater a, column = rater b).
std::pair<Codes, Codes> from_table(const std::vector<std::vector<int>>& t) {
  Codes a, b;
  for (size_t r = 0; r < t.size(); ++r) {
    for (size_t c = 0; c < t[r].size(); ++c) {
      for (int i = 0; i < t[r][c]; ++i) {
        a.push_back(static_cast<int64_t>(r));
        b.push_back(static_cast<int64_t>(c));
      }
    }
  }
  return {a, b};
}

TEST(FleissKappa, TextbookExampleMatchesHandComputation) {
  // 4 items x 3 raters, 2 categories. P_i = 1, 1/3, 1/3, 1 -> P_bar = 2/3.
  // p = (6/12, 6/12) -> P_e = 1/2; kappa = (2/3 - 1/2) / (1/2) = 1/3.
  auto r = fleiss_kappa_counts({3, 0, 2, 1, 1, 2, 0, 3}, 2);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_NEAR(r->estimate, 1.0 / 3.0, 1e-15);
  EXPECT_NEAR(r->observed, 2.0 / 3.0, 1e-15);
  EXPECT_NEAR(r->expected, 0.5, 1e-15);
  EXPECT_EQ(r->units, 4);
  EXPECT_EQ(r->ratings, 12);
}

TEST(FleissKappa, UnequalRatersFollowsDocumentedConvention) {
  // Item 0: 2 raters agree (P=1); item 1: 4 raters 2/2 (P = 4/12 = 1/3); item 2: 1 rating
  // (dropped). p over kept ratings: cat0 = 4/6, cat1 = 2/6 -> P_e = 20/36.
  auto r = fleiss_kappa_counts({2, 0, 2, 2, 0, 1}, 2);
  ASSERT_TRUE(r.ok());
  const double pbar = (1.0 + 1.0 / 3.0) / 2.0;
  const double pe = 20.0 / 36.0;
  EXPECT_NEAR(r->estimate, (pbar - pe) / (1.0 - pe), 1e-15);
  EXPECT_EQ(r->units, 2);
}

TEST(FleissKappa, RatingTableWithMissingEqualsCounts) {
  RatingTable t = {{0, 0, std::nullopt}, {0, 1, 1, 0}, {1}};
  auto a = fleiss_kappa(t);
  auto b = fleiss_kappa_counts({2, 0, 2, 2, 0, 1}, 2);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_DOUBLE_EQ(a->estimate, b->estimate);
}

TEST(FleissKappa, RejectsBadInput) {
  EXPECT_EQ(fleiss_kappa_counts({1, 2, 3}, 2).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(fleiss_kappa_counts({1, -1}, 2).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(fleiss_kappa_counts({1, 0, 0, 1}, 2).status().code(), StatusCode::kUndefined);  // no item with 2
  EXPECT_EQ(fleiss_kappa_counts({}, 0).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(fleiss_kappa({{0, -2}}).status().code(), StatusCode::kInvalidArgument);
}

TEST(Identity, FleissOnTwoRatersEqualsScottsPi) {
  auto [a, b] = from_table({{20, 5, 1}, {3, 11, 4}, {2, 2, 9}});
  RatingTable t;
  for (size_t i = 0; i < a.size(); ++i) t.push_back({a[i], b[i]});
  auto f = fleiss_kappa(t);
  auto s = scott_pi(a, b);
  auto c = cohen_kappa(a, b);
  ASSERT_TRUE(f.ok() && s.ok() && c.ok());
  EXPECT_NEAR(f->estimate, s->estimate, 1e-14);
  // Cohen uses each rater's own marginals, so it differs from Scott/Fleiss in general...
  EXPECT_GT(std::abs(c->estimate - s->estimate), 1e-4);
  // ...and equals it when the marginals coincide (symmetric table).
  auto [a2, b2] = from_table({{20, 4}, {4, 12}});
  EXPECT_NEAR(cohen_kappa(a2, b2)->estimate, scott_pi(a2, b2)->estimate, 1e-15);
}

TEST(Identity, KrippendorffApproachesScottsPiForLargeN) {
  // For two raters and no missing data, alpha = pi + (1 - pi) / (2n) (Krippendorff 2011).
  auto [a, b] = from_table({{40, 7}, {9, 44}});
  RatingTable t;
  for (size_t i = 0; i < a.size(); ++i) t.push_back({a[i], b[i]});
  const double pi = scott_pi(a, b)->estimate;
  const double n = static_cast<double>(a.size());
  EXPECT_NEAR(krippendorff_alpha_nominal(t)->estimate, pi + (1.0 - pi) / (2.0 * n), 1e-13);
}

TEST(CohenKappa, PerfectAndChanceAgreement) {
  auto [a, b] = from_table({{10, 0}, {0, 5}});
  EXPECT_DOUBLE_EQ(cohen_kappa(a, b)->estimate, 1.0);
  auto [c, d] = from_table({{4, 4}, {4, 4}});
  EXPECT_NEAR(cohen_kappa(c, d)->estimate, 0.0, 1e-15);
  EXPECT_NEAR(raw_agreement(c, d)->estimate, 0.5, 1e-15);
}

TEST(CohenKappa, DropsItemsMissingEitherRating) {
  Codes a = {0, 1, std::nullopt, 1, 0};
  Codes b = {0, 1, 1, std::nullopt, 1};
  auto r = cohen_kappa(a, b);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->units, 3);
  EXPECT_EQ(cohen_kappa({0, 1}, {1}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(cohen_kappa({std::nullopt}, {1}).status().code(), StatusCode::kUndefined);
  EXPECT_EQ(cohen_kappa({1, 1}, {1, 1}).status().code(), StatusCode::kUndefined);
}

TEST(GwetAc1, ScaleSizeMattersAndIsChecked) {
  auto [a, b] = from_table({{30, 6}, {4, 10}});
  auto k2 = gwet_ac1(a, b);
  auto k3 = gwet_ac1(a, b, 3);
  ASSERT_TRUE(k2.ok() && k3.ok());
  EXPECT_EQ(k2->categories, 2);
  EXPECT_NE(k2->estimate, k3->estimate);
  EXPECT_EQ(gwet_ac1({0, 2}, {0, 2}, 2).status().code(), StatusCode::kInvalidArgument);
  // All ratings in one category: kappa is undefined, AC1 = 1 (P_e = 0 on a binary scale).
  EXPECT_DOUBLE_EQ(gwet_ac1({1, 1, 1}, {1, 1, 1})->estimate, 1.0);
}

TEST(Krippendorff, HandComputedTwoRaterExample) {
  // Units: (0,0), (0,1), (1,1), (1,None). Pairable: 3 units, n = 6.
  // o00 = 2, o11 = 2, o01 = o10 = 1; n0 = n1 = 3. alpha = 1 - 5 * 2 / 18 = 4/9.
  RatingTable t = {{0, 0}, {0, 1}, {1, 1}, {1, std::nullopt}};
  auto r = krippendorff_alpha_nominal(t);
  ASSERT_TRUE(r.ok());
  EXPECT_NEAR(r->estimate, 4.0 / 9.0, 1e-15);
  EXPECT_EQ(r->units, 3);
  EXPECT_EQ(krippendorff_alpha_nominal({{1, 1}, {1, 1}}).status().code(), StatusCode::kUndefined);
  EXPECT_EQ(krippendorff_alpha_nominal({{1}, {0}}).status().code(), StatusCode::kUndefined);
}

// Published values of seed 004, read in place from shared/data (never copied).
TEST(Published, FleissKappaOverItemsAllFourJudgesRated) {
  std::ifstream in(data_dir() + "/votes.jsonl");
  ASSERT_TRUE(in.good()) << "missing " << data_dir() << "/votes.jsonl (set NOISEFLOOR_DATA)";
  const std::vector<std::string> judges = {"openai", "anthropic", "xai", "google"};
  RatingTable complete;
  RatingTable all;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto row = nlohmann::json::parse(line);
    std::vector<std::optional<int64_t>> votes;
    bool full = true;
    for (const auto& j : judges) {
      const auto& v = row.at("votes").at(j);
      if (v.is_null()) {
        votes.emplace_back();
        full = false;
      } else {
        votes.emplace_back(v.get<bool>() ? 1 : 0);
      }
    }
    all.push_back(votes);
    if (full) complete.push_back(votes);
  }
  ASSERT_EQ(all.size(), 200u);
  ASSERT_EQ(complete.size(), 198u);
  auto k = fleiss_kappa(complete);
  ASSERT_TRUE(k.ok());
  EXPECT_NEAR(k->estimate, 0.649, 5e-4);  // seed 004 §3.3 "Fleiss' kappa = 0.649"
  // The unequal-rater convention uses the 2 partial rows too and moves kappa a little.
  auto k_all = fleiss_kappa(all);
  ASSERT_TRUE(k_all.ok());
  EXPECT_EQ(k_all->units, 200);
  EXPECT_NEAR(k_all->estimate, k->estimate, 0.01);
}

TEST(Published, HumanRaterPairsOfTable7) {
  const auto r1 = read_labels("R1");
  const auto o = read_labels("O");
  const auto g = read_labels("G");
  ASSERT_EQ(r1.size(), 50u);
  struct Expect {
    const std::map<std::string, int64_t>* x;
    const std::map<std::string, int64_t>* y;
    double raw, kappa, ac1;
  };
  // seed 004 Table 7: raw, Cohen kappa, Gwet AC1 (two decimals).
  const Expect cases[] = {{&r1, &o, 0.94, 0.88, 0.88}, {&r1, &g, 0.80, 0.59, 0.62}, {&o, &g, 0.74, 0.47, 0.50}};
  for (const auto& c : cases) {
    auto [a, b] = aligned(*c.x, *c.y);
    EXPECT_NEAR(raw_agreement(a, b)->estimate, c.raw, 5e-3);
    EXPECT_NEAR(cohen_kappa(a, b)->estimate, c.kappa, 5e-3);
    EXPECT_NEAR(gwet_ac1(a, b, 2)->estimate, c.ac1, 5e-3);
  }
  RatingTable three;
  for (const auto& [id, v] : r1) three.push_back({v, o.at(id), g.at(id)});
  EXPECT_NEAR(fleiss_kappa(three)->estimate, 0.64, 5e-3);  // seed 004 §3.4 human Fleiss
}

TEST(AgreementBootstrap, ReproducibleAndBracketsTheEstimate) {
  RatingTable t;
  for (int i = 0; i < 60; ++i) t.push_back({i % 3 == 0 ? 1 : 0, i % 4 == 0 ? 1 : 0, i % 3 == 0 ? 1 : 0});
  auto a = agreement_bootstrap(t, fleiss_kappa, 500, 7);
  auto b = agreement_bootstrap(t, fleiss_kappa, 500, 7);
  auto c = agreement_bootstrap(t, fleiss_kappa, 500, 8);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok()) << a.status().to_string();
  EXPECT_EQ(a->low, b->low);
  EXPECT_EQ(a->high, b->high);
  EXPECT_NE(a->low, c->low);
  EXPECT_LT(a->low, a->estimate);
  EXPECT_GT(a->high, a->estimate);
  EXPECT_EQ(agreement_bootstrap(t, fleiss_kappa, 0, 1).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(agreement_bootstrap(t, fleiss_kappa, 10, 1, 0.95, {"x"}).status().code(), StatusCode::kInvalidArgument);
  // A cluster holding every row: each replicate is the full table, so the CI collapses.
  auto one = agreement_bootstrap(t, fleiss_kappa, 50, 1, 0.95, std::vector<std::string>(t.size(), "c"));
  ASSERT_TRUE(one.ok());
  EXPECT_DOUBLE_EQ(one->low, one->estimate);
  EXPECT_DOUBLE_EQ(one->high, one->estimate);
}

// seed 004 Table 7: R1-O Cohen kappa 0.88 [0.71, 1.00] with a prompt-clustered bootstrap
// (33 prompts behind the 50 items, prompt ids from key.json). Our stream differs from the
// authors', so the bounds agree only to Monte Carlo error (+-0.04 at 4,000 replicates).
TEST(Published, PromptClusteredBootstrapOfTable7) {
  std::ifstream in(data_dir() + "/key.json");
  ASSERT_TRUE(in.good()) << "missing " << data_dir() << "/key.json";
  const auto key = nlohmann::json::parse(in);
  const auto r1 = read_labels("R1");
  const auto o = read_labels("O");
  RatingTable t;
  std::vector<std::string> clusters;
  for (const auto& [id, v] : r1) {
    t.push_back({v, o.at(id)});
    clusters.push_back(key.at(id).at("prompt_id").get<std::string>());
  }
  auto cohen = [](const RatingTable& rt) {
    std::vector<std::optional<int64_t>> a, b;
    for (const auto& row : rt) {
      a.push_back(row[0]);
      b.push_back(row[1]);
    }
    return cohen_kappa(a, b);
  };
  auto ci = agreement_bootstrap(t, cohen, 4000, 20260629, 0.95, clusters);
  ASSERT_TRUE(ci.ok()) << ci.status().to_string();
  EXPECT_NEAR(ci->estimate, 0.88, 5e-3);
  EXPECT_NEAR(ci->low, 0.71, 0.04);
  EXPECT_NEAR(ci->high, 1.00, 0.04);
}

}  // namespace
}  // namespace nf::stats
