// Agreement statistics against the golden vectors of tests/reference/gen_models.py
// (statsmodels 0.13 fleiss_kappa / cohens_kappa; documented numpy references for the
// unequal-rater Fleiss convention, Scott's pi, Gwet AC1 and Krippendorff alpha).
#include <fstream>
#include <optional>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "stats/agreement.h"

namespace nf::stats {
namespace {

constexpr double kTol = 1e-9;

nlohmann::json load(const std::string& name) {
  std::ifstream in(std::string(NF_SOURCE_DIR) + "/tests/reference/" + name);
  EXPECT_TRUE(in.good()) << "missing golden file " << name;
  if (!in.good()) return nlohmann::json::object({{"cases", nlohmann::json::array()}});
  return nlohmann::json::parse(in);
}

std::vector<std::optional<int64_t>> codes(const nlohmann::json& a) {
  std::vector<std::optional<int64_t>> out;
  for (const auto& v : a) out.push_back(v.is_null() ? std::optional<int64_t>() : v.get<int64_t>());
  return out;
}

TEST(AgreementGolden, FleissKappa) {
  const auto j = load("models_fleiss.json");
  ASSERT_GE(j["cases"].size(), 300u);
  int unequal = 0;
  for (const auto& c : j["cases"]) {
    std::vector<int64_t> counts;
    for (const auto& row : c["counts"]) {
      for (const auto& v : row) counts.push_back(v.get<int64_t>());
    }
    auto r = fleiss_kappa_counts(counts, c["k"].get<int64_t>());
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    EXPECT_NEAR(r->estimate, c["kappa"].get<double>(), kTol);
    unequal += c["equal"].get<bool>() ? 0 : 1;
  }
  EXPECT_GE(unequal, 50);
}

TEST(AgreementGolden, TwoRaterCoefficients) {
  const auto j = load("models_pairs.json");
  ASSERT_GE(j["cases"].size(), 300u);
  for (const auto& c : j["cases"]) {
    const auto a = codes(c["a"]);
    const auto b = codes(c["b"]);
    auto ck = cohen_kappa(a, b);
    auto sp = scott_pi(a, b);
    auto ac = gwet_ac1(a, b, c["k"].get<int64_t>());
    auto ra = raw_agreement(a, b);
    ASSERT_TRUE(ck.ok() && sp.ok() && ac.ok() && ra.ok());
    EXPECT_NEAR(ck->estimate, c["cohen"].get<double>(), kTol);
    EXPECT_NEAR(sp->estimate, c["scott"].get<double>(), kTol);
    EXPECT_NEAR(ac->estimate, c["gwet"].get<double>(), kTol);
    EXPECT_NEAR(ra->estimate, c["raw"].get<double>(), kTol);
  }
}

TEST(AgreementGolden, KrippendorffAlphaNominal) {
  const auto j = load("models_krippendorff.json");
  ASSERT_GE(j["cases"].size(), 300u);
  for (const auto& c : j["cases"]) {
    RatingTable t;
    for (const auto& row : c["ratings"]) t.push_back(codes(row));
    auto r = krippendorff_alpha_nominal(t);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    EXPECT_NEAR(r->estimate, c["alpha"].get<double>(), kTol);
  }
}

}  // namespace
}  // namespace nf::stats
