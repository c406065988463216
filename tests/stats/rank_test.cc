// Kendall tau-b and Spearman rho against scipy 1.10 (golden vectors), and undefined input.
// core_rank.json: the asymptotic p-values (gen_core.py); core_rank_exact.json: scipy's
// default (exact for small untied n) Kendall p and the exact permutation Spearman p
// (gen_rank_exact.py, issue 33).
#include "stats/rank.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>
#include <utility>
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
    auto k = kendall_tau_b(x, y, RankPMethod::kAsymptotic);
    auto s = spearman(x, y, RankPMethod::kAsymptotic);
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
  EXPECT_DOUBLE_EQ(k->estimate, -1.0);
  // The t approximation's limit at |rho| = 1 is 0 (scipy spearmanr too); asked for, it says so.
  auto t = spearman({1, 2, 3, 4, 5}, {2, 4, 8, 16, 32}, RankPMethod::kAsymptotic);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->p_value, 0.0);
  EXPECT_FALSE(t->exact);
}

// |a - b| within `rel` of b (plus a floor far below any p-value printed).
::testing::AssertionResult close_rel(double a, double b, double rel) {
  if (std::fabs(a - b) <= rel * std::fabs(b) + 1e-300) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << a << " vs " << b << " (relative " << std::fabs(a - b) / std::fabs(b) << ")";
}

TEST(RankExact, MatchesScipyDefaultKendallAndPermutationSpearman) {
  std::ifstream in(std::string(NF_SOURCE_DIR) + "/tests/reference/core_rank_exact.json");
  ASSERT_TRUE(in.good());
  const auto g = nlohmann::json::parse(in);
  ASSERT_GE(g["rows"].size(), 412u);
  int exact_kendall = 0, exact_spearman = 0;
  for (const auto& r : g["rows"]) {
    const auto x = r["x"].get<std::vector<double>>();
    const auto y = r["y"].get<std::vector<double>>();
    auto k = kendall_tau_b(x, y);
    auto s = spearman(x, y);
    ASSERT_TRUE(k.ok()) << k.status().to_string();
    ASSERT_TRUE(s.ok()) << s.status().to_string();
    // scipy's 'auto' choice, and its p: exact to 1e-10 relative (counts vs our probabilities),
    // asymptotic to 1e-9 as the golden test above.
    EXPECT_EQ(k->exact, r["kendall_exact"].get<bool>()) << "n=" << x.size();
    if (k->exact) {
      ++exact_kendall;
      EXPECT_TRUE(close_rel(k->p_value, r["kendall_auto"].get<double>(), 1e-10)) << "n=" << x.size();
    } else {
      EXPECT_NEAR(k->p_value, r["kendall_auto"].get<double>(), 1e-9) << "n=" << x.size();
    }
    EXPECT_GT(k->p_value, 0.0);
    if (r.contains("spearman_perm")) {
      ++exact_spearman;
      EXPECT_TRUE(s->exact);
      EXPECT_TRUE(close_rel(s->p_value, r["spearman_perm"].get<double>(), 1e-12)) << "n=" << x.size();
    } else {
      EXPECT_FALSE(s->exact && std::fabs(s->estimate) < 1.0) << "n=" << x.size();
    }
    EXPECT_GT(s->p_value, 0.0) << "n=" << x.size();
  }
  EXPECT_GE(exact_kendall, 100);  // both branches exercised
  EXPECT_GE(exact_spearman, 50);
}

TEST(RankExact, KendallExactTableMatchesScipy) {
  std::ifstream in(std::string(NF_SOURCE_DIR) + "/tests/reference/core_rank_exact.json");
  ASSERT_TRUE(in.good());
  const auto g = nlohmann::json::parse(in);
  ASSERT_GE(g["kendall_table"].size(), 300u);
  for (const auto& t : g["kendall_table"]) {
    const int64_t n = t[0].get<int64_t>(), d = t[1].get<int64_t>();
    auto p = kendall_exact_p_value(n, d);
    ASSERT_TRUE(p.ok()) << p.status().to_string();
    EXPECT_TRUE(close_rel(*p, t[2].get<double>(), 1e-10)) << "n=" << n << " D=" << d;
  }
  EXPECT_EQ(kendall_exact_p_value(5, 11).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(kendall_exact_p_value(5, -1).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(kendall_exact_p_value(0, 0).status().code(), StatusCode::kInvalidArgument);
  // Too much work for the recurrence (100000 x 1.25e9): refused, not hung.
  EXPECT_EQ(kendall_exact_p_value(100000, 1250000000).status().code(), StatusCode::kInvalidArgument);
}

// The tester's cases (issue 33, F5) and the sizes the issue names, each with the command
// that gives the reference (Debian scipy 1.10.1).
TEST(RankExact, SmallPerfectRankings) {
  struct Case {
    int n;
    double kendall, spearman;
  };
  // /usr/bin/python3 -c "from scipy import stats; [print(n, stats.kendalltau(range(n), range(n)).pvalue) for n in (3,5,10,30,60)]"
  //   -> 0.3333333333333333, 0.016666666666666666, 5.511463844797178e-07, 7.539975257631811e-33,
  //      2.4035609872986455e-82
  // Spearman, exact permutation p (n <= 10: scipy.stats.permutation_test(..., permutation_type='pairings',
  // n_resamples=np.inf), tests/reference/gen_rank_exact.py; n > 10: 2 / n!):
  //   python3 -c "import math; print([2/math.factorial(n) for n in (3,5,10,30,60)])"
  const std::vector<Case> cases = {{3, 0.3333333333333333, 0.3333333333333333},
                                   {5, 0.016666666666666666, 0.016666666666666666},
                                   {10, 5.511463844797178e-07, 5.511463844797178e-07},
                                   {30, 7.539975257631811e-33, 7.539975257631811e-33},
                                   {60, 2.4035609872986455e-82, 2.4035609872986455e-82}};
  for (const auto& c : cases) {
    std::vector<double> x, y, rev;
    for (int i = 0; i < c.n; ++i) {
      x.push_back(i);
      y.push_back(i * i + 1.0);
      rev.push_back(-i);
    }
    for (const auto* other : {&y, &rev}) {
      auto k = kendall_tau_b(x, *other);
      auto s = spearman(x, *other);
      ASSERT_TRUE(k.ok() && s.ok());
      EXPECT_TRUE(k->exact) << c.n;
      EXPECT_TRUE(s->exact) << c.n;
      EXPECT_TRUE(close_rel(k->p_value, c.kendall, 1e-10)) << c.n;
      EXPECT_TRUE(close_rel(s->p_value, c.spearman, 1e-10)) << c.n;
    }
  }
}

TEST(RankExact, ChoosesLikeScipyAuto) {
  // n = 60 untied, one discordant pair: exact (min(C, D) <= 1).
  // python3 -c "from scipy import stats; y=list(range(60)); y[10],y[11]=y[11],y[10]; print(stats.kendalltau(range(60), y).pvalue)"
  //   -> 1.4421365923791871e-80  (= 2 / 59!)
  std::vector<double> x(60), y(60);
  for (int i = 0; i < 60; ++i) x[i] = y[i] = i;
  std::swap(y[10], y[11]);
  auto k = kendall_tau_b(x, y);
  ASSERT_TRUE(k.ok());
  EXPECT_TRUE(k->exact);
  EXPECT_TRUE(close_rel(k->p_value, 1.4421365923791871e-80, 1e-10));
  // Two discordant pairs at n = 40: asymptotic.
  // python3 -c "from scipy import stats; y=list(range(40)); y[3],y[4]=y[4],y[3]; y[20],y[21]=y[21],y[20];
  //             print(stats.kendalltau(range(40), y).pvalue)"  -> 1.549572233556233e-19
  std::vector<double> x40(40), y40(40);
  for (int i = 0; i < 40; ++i) x40[i] = y40[i] = i;
  std::swap(y40[3], y40[4]);
  std::swap(y40[20], y40[21]);
  auto a = kendall_tau_b(x40, y40);
  ASSERT_TRUE(a.ok());
  EXPECT_FALSE(a->exact);
  EXPECT_TRUE(close_rel(a->p_value, 1.549572233556233e-19, 1e-9));
  // Ties: never exact for Kendall; exact is refused when asked for.
  // python3 -c "from scipy import stats; print(stats.kendalltau([1,2,2,3,4],[1,3,2,4,5]).pvalue)"
  //   -> 0.022977401503206065 (asymptotic: ties)
  auto t = kendall_tau_b({1, 2, 2, 3, 4}, {1, 3, 2, 4, 5});
  ASSERT_TRUE(t.ok());
  EXPECT_FALSE(t->exact);
  EXPECT_TRUE(close_rel(t->p_value, 0.022977401503206065, 1e-9));
  EXPECT_EQ(kendall_tau_b({1, 2, 2, 3, 4}, {1, 3, 2, 4, 5}, RankPMethod::kExact).status().code(),
            StatusCode::kInvalidArgument);
  // Spearman with ties at n = 5: the permutation p is exact too.
  // /usr/bin/python3 -c "import numpy as np; from scipy import stats; rx=stats.rankdata([1,2,2,3,4]);
  //   ry=stats.rankdata([1,3,2,4,5]); f=lambda a, axis: np.corrcoef(np.vstack([a.reshape(-1,5), ry]))[:-1,-1];
  //   print(stats.permutation_test((rx,), f, permutation_type='pairings', n_resamples=np.inf,
  //   vectorized=True).pvalue)"  -> 0.03333333333333333 (4 of 120 pairings as extreme; t approx: 0.0048)
  auto s = spearman({1, 2, 2, 3, 4}, {1, 3, 2, 4, 5});
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->exact);
  EXPECT_TRUE(close_rel(s->p_value, 0.03333333333333333, 1e-12));
  std::vector<double> big(11);
  for (int i = 0; i < 11; ++i) big[i] = i;
  EXPECT_EQ(spearman(big, big, RankPMethod::kExact).status().code(), StatusCode::kInvalidArgument);
}

TEST(RankExact, SpearmanPerfectWithTiesBeyondEnumeration) {
  // x and y tied alike in groups of 2 and 3: P[rho* = 1] = 2! 3! / n!, p = twice that.
  // At n = 9 every pairing is enumerated, by scipy and by spearman:
  //   /usr/bin/python3 -c "import numpy as np; from scipy import stats; y=[1,1,2,3,3,3,4,5,6];
  //     rx=stats.rankdata([10*v for v in y]); ry=stats.rankdata(y);
  //     f=lambda a, axis: np.corrcoef(np.vstack([a.reshape(-1,9), ry]))[:-1,-1];
  //     print(stats.permutation_test((rx,), f, permutation_type='pairings', n_resamples=np.inf,
  //     vectorized=True).pvalue)"  -> 6.613756613756614e-05 (= 2*2*6/9!)
  // At n = 11 (beyond enumeration) the same closed form: python3 -c "import math; print(2*2*6/math.factorial(11))"
  //   -> 6.012506012506013e-07
  const std::vector<double> y9 = {1, 1, 2, 3, 3, 3, 4, 5, 6};
  const std::vector<double> y11 = {1, 1, 2, 3, 3, 3, 4, 5, 6, 7, 8};
  const std::vector<std::pair<std::vector<double>, double>> cases = {{y9, 6.613756613756614e-05},
                                                                     {y11, 6.012506012506013e-07}};
  for (const auto& [y, want] : cases) {
    std::vector<double> x;
    for (double v : y) x.push_back(10 * v);
    auto s = spearman(x, y);
    ASSERT_TRUE(s.ok());
    EXPECT_DOUBLE_EQ(s->estimate, 1.0);
    EXPECT_TRUE(s->exact);
    EXPECT_TRUE(close_rel(s->p_value, want, 1e-10)) << y.size();
  }
}

}  // namespace
}  // namespace nf::stats
