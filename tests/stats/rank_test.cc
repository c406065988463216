// Kendall tau-b and Spearman rho against scipy 1.10 (golden vectors), and undefined input.
#include "stats/rank.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace nf::stats {
namespace {

TEST(Rank, MatchesScipyKendallAndSpearman) {
  std::ifstream in(std::string(NF_SOURCE_DIR) + "/tests/reference/core_rank.json");
  ASSERT_TRUE(in.good());
  const auto g = nlohmann::json::parse(in);
  ASSERT_GE(g["rows"].size(), 300u);
  for (const auto& r : g["rows"]) {
    const auto x = r["x"].get<std::vector<double>>();
    const auto y = r["y"].get<std::vector<double>>();
    auto k = kendall_tau_b(x, y);
    auto s = spearman(x, y);
    ASSERT_TRUE(k.ok()) << k.status().to_string();
    ASSERT_TRUE(s.ok()) << s.status().to_string();
    EXPECT_NEAR(k->estimate, r["kendall"][0].get<double>(), 1e-9);
    EXPECT_NEAR(k->p_value, r["kendall"][1].get<double>(), 1e-9) << "n=" << x.size();
    EXPECT_NEAR(s->estimate, r["spearman"][0].get<double>(), 1e-9);
    EXPECT_NEAR(s->p_value, r["spearman"][1].get<double>(), 1e-9) << "n=" << x.size();
  }
}

TEST(Rank, AverageRanksWithTies) {
  const auto r = average_ranks({10, 20, 10, 30, 20, 20});
  const std::vector<double> want = {1.5, 4, 1.5, 6, 4, 4};
  EXPECT_EQ(r, want);
}

TEST(Rank, ConstantInputIsUndefined) {
  auto k = kendall_tau_b({1, 1, 1, 1}, {1, 2, 3, 4});
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.status().code(), StatusCode::kUndefined);
  auto s = spearman({1, 2, 3, 4}, {2, 2, 2, 2});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kUndefined);
  EXPECT_EQ(kendall_tau_b({1, 2}, {1, 2, 3}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(spearman({1, 2, std::nan("")}, {1, 2, 3}).status().code(), StatusCode::kInvalidArgument);
}

TEST(Rank, PerfectMonotoneGivesOne) {
  auto s = spearman({1, 2, 3, 4, 5}, {2, 4, 8, 16, 32});
  auto k = kendall_tau_b({1, 2, 3, 4, 5}, {5, 4, 3, 2, 1});
  ASSERT_TRUE(s.ok() && k.ok());
  EXPECT_DOUBLE_EQ(s->estimate, 1.0);
  EXPECT_EQ(s->p_value, 0.0);
  EXPECT_DOUBLE_EQ(k->estimate, -1.0);
}

}  // namespace
}  // namespace nf::stats
