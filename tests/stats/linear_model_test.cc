// Design matrices, OLS and Type-II ANOVA: hand-checked cases, input checks, and the
// golden vectors of tests/reference/gen_models.py (statsmodels anova_lm(typ=2)).
#include "stats/linear_model.h"

#include <algorithm>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace nf::stats {
namespace {

TEST(Design, TreatmentCodingWithSortedLevelsAndPatsyNames) {
  ModelFrame f;
  f.response = {1, 2, 3, 4, 5, 6};
  f.factors = {{"a", {"z", "y", "x", "x", "y", "z"}}, {"b", {"u", "v", "u", "v", "u", "v"}}};
  f.interactions = {{"a", "b"}};
  auto d = build_design(f);
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  const std::vector<std::string> want = {"Intercept", "a[T.y]", "a[T.z]", "b[T.v]", "a[T.y]:b[T.v]", "a[T.z]:b[T.v]"};
  EXPECT_EQ(d->columns, want);
  EXPECT_EQ(d->x(0, 2), 1.0);  // row 0 is a = z
  EXPECT_EQ(d->x(2, 1) + d->x(2, 2), 0.0);  // row 2 is the reference level x
  EXPECT_EQ(d->x(5, 5), 1.0);  // z:v
  EXPECT_EQ(d->terms[2].name, "a:b");
}

TEST(Design, RejectsBadFrames) {
  ModelFrame f;
  EXPECT_EQ(build_design(f).status().code(), StatusCode::kInvalidArgument);
  f.response = {1, 2, 3};
  f.factors = {{"a", {"x", "x", "x"}}};
  EXPECT_NE(build_design(f).status().message().find("single level"), std::string::npos);
  f.factors = {{"a", {"x", "y"}}};
  EXPECT_NE(build_design(f).status().message().find("'a' has 2 rows"), std::string::npos);
  f.factors = {{"a", {"x", "y", "x"}}};
  f.interactions = {{"a", "q"}};
  EXPECT_NE(build_design(f).status().message().find("unknown column 'q'"), std::string::npos);
  f.interactions = {};
  f.numeric = {{"a", {1, 2, 3}}};
  EXPECT_NE(build_design(f).status().message().find("twice"), std::string::npos);
}

TEST(Ols, RecoversExactLine) {
  Eigen::MatrixXd x(4, 2);
  x << 1, 0, 1, 1, 1, 2, 1, 3;
  Eigen::VectorXd y(4);
  y << 1, 3, 5, 7;
  auto fit = ols(x, y);
  ASSERT_TRUE(fit.ok());
  EXPECT_NEAR(fit->coef(0), 1.0, 1e-12);
  EXPECT_NEAR(fit->coef(1), 2.0, 1e-12);
  EXPECT_NEAR(fit->rss, 0.0, 1e-20);
  EXPECT_EQ(fit->df_resid, 2);
}

TEST(Anova, BalancedOneWayMatchesHandComputation) {
  // Groups a: 1,2,3 (mean 2); b: 4,5,6 (mean 5). SS_between = 2 * 3 * 1.5^2 = 13.5,
  // SS_within = 4, SS_total = 17.5; MSE = 1; eta^2 = 13.5/17.5; omega^2 = 12.5/18.5.
  ModelFrame f;
  f.response = {1, 2, 3, 4, 5, 6};
  f.factors = {{"g", {"a", "a", "a", "b", "b", "b"}}};
  auto t = anova_type2(f);
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_NEAR(t->rows[0].sum_sq, 13.5, 1e-12);
  EXPECT_NEAR(t->rows[0].f, 13.5, 1e-12);
  EXPECT_NEAR(t->rows[0].eta_sq, 13.5 / 17.5, 1e-12);
  EXPECT_NEAR(t->rows[0].omega_sq, 12.5 / 18.5, 1e-12);
  EXPECT_NEAR(t->rows[0].p, 0.021311641128756, 1e-12);  // scipy.stats.f.sf(13.5, 1, 4)
}

TEST(Anova, DegenerateInputs) {
  ModelFrame f;
  f.response = {1, 1, 1, 1};
  f.factors = {{"g", {"a", "a", "b", "b"}}};
  EXPECT_EQ(anova_type2(f).status().code(), StatusCode::kUndefined);
  f.response = {1, 2};
  f.factors = {{"g", {"a", "b"}}};
  EXPECT_EQ(anova_type2(f).status().code(), StatusCode::kFailedPrecondition);
  f.response = {1, std::nan(""), 2, 3};
  f.factors = {{"g", {"a", "a", "b", "b"}}};
  EXPECT_EQ(anova_type2(f).status().code(), StatusCode::kInvalidArgument);
}

TEST(Anova, GoldenStatsmodelsTypeII) {
  std::ifstream in(std::string(NF_SOURCE_DIR) + "/tests/reference/models_anova.json");
  ASSERT_TRUE(in.good()) << "missing tests/reference/models_anova.json";
  const auto j = nlohmann::json::parse(in);
  ASSERT_GE(j["cases"].size(), 300u);
  for (const auto& c : j["cases"]) {
    ModelFrame f;
    f.response = c["y"].get<std::vector<double>>();
    f.factors = {{"a", c["a"].get<std::vector<std::string>>()}, {"b", c["b"].get<std::vector<std::string>>()}};
    if (!c["x"].is_null()) f.numeric = {{"x", c["x"].get<std::vector<double>>()}};
    if (c["interaction"].get<bool>()) f.interactions = {{"a", "b"}};
    auto t = anova_type2(f);
    ASSERT_TRUE(t.ok()) << t.status().to_string();
    EXPECT_NEAR(t->rss, c["rss"].get<double>(), 1e-9);
    EXPECT_EQ(t->df_resid, c["df_resid"].get<int64_t>());
    EXPECT_NEAR(t->ss_total, c["ss_total"].get<double>(), 1e-9);
    ASSERT_EQ(t->rows.size(), c["terms"].size());
    for (const auto& want : c["terms"]) {  // statsmodels orders terms differently: match by name
      const auto it = std::find_if(t->rows.begin(), t->rows.end(),
                                   [&](const AnovaRow& r) { return r.term == want["term"].get<std::string>(); });
      ASSERT_NE(it, t->rows.end()) << want["term"];
      const AnovaRow& got = *it;
      EXPECT_EQ(got.df, want["df"].get<int64_t>());
      EXPECT_NEAR(got.sum_sq, want["sum_sq"].get<double>(), 1e-9);
      EXPECT_NEAR(got.f, want["f"].get<double>(), 1e-9 * std::max(1.0, std::abs(got.f)));
      EXPECT_NEAR(got.p, want["p"].get<double>(), 1e-9);
    }
  }
}

}  // namespace
}  // namespace nf::stats
