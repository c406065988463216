// Benjamini-Hochberg and Holm against statsmodels multipletests (golden vectors).
#include "stats/multiplicity.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace nf::stats {
namespace {

std::vector<double> to_vec(const nlohmann::json& j) {
  std::vector<double> v;
  for (const auto& e : j) v.push_back(e.is_null() ? std::nan("") : e.get<double>());
  return v;
}

TEST(Multiplicity, MatchesStatsmodelsMultipletests) {
  std::ifstream in(std::string(NF_SOURCE_DIR) + "/tests/reference/core_multiplicity.json");
  ASSERT_TRUE(in.good());
  const auto g = nlohmann::json::parse(in);
  ASSERT_GE(g["rows"].size(), 300u);
  for (const auto& r : g["rows"]) {
    const auto p = to_vec(r["p"]);
    const auto want_bh = to_vec(r["bh"]);
    const auto want_holm = to_vec(r["holm"]);
    auto bh = benjamini_hochberg(p);
    auto ho = holm(p);
    ASSERT_TRUE(bh.ok() && ho.ok());
    ASSERT_EQ(bh->size(), p.size());
    for (size_t i = 0; i < p.size(); ++i) {
      if (std::isnan(want_bh[i])) {
        EXPECT_TRUE(std::isnan((*bh)[i]));
        EXPECT_TRUE(std::isnan((*ho)[i]));
        continue;
      }
      EXPECT_NEAR((*bh)[i], want_bh[i], 1e-9);
      EXPECT_NEAR((*ho)[i], want_holm[i], 1e-9);
    }
  }
}

TEST(Multiplicity, RejectsOutOfRange) {
  EXPECT_FALSE(benjamini_hochberg({0.1, 1.2}).ok());
  EXPECT_FALSE(holm({-0.1}).ok());
  auto empty = benjamini_hochberg({});
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

}  // namespace
}  // namespace nf::stats
