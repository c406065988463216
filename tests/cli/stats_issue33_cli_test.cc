// Issue 33 through the real binary (tester findings F4, F5 and two lower-grade ones):
// exact small-n p-values for kendall / spearman, the degenerate flag on every bootstrap
// interval `stats` prints, undefined_resamples on cluster-bootstrap, wilson 0 0 as an
// undefined result, and rater names holding a comma quoted in the input line.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "common/test_data.h"

namespace nf {
namespace {

using testing::run_cli;
using testing::TempDir;

void write(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
}

nlohmann::json ok_json(const TempDir& d, const std::string& args) {
  auto r = run_cli("stats " + args + " --json", d.path());
  EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.err;
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.out;
  return j;
}

std::string ok_text(const TempDir& d, const std::string& args) {
  auto r = run_cli("stats " + args, d.path());
  EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.err;
  return r.out;
}

// F5: the tester's repro. References (Debian scipy 1.10.1):
//   /usr/bin/python3 -c "from scipy import stats; print(stats.kendalltau([1,2,3],[1,2,3]).pvalue,
//                        stats.kendalltau(range(5),range(5)).pvalue)"  -> 0.3333333333333333 0.016666666666666666
// Spearman: exact permutation p over all pairings (scipy.stats.permutation_test, permutation_type='pairings',
// n_resamples=np.inf; tests/reference/gen_rank_exact.py): 2/3! = 1/3 and 2/5! = 1/60.
TEST(StatsIssue33Cli, SmallSamplePValuesAreExact) {
  TempDir d;
  write(d / "k3.csv", "x,y\n1,1\n2,2\n3,3\n");
  write(d / "k5.csv", "x,y\n1,1\n2,2\n3,3\n4,4\n5,5\n");
  const auto k3 = ok_json(d, "kendall " + (d / "k3.csv"));
  EXPECT_NEAR(k3["p_value"].get<double>(), 1.0 / 3.0, 1e-12);
  EXPECT_EQ(k3["p_method"], "exact");
  const auto k5 = ok_json(d, "kendall " + (d / "k5.csv"));
  EXPECT_NEAR(k5["p_value"].get<double>(), 0.016666666666666666, 1e-12);
  const auto s5 = ok_json(d, "spearman " + (d / "k5.csv"));
  EXPECT_NEAR(s5["p_value"].get<double>(), 2.0 / 120.0, 1e-12);
  EXPECT_EQ(s5["p_method"], "exact");
  const auto s3 = ok_json(d, "spearman " + (d / "k3.csv"));
  EXPECT_NEAR(s3["p_value"].get<double>(), 1.0 / 3.0, 1e-12);
  // The method line says exact vs asymptotic.
  const std::string t = ok_text(d, "spearman " + (d / "k5.csv"));
  EXPECT_NE(t.find("p-value    0.0166667"), std::string::npos) << t;
  EXPECT_NE(t.find("p-value exact: exact permutation p over all 5! pairings"), std::string::npos) << t;
  const std::string kt = ok_text(d, "kendall " + (d / "k5.csv"));
  EXPECT_NE(kt.find("p-value exact: exact null distribution"), std::string::npos) << kt;
  // Asked for the approximation, the t limit at |rho| = 1 is not printed as a bare 0.
  const std::string a = ok_text(d, "spearman " + (d / "k5.csv") + " --method asymptotic");
  EXPECT_NE(a.find("p-value    0 (the approximation's limit"), std::string::npos) << a;
  EXPECT_NE(a.find("p-value asymptotic: t distribution"), std::string::npos) << a;
  // Ties: Kendall falls back to the normal approximation, and refuses --method exact.
  // python3 -c "from scipy import stats; print(stats.kendalltau([1,2,2,3,4],[1,3,2,4,5]).pvalue)" -> 0.022977401503206065
  write(d / "ties.csv", "x,y\n1,1\n2,3\n2,2\n3,4\n4,5\n");
  const auto kt2 = ok_json(d, "kendall " + (d / "ties.csv"));
  EXPECT_NEAR(kt2["p_value"].get<double>(), 0.022977401503206065, 1e-9);
  EXPECT_EQ(kt2["p_method"], "asymptotic");
  auto r = run_cli("stats kendall " + (d / "ties.csv") + " --method exact", d.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("ties"), std::string::npos) << r.err;
  auto bad = run_cli("stats kendall " + (d / "ties.csv") + " --method exakt", d.path());
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("did you mean 'exact'"), std::string::npos) << bad.err;
}

// F4: a bootstrap interval with no width is flagged, text and JSON.
TEST(StatsIssue33Cli, DegenerateBootstrapIntervalsAreFlagged) {
  TempDir d;
  write(d / "cb0.csv", "num,den\n0,10\n0,10\n0,5\n");
  const auto cb0 = ok_json(d, "cluster-bootstrap " + (d / "cb0.csv") + " --resamples 500");
  EXPECT_EQ(cb0["interval"], nlohmann::json::array({0.0, 0.0}));
  EXPECT_EQ(cb0["degenerate"], true);
  EXPECT_NE(cb0["degenerate_note"].get<std::string>().find("not a statement of certainty"), std::string::npos);
  EXPECT_EQ(cb0["undefined_resamples"], 0);
  // python3 -c "from statsmodels.stats.proportion import proportion_confint as pc; print(pc(0,25,method='wilson'))"
  //   -> (0.0, 0.13319225093904855)
  EXPECT_EQ(cb0["exact_interval"]["method"], "wilson");
  EXPECT_NEAR(cb0["exact_interval"]["lo"].get<double>(), 0.0, 1e-12);
  EXPECT_NEAR(cb0["exact_interval"]["hi"].get<double>(), 0.13319225093904855, 1e-9);
  const std::string t = ok_text(d, "cluster-bootstrap " + (d / "cb0.csv") + " --resamples 500");
  EXPECT_NE(t.find("  degenerate          yes: every bootstrap resample gave (almost) the same value"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("  exact_interval      [0, 0.133192] (0/25); Wilson score interval"), std::string::npos) << t;
  // One cluster: the Wilson interval of 5/10.
  // python3 -c "from statsmodels.stats.proportion import proportion_confint as pc; print(pc(5,10,method='wilson'))"
  //   -> (0.23659309051256394, 0.7634069094874361)
  write(d / "cb1.csv", "num,den\n5,10\n");
  const auto cb1 = ok_json(d, "cluster-bootstrap " + (d / "cb1.csv") + " --resamples 200");
  EXPECT_EQ(cb1["degenerate"], true);
  EXPECT_NEAR(cb1["exact_interval"]["lo"].get<double>(), 0.23659309051256394, 1e-9);
  EXPECT_NEAR(cb1["exact_interval"]["hi"].get<double>(), 0.7634069094874361, 1e-9);
  // A spread interval says degenerate false and carries no Wilson bound.
  write(d / "cb2.csv", "num,den\n0,10\n5,10\n10,10\n2,10\n");
  const auto cb2 = ok_json(d, "cluster-bootstrap " + (d / "cb2.csv") + " --resamples 500");
  EXPECT_EQ(cb2["degenerate"], false);
  EXPECT_FALSE(cb2.contains("exact_interval"));
  EXPECT_FALSE(cb2.contains("degenerate_note"));
  // Agreement: one item, and perfect agreement (every valid resample gives kappa 1).
  write(d / "oneitem.csv", "item,r1,r2,r3\nq1,A,B,A\n");
  write(d / "perfect.csv", "item,r1,r2,r3\nq1,A,A,A\nq2,B,B,B\nq3,A,A,A\n");
  for (const char* test : {"fleiss", "gwet", "krippendorff"}) {
    const auto one = ok_json(d, std::string(test) + " " + (d / "perfect.csv"));
    if (one["interval"].is_null()) continue;  // every resample undefined: no interval to flag
    EXPECT_EQ(one["degenerate"], one["interval"][0] == one["interval"][1]) << test;
    EXPECT_TRUE(one.contains("undefined_resamples")) << test;
  }
  const auto perfect = ok_json(d, "fleiss " + (d / "perfect.csv"));
  EXPECT_EQ(perfect["interval"], nlohmann::json::array({1.0, 1.0}));
  EXPECT_EQ(perfect["degenerate"], true);
  EXPECT_GT(perfect["undefined_resamples"].get<int>(), 0);  // resamples of one category: kappa 0/0
  const auto one = ok_json(d, "fleiss " + (d / "oneitem.csv"));
  EXPECT_EQ(one["degenerate"], true);
  const std::string ft = ok_text(d, "fleiss " + (d / "perfect.csv"));
  EXPECT_NE(ft.find("degenerate"), std::string::npos) << ft;
  // Paired difference where no item differs.
  write(d / "same.csv", "a,b\n1,1\n0,0\n1,1\n0,0\n");
  const auto pd = ok_json(d, "paired-diff " + (d / "same.csv") + " --resamples 200");
  EXPECT_EQ(pd["degenerate"], true);
  // Not a bootstrap interval: no flag.
  EXPECT_FALSE(ok_json(d, "wilson 18 100").contains("degenerate"));
}

// F4: a resample that draws only 0/0 clusters is dropped and counted. With clusters
// a 1/10, b 0/0, c 3/10 a resample is all-b with probability (1/3)^3 = 1/27, so about 370
// of 10000 (binomial sd 19; the bounds below are +-6 sd).
TEST(StatsIssue33Cli, ClusterBootstrapCountsUndefinedResamples) {
  TempDir d;
  write(d / "cb.csv", "cluster,num,den\na,1,10\nb,0,0\nc,3,10\n");
  const auto j = ok_json(d, "cluster-bootstrap " + (d / "cb.csv"));
  EXPECT_EQ(j["resamples"], 10000);
  EXPECT_EQ(j["seed"], 0);
  const int undefined = j["undefined_resamples"].get<int>();
  EXPECT_GT(undefined, 370 - 115);
  EXPECT_LT(undefined, 370 + 115);
  EXPECT_NEAR(j["estimate"].get<double>(), 0.2, 1e-12);
}

// Lower grade: wilson / clopper-pearson / binom on 0 of 0 is undefined (exit 0, n/a), as
// stats --help promises and mcnemar 0 0 does; a rater name with a comma is quoted.
TEST(StatsIssue33Cli, ZeroTrialsIsUndefinedAndRaterNamesAreQuoted) {
  TempDir d;
  for (const char* test : {"wilson 0 0", "clopper-pearson 0 0", "binom 0 0"}) {
    const auto j = ok_json(d, test);
    EXPECT_TRUE(j["estimate"].is_null()) << test;
    EXPECT_TRUE(j["interval"].is_null()) << test;
    EXPECT_TRUE(j.contains("undefined")) << test;
    const std::string t = ok_text(d, test);
    const size_t at = t.find("\n  estimate ");
    ASSERT_NE(at, std::string::npos) << t;
    const std::string line = t.substr(at + 1, t.find('\n', at + 1) - at - 1);
    EXPECT_NE(line.find(" n/a"), std::string::npos) << line;
    EXPECT_NE(t.find("undefined"), std::string::npos) << t;
  }
  auto neg = run_cli("stats wilson 1 0", d.path());
  EXPECT_EQ(neg.exit_code, 2) << neg.out;
  auto lvl = run_cli("stats wilson 0 0 --level 2", d.path());
  EXPECT_EQ(lvl.exit_code, 2) << lvl.out;
  write(d / "r.csv", "item,\"rater, one\",r2,r3\nq1,A,A,B\nq2,B,B,B\nq3,A,B,A\nq4,B,B,A\n");
  const auto f = ok_json(d, "fleiss " + (d / "r.csv") + " --resamples 50");
  EXPECT_NE(f["input"].get<std::string>().find("raters \"rater, one\", r2, r3;"), std::string::npos) << f["input"];
  EXPECT_EQ(f["raters"], nlohmann::json::array({"rater, one", "r2", "r3"}));
}

}  // namespace
}  // namespace nf
