// Issue 13 items 4-6 against tests/reference/gen_issue13.py: weighted kappa on a declared
// scale (statsmodels cohens_kappa on the full table), McNemar mid-p (scipy binom), Fleiss
// kappa (statsmodels fleiss_kappa) and Gwet AC1 (Gwet 2014 numpy formula) over several
// raters with a declared category set. Tolerance 1e-9.
#include <optional>
#include <vector>

#include <gtest/gtest.h>

#include "common/golden.h"
#include "stats/agreement_scales.h"
#include "stats/paired.h"

namespace nf::stats {
namespace {

constexpr double kTol = 1e-9;

std::vector<std::optional<int64_t>> codes(const nlohmann::json& a) {
  std::vector<std::optional<int64_t>> out;
  for (const auto& v : a) out.push_back(v.get<int64_t>());
  return out;
}

// Items x raters table from an items x categories count table.
RatingTable table_of(const nlohmann::json& counts) {
  RatingTable t;
  for (const auto& row : counts) {
    std::vector<std::optional<int64_t>> item;
    for (size_t k = 0; k < row.size(); ++k)
      for (int64_t r = 0; r < row[k].get<int64_t>(); ++r) item.push_back(static_cast<int64_t>(k));
    t.push_back(item);
  }
  return t;
}

TEST(AgreementScalesGolden, IssueValuesWeightedKappa) {
  // Judge scores 1-5, nobody used 3 (issue 13 item 4).
  std::vector<std::optional<int64_t>> a, b;
  for (int v : {1, 2, 2, 4, 5, 5, 4, 2, 1, 5, 4, 2}) a.push_back(v - 1);
  for (int v : {1, 2, 4, 4, 5, 4, 5, 2, 2, 5, 4, 1}) b.push_back(v - 1);
  const std::vector<double> scale = {1, 2, 3, 4, 5};
  auto lin = weighted_kappa(a, b, scale, KappaWeights::kLinear);
  auto quad = weighted_kappa(a, b, scale, KappaWeights::kQuadratic);
  ASSERT_TRUE(lin.ok() && quad.ok());
  EXPECT_NEAR(lin->estimate, 0.697479, 5e-7);
  EXPECT_NEAR(quad->estimate, 0.850467, 5e-7);
  EXPECT_EQ(lin->categories, 5);
  // By index of the observed labels (1,2,4,5 -> 0..3) the weights would be wrong:
  std::vector<std::optional<int64_t>> ai, bi;
  for (const auto& v : a) ai.push_back(*v >= 3 ? *v - 1 : *v);
  for (const auto& v : b) bi.push_back(*v >= 3 ? *v - 1 : *v);
  auto by_value = weighted_kappa(ai, bi, {1, 2, 4, 5}, KappaWeights::kLinear);
  ASSERT_TRUE(by_value.ok());
  EXPECT_NEAR(by_value->estimate, lin->estimate, 1e-12);  // values, not positions, carry the weight
  auto by_index = weighted_kappa(ai, bi, {1, 2, 3, 4}, KappaWeights::kLinear);
  ASSERT_TRUE(by_index.ok());
  EXPECT_GT(std::abs(by_index->estimate - lin->estimate), 1e-3);
}

TEST(AgreementScalesGolden, WeightedKappaMatchesStatsmodels) {
  const auto j = testing::load_golden("issue13_scales.json");
  ASSERT_GE(j["weighted"].size(), 100u);
  for (const auto& c : j["weighted"]) {
    std::vector<double> scale = c["scale"].get<std::vector<double>>();
    const auto a = codes(c["a"]), b = codes(c["b"]);
    auto lin = weighted_kappa(a, b, scale, KappaWeights::kLinear);
    auto quad = weighted_kappa(a, b, scale, KappaWeights::kQuadratic);
    auto none = weighted_kappa(a, b, scale, KappaWeights::kNone);
    ASSERT_TRUE(lin.ok() && quad.ok() && none.ok()) << c.dump();
    EXPECT_NEAR(lin->estimate, c["linear"].get<double>(), kTol);
    EXPECT_NEAR(quad->estimate, c["quadratic"].get<double>(), kTol);
    EXPECT_NEAR(none->estimate, c["none"].get<double>(), kTol);
  }
}

TEST(AgreementScalesGolden, WeightedKappaErrors) {
  const std::vector<std::optional<int64_t>> a = {0, 1}, b = {1, 0};
  EXPECT_EQ(weighted_kappa(a, b, {1}, KappaWeights::kLinear).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(weighted_kappa(a, b, {2, 1}, KappaWeights::kLinear).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(weighted_kappa({0, 5}, b, {1, 2}, KappaWeights::kLinear).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(weighted_kappa({0, 0}, {0, 0}, {1, 2}, KappaWeights::kLinear).status().code(), StatusCode::kUndefined);
  EXPECT_EQ(weighted_kappa({std::nullopt}, {0}, {1, 2}, KappaWeights::kLinear).status().code(),
            StatusCode::kUndefined);
}

TEST(AgreementScalesGolden, McNemarMidP) {
  auto p = mcnemar_mid_p(3, 11);
  ASSERT_TRUE(p.ok());
  EXPECT_NEAR(*p, 0.03515625, 1e-12);
  EXPECT_NEAR(*mcnemar_exact(3, 11), 0.057373046875, 1e-12);
  EXPECT_EQ(*mcnemar_mid_p(5, 5), 1.0);  // half the point mass removed before the cap
  EXPECT_EQ(mcnemar_mid_p(-1, 2).status().code(), StatusCode::kInvalidArgument);
  const auto j = testing::load_golden("issue13_scales.json");
  ASSERT_GE(j["mid_p"].size(), 10u);
  for (const auto& c : j["mid_p"]) {
    auto v = mcnemar_mid_p(c["b"].get<int64_t>(), c["c"].get<int64_t>());
    ASSERT_TRUE(v.ok());
    EXPECT_NEAR(*v, c["mid_p"].get<double>(), kTol) << c.dump();
    EXPECT_LE(*v, *mcnemar_exact(c["b"].get<int64_t>(), c["c"].get<int64_t>()));
  }
}

TEST(AgreementScalesGolden, MultiRaterDeclaredCategories) {
  const auto j = testing::load_golden("issue13_scales.json");
  ASSERT_GE(j["multi"].size(), 100u);
  const auto& issue = j["multi"][0];  // 8 items x 5 runs, option D offered, never chosen
  auto f = fleiss_kappa_declared(table_of(issue["counts"]), 4);
  auto g = gwet_ac1_declared(table_of(issue["counts"]), 4);
  ASSERT_TRUE(f.ok() && g.ok());
  EXPECT_NEAR(f->estimate, 0.651163, 5e-7);
  EXPECT_NEAR(g->estimate, 0.713376, 5e-7);
  EXPECT_EQ(g->categories, 4);
  // q from the labels that occurred (3) would give another AC1:
  auto g3 = gwet_ac1_declared(table_of(issue["counts"]), 3);
  ASSERT_TRUE(g3.ok());
  EXPECT_GT(std::abs(g3->estimate - g->estimate), 1e-3);
  for (const auto& c : j["multi"]) {
    const auto q = c["q"].get<int64_t>();
    auto fk = fleiss_kappa_declared(table_of(c["counts"]), q);
    auto ac = gwet_ac1_declared(table_of(c["counts"]), q);
    ASSERT_TRUE(fk.ok() && ac.ok()) << c.dump();
    EXPECT_NEAR(fk->estimate, c["fleiss"].get<double>(), kTol);
    EXPECT_NEAR(ac->estimate, c["ac1"].get<double>(), kTol);
  }
}

TEST(AgreementScalesGolden, MultiRaterAc1WithTwoRatersIsTheTwoRaterAc1) {
  const RatingTable t = {{0, 0}, {0, 1}, {1, 1}, {2, 2}, {0, 0}, {2, 1}};
  std::vector<std::optional<int64_t>> a, b;
  for (const auto& r : t) {
    a.push_back(r[0]);
    b.push_back(r[1]);
  }
  EXPECT_NEAR(gwet_ac1_declared(t, 4)->estimate, gwet_ac1(a, b, 4)->estimate, 1e-12);
  EXPECT_EQ(gwet_ac1_declared({{0, 4}}, 4).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(fleiss_kappa_declared({{0, 4}}, 4).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace nf::stats
