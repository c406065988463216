// Proportions: golden vectors from statsmodels/scipy (tests/reference/gen_core.py) and the
// published Wilson intervals of seed 004 Table 12.
#include "common/test_data.h"
#include "common/golden.h"
#include "stats/proportion.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace nf::stats {
namespace {

using testing::load_golden;

std::string data_dir() { return testing::data_dir(); }

TEST(Proportion, WilsonAndClopperPearsonMatchStatsmodels) {
  const auto g = load_golden("core_proportion.json");
  ASSERT_GE(g["rows"].size(), 300u);
  for (const auto& r : g["rows"]) {
    const int64_t x = r["x"], n = r["n"];
    const double level = r["level"];
    auto w = wilson(x, n, level);
    ASSERT_TRUE(w.ok()) << w.status().to_string();
    EXPECT_NEAR(w->low, r["wilson"][0].get<double>(), 1e-9) << x << "/" << n << " at " << level;
    EXPECT_NEAR(w->high, r["wilson"][1].get<double>(), 1e-9) << x << "/" << n << " at " << level;
    EXPECT_DOUBLE_EQ(w->estimate, static_cast<double>(x) / static_cast<double>(n));
    auto cp = clopper_pearson(x, n, level);
    ASSERT_TRUE(cp.ok()) << cp.status().to_string();
    EXPECT_NEAR(cp->low, r["clopper_pearson"][0].get<double>(), 1e-9) << x << "/" << n;
    EXPECT_NEAR(cp->high, r["clopper_pearson"][1].get<double>(), 1e-9) << x << "/" << n;
  }
}

TEST(Proportion, BinomTestMatchesScipyBinomtest) {
  const auto g = load_golden("core_binom.json");
  ASSERT_GE(g["rows"].size(), 300u);
  for (const auto& r : g["rows"]) {
    const int64_t x = r["x"], n = r["n"];
    const double p0 = r["p0"];
    auto two = binom_test(x, n, p0);
    auto less = binom_test(x, n, p0, Alternative::kLess);
    auto greater = binom_test(x, n, p0, Alternative::kGreater);
    ASSERT_TRUE(two.ok() && less.ok() && greater.ok());
    EXPECT_NEAR(*two, r["two_sided"].get<double>(), 1e-9) << x << "/" << n << " p0=" << p0;
    EXPECT_NEAR(*less, r["less"].get<double>(), 1e-9) << x << "/" << n << " p0=" << p0;
    EXPECT_NEAR(*greater, r["greater"].get<double>(), 1e-9) << x << "/" << n << " p0=" << p0;
    EXPECT_LE(*two, 1.0);
  }
}

// Seed 004 Table 12: inappropriate-confident rates with Wilson 95% CIs at two decimals,
// counts read from raw_counts.md (Appendix C).
TEST(Proportion, WilsonReproducesSeed004Table12) {
  std::ifstream in(data_dir() + "/missing-info-judges/raw_counts.md");
  ASSERT_TRUE(in.good()) << "real data missing: set NOISEFLOOR_DATA";
  // published [low, high] for answer-removed and context-removed, per model row order.
  const std::vector<std::vector<double>> published = {
      {0.12, 0.27, 0.13, 0.29}, {0.07, 0.20, 0.11, 0.26}, {0.06, 0.19, 0.06, 0.17}, {0.03, 0.12, 0.09, 0.23}};
  const std::regex frac(R"((\d+)/(\d+))");
  std::string line;
  size_t row = 0;
  while (std::getline(in, line)) {
    std::vector<std::pair<int64_t, int64_t>> counts;
    for (std::sregex_iterator it(line.begin(), line.end(), frac), end; it != end; ++it) {
      counts.emplace_back(std::stoll((*it)[1]), std::stoll((*it)[2]));
    }
    if (counts.size() != 6) continue;
    ASSERT_LT(row, published.size());
    const int cols[2] = {3, 5};  // inappropriate (ans), inappropriate (ctx)
    for (int k = 0; k < 2; ++k) {
      auto w = wilson(counts[static_cast<size_t>(cols[k])].first, counts[static_cast<size_t>(cols[k])].second);
      ASSERT_TRUE(w.ok());
      EXPECT_NEAR(w->low, published[row][static_cast<size_t>(2 * k)], 0.005 + 1e-12) << "row " << row;
      EXPECT_NEAR(w->high, published[row][static_cast<size_t>(2 * k + 1)], 0.005 + 1e-12) << "row " << row;
    }
    ++row;
  }
  EXPECT_EQ(row, 4u);
  // The issue's two spot checks.
  auto a = wilson(18, 100);
  auto b = wilson(6, 100);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(std::round(a->low * 100), 12);
  EXPECT_EQ(std::round(a->high * 100), 27);
  EXPECT_EQ(std::round(b->low * 100), 3);
  EXPECT_EQ(std::round(b->high * 100), 12);
}

TEST(Proportion, RejectsBadInputWithNamedMessage) {
  auto w = wilson(7, 5);
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(w.status().message(), "wilson: successes (7) exceeds trials (5)");
  EXPECT_FALSE(wilson(0, 0).ok());
  EXPECT_FALSE(wilson(-1, 5).ok());
  EXPECT_FALSE(wilson(1, 5, 1.0).ok());
  EXPECT_FALSE(clopper_pearson(3, 2).ok());
  EXPECT_FALSE(binom_test(1, 5, 0.0).ok());
  EXPECT_FALSE(binom_test(1, 5, 1.0).ok());
}

// Identity between related functions: the Clopper-Pearson bounds are where the one-sided
// exact binomial tails equal alpha/2 (P[X >= x | low] = P[X <= x | high] = alpha/2).
TEST(Proportion, ClopperPearsonBoundsInvertTheExactBinomialTails) {
  for (int64_t n : {10, 50, 200}) {
    for (int64_t x = 1; x < n; x += n / 10) {
      auto cp = clopper_pearson(x, n, 0.9);
      ASSERT_TRUE(cp.ok());
      auto up = binom_test(x, n, cp->low, Alternative::kGreater);
      auto down = binom_test(x, n, cp->high, Alternative::kLess);
      ASSERT_TRUE(up.ok() && down.ok());
      EXPECT_NEAR(*up, 0.05, 1e-9) << x << "/" << n;
      EXPECT_NEAR(*down, 0.05, 1e-9) << x << "/" << n;
      EXPECT_LT(cp->low, cp->estimate);
      EXPECT_GT(cp->high, cp->estimate);
    }
  }
}

}  // namespace
}  // namespace nf::stats
