// Logistic regression: hand-checked fits, separation detection, golden vectors from
// statsmodels Logit (tests/reference/gen_models.py), and the same-provider model of
// seed 004 §2.6 on the released votes (read in place from shared/data).
#include "common/test_data.h"
#include "stats/logistic.h"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace nf::stats {
namespace {

std::string data_dir() { return testing::data_dir() + "/missing-info-judges"; }

TEST(Logit, SaturatedTwoGroupModelGivesLogOdds) {
  // Group a: 3 of 4 ones; group b: 1 of 4. Intercept = logit(3/4) = log 3;
  // g[T.b] = logit(1/4) - logit(3/4) = -2 log 3; SE^2 = sum 1/(n p (1-p)) per group.
  ModelFrame f;
  f.response = {1, 1, 1, 0, 1, 0, 0, 0};
  f.factors = {{"g", {"a", "a", "a", "a", "b", "b", "b", "b"}}};
  auto fit = logit(f);
  ASSERT_TRUE(fit.ok()) << fit.status().to_string();
  EXPECT_NEAR(fit->coefs[0].coef, std::log(3.0), 1e-10);
  EXPECT_NEAR(fit->coefs[1].coef, -2.0 * std::log(3.0), 1e-10);
  const double v = 1.0 / (4 * 0.75 * 0.25);
  EXPECT_NEAR(fit->coefs[0].se, std::sqrt(v), 1e-10);
  EXPECT_NEAR(fit->coefs[1].se, std::sqrt(2 * v), 1e-10);
  EXPECT_NEAR(fit->coefs[1].p, std::erfc(std::abs(fit->coefs[1].z) / std::sqrt(2.0)), 1e-15);
  EXPECT_EQ(fit->coef("g[T.b]")->name, "g[T.b]");
  auto missing = fit->coef("g[T.c]");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

TEST(Logit, QuasiSeparationByFactorLevelNamesTheLevel) {
  ModelFrame f;
  f.response = {1, 0, 1, 0, 1, 1, 1};
  f.factors = {{"judge", {"a", "a", "b", "b", "xai", "xai", "xai"}}};
  auto fit = logit(f);
  ASSERT_FALSE(fit.ok());
  EXPECT_EQ(fit.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(fit.status().message().find("judge = xai has y = 1"), std::string::npos) << fit.status().message();
  EXPECT_NE(fit.status().message().find("judge[T.xai]"), std::string::npos);
  // The reference level: the intercept diverges.
  f.response = {0, 0, 1, 0, 1, 0, 1};
  fit = logit(f);
  EXPECT_NE(fit.status().message().find("judge = a has y = 0"), std::string::npos) << fit.status().message();
}

TEST(Logit, CompleteSeparationByNumericColumnIsAnErrorNotAHugeCoefficient) {
  ModelFrame f;
  f.response = {0, 0, 0, 1, 1, 1};
  f.numeric = {{"x", {-3, -2, -1, 1, 2, 3}}};
  auto fit = logit(f);
  ASSERT_FALSE(fit.ok());
  EXPECT_EQ(fit.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(fit.status().message().find("separation"), std::string::npos);
  EXPECT_NE(fit.status().message().find("coefficient of x"), std::string::npos) << fit.status().message();
}

TEST(Logit, RejectsBadInput) {
  ModelFrame f;
  f.response = {0, 1, 2};
  f.numeric = {{"x", {1, 2, 3}}};
  EXPECT_EQ(logit(f).status().code(), StatusCode::kInvalidArgument);
  f.response = {1, 1, 1};
  EXPECT_EQ(logit(f).status().code(), StatusCode::kFailedPrecondition);
  // Collinear columns: x2 = 2 x.
  f.response = {0, 1, 0, 1, 1, 0};
  f.numeric = {{"x", {1, 2, 3, 4, 5, 6}}, {"x2", {2, 4, 6, 8, 10, 12}}};
  auto r = logit(f);
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("collinear"), std::string::npos);
}

TEST(Logit, GoldenStatsmodelsLogit) {
  std::ifstream in(std::string(NF_SOURCE_DIR) + "/tests/reference/models_logit.json");
  ASSERT_TRUE(in.good()) << "missing tests/reference/models_logit.json";
  const auto j = nlohmann::json::parse(in);
  ASSERT_GE(j["cases"].size(), 200u);
  for (const auto& c : j["cases"]) {
    ModelFrame f;
    for (const auto& v : c["y"]) f.response.push_back(v.get<double>());
    f.factors = {{"a", c["a"].get<std::vector<std::string>>()}, {"b", c["b"].get<std::vector<std::string>>()}};
    if (!c["x"].is_null()) f.numeric = {{"x", c["x"].get<std::vector<double>>()}};
    auto fit = logit(f);
    ASSERT_TRUE(fit.ok()) << fit.status().to_string();
    const auto names = c["names"].get<std::vector<std::string>>();
    ASSERT_EQ(fit->coefs.size(), names.size());
    for (size_t i = 0; i < names.size(); ++i) {
      EXPECT_EQ(fit->coefs[i].name, names[i]);
      EXPECT_NEAR(fit->coefs[i].coef, c["coef"][i].get<double>(), 1e-9);
      EXPECT_NEAR(fit->coefs[i].se, c["se"][i].get<double>(), 1e-9);
      EXPECT_NEAR(fit->coefs[i].z, c["z"][i].get<double>(), 1e-8);
      EXPECT_NEAR(fit->coefs[i].p, c["p"][i].get<double>(), 1e-9);
    }
    EXPECT_NEAR(fit->log_likelihood, c["llf"].get<double>(), 1e-9);
    // Documented exception: statsmodels fits the null model iteratively at its default
    // tolerance (llnull is off by up to ~1e-8); ours is the closed form n [p log p + (1-p) log(1-p)].
    EXPECT_NEAR(fit->null_log_likelihood, c["llnull"].get<double>(), 1e-7);
  }
}

// seed 004 §2.6: label ~ C(subject) + C(judge) + same_provider over every non-null vote;
// the released votes give a same-provider coefficient of +0.350.
TEST(Published, SameProviderCoefficientOnReleasedVotes) {
  std::ifstream in(data_dir() + "/votes.jsonl");
  ASSERT_TRUE(in.good()) << "missing " << data_dir() << "/votes.jsonl (set NOISEFLOOR_DATA)";
  const std::map<std::string, std::string> provider = {{"gpt-5_5-high", "openai"},
                                                       {"opus-4_8-high", "anthropic"},
                                                       {"grok-4_3", "xai"},
                                                       {"gemini-3_5-flash", "google"}};
  ModelFrame f;
  FactorColumn subject{"subject", {}};
  FactorColumn judge{"judge", {}};
  NumericColumn same{"same_provider", {}};
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto row = nlohmann::json::parse(line);
    const std::string s = row.at("subject_model").get<std::string>();
    ASSERT_TRUE(provider.count(s)) << s;
    for (const auto& [j, v] : row.at("votes").items()) {
      if (v.is_null()) continue;
      f.response.push_back(v.get<bool>() ? 1.0 : 0.0);
      subject.values.push_back(s);
      judge.values.push_back(j);
      same.values.push_back(provider.at(s) == j ? 1.0 : 0.0);
    }
  }
  f.factors = {subject, judge};
  f.numeric = {same};
  ASSERT_EQ(f.response.size(), 798u);
  auto fit = logit(f);
  ASSERT_TRUE(fit.ok()) << fit.status().to_string();
  auto sp = fit->coef("same_provider");
  ASSERT_TRUE(sp.ok());
  EXPECT_NEAR(sp->coef, 0.350, 5e-4);
  EXPECT_NEAR(sp->coef, 0.350399, 1e-5);  // statsmodels Logit on the same rows
  EXPECT_NEAR(sp->se, 0.218900, 1e-5);
}

}  // namespace
}  // namespace nf::stats
