// Issue 13 through the real binary: columns by header name for every CSV-reading stats
// test (item 1), weighted kappa on a declared scale (4), McNemar mid-p (5), Fleiss and
// Gwet AC1 over several raters with declared categories (6), one output layout (7).
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

// Item 1: "den,num" with rows 3,0 / 3,1 / 3,2 is 1/3, not 3 (the first column over the second).
TEST(StatsIssue13Cli, ClusterBootstrapReadsColumnsByHeaderName) {
  TempDir d;
  write(d / "dn.csv", "den,num\n3,0\n3,1\n3,2\n");
  write(d / "cnd.csv", "cluster,num,den\nv1,0,3\nv2,1,3\nv3,2,3\n");
  for (const char* f : {"dn.csv", "cnd.csv"}) {
    const auto j = ok_json(d, std::string("cluster-bootstrap ") + (d / f) + " --resamples 200");
    EXPECT_NEAR(j["estimate"].get<double>(), 1.0 / 3.0, 1e-12) << f;
    EXPECT_EQ(j["columns"], nlohmann::json::array({"num", "den"}));
    EXPECT_EQ(j["n"].get<int>(), 3);
  }
  write(d / "other.csv", "hits,trials\n0,3\n1,3\n2,3\n");
  const auto j = ok_json(d, "cluster-bootstrap " + (d / "other.csv") + " --columns hits,trials --resamples 200");
  EXPECT_NEAR(j["estimate"].get<double>(), 1.0 / 3.0, 1e-12);
  auto r = run_cli("stats cluster-bootstrap " + (d / "other.csv"), d.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("other.csv:1: no column named 'num'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--columns"), std::string::npos) << r.err;
  auto t = run_cli("stats cluster-bootstrap " + (d / "other.csv") + " --columns hits,trails", d.path());
  EXPECT_EQ(t.exit_code, 2);
  EXPECT_NE(t.err.find("did you mean 'trials'"), std::string::npos) << t.err;
  // Text output says which columns it used.
  auto txt = run_cli("stats cluster-bootstrap " + (d / "dn.csv") + " --resamples 200", d.path());
  EXPECT_EQ(txt.exit_code, 0);
  EXPECT_NE(txt.out.find("columns num, den"), std::string::npos) << txt.out;
}

TEST(StatsIssue13Cli, PairedAndRankTestsReadColumnsByHeaderName) {
  TempDir d;
  // b,a order on purpose: a = 1,1,1,0 b = 0,0,1,0 -> rate_a 0.75, rate_b 0.25.
  write(d / "p.csv", "item,b,a\n1,0,1\n2,0,1\n3,1,1\n4,0,0\n");
  const auto pd = ok_json(d, "paired-diff " + (d / "p.csv") + " --resamples 200");
  EXPECT_DOUBLE_EQ(pd["rate_a"].get<double>(), 0.75);
  EXPECT_DOUBLE_EQ(pd["rate_b"].get<double>(), 0.25);
  EXPECT_EQ(pd["columns"], nlohmann::json::array({"a", "b"}));
  const auto to = ok_json(d, "tost " + (d / "p.csv") + " --margin 0.1 --resamples 200");
  EXPECT_DOUBLE_EQ(to["estimate"].get<double>(), 0.5);
  // z,y,x order: x = 1,3,2,4 and y = 1,2,3,4; positionally (z, y) z is constant.
  write(d / "r.csv", "z,y,x\n9,1,1\n9,2,3\n9,3,2\n9,4,4\n");
  const auto k = ok_json(d, "kendall " + (d / "r.csv"));
  EXPECT_NEAR(k["estimate"].get<double>(), 2.0 / 3.0, 1e-12);  // scipy kendalltau([1,3,2,4],[1,2,3,4])
  const auto s = ok_json(d, "spearman " + (d / "r.csv"));
  EXPECT_NEAR(s["estimate"].get<double>(), 0.8, 1e-12);  // scipy spearmanr
  for (const char* test : {"paired-diff", "tost --margin 0.1", "kendall", "spearman"}) {
    write(d / "bad.csv", "u,v\n1,0\n0,1\n");
    auto r = run_cli(std::string("stats ") + test + " " + (d / "bad.csv"), d.path());
    EXPECT_EQ(r.exit_code, 2) << test;
    EXPECT_NE(r.err.find("no column named"), std::string::npos) << test << ": " << r.err;
  }
}

TEST(StatsIssue13Cli, AgreementTestsNameTheirColumnsAndRejectUnknownOnes) {
  TempDir d;
  write(d / "r.csv", "item,r1,r2\n1,A,A\n2,B,A\n3,B,B\n");
  for (const char* test : {"fleiss", "cohen", "scott", "gwet", "raw-agreement", "krippendorff"}) {
    const auto j = ok_json(d, std::string(test) + " " + (d / "r.csv") + " --resamples 50");
    EXPECT_EQ(j["raters"], nlohmann::json::array({"r1", "r2"})) << test;
    auto r = run_cli(std::string("stats ") + test + " " + (d / "r.csv") + " --raters r1,r3", d.path());
    EXPECT_EQ(r.exit_code, 2) << test;
    EXPECT_NE(r.err.find("no column named 'r3'"), std::string::npos) << test << ": " << r.err;
  }
  auto c = run_cli("stats fleiss " + (d / "r.csv") + " --counts --categories A,C", d.path());
  EXPECT_EQ(c.exit_code, 2);
  EXPECT_NE(c.err.find("no column named 'A'"), std::string::npos) << c.err;
}

// Item 4: judge scores 1-5 with no 3 (statsmodels cohens_kappa on the full 5x5 table).
TEST(StatsIssue13Cli, WeightedKappaOnTheDeclaredScale) {
  TempDir d;
  std::string csv = "run1,run2\n";
  const int a[] = {1, 2, 2, 4, 5, 5, 4, 2, 1, 5, 4, 2}, b[] = {1, 2, 4, 4, 5, 4, 5, 2, 2, 5, 4, 1};
  for (int i = 0; i < 12; ++i) csv += std::to_string(a[i]) + "," + std::to_string(b[i]) + "\n";
  write(d / "k.csv", csv);
  const auto lin = ok_json(d, "cohen " + (d / "k.csv") + " --weights linear --categories 1,2,3,4,5 --resamples 100");
  EXPECT_NEAR(lin["estimate"].get<double>(), 0.697479, 5e-7);
  const auto quad =
      ok_json(d, "cohen " + (d / "k.csv") + " --weights quadratic --categories 1,2,3,4,5 --resamples 100");
  EXPECT_NEAR(quad["estimate"].get<double>(), 0.850467, 5e-7);
  EXPECT_EQ(quad["categories"], nlohmann::json::array({"1", "2", "3", "4", "5"}));
  EXPECT_EQ(quad["weights"], "quadratic");
  auto no_scale = run_cli("stats cohen " + (d / "k.csv") + " --weights linear", d.path());
  EXPECT_EQ(no_scale.exit_code, 2);
  EXPECT_NE(no_scale.err.find("--categories 1,2,3,4,5"), std::string::npos) << no_scale.err;
  auto outside = run_cli("stats cohen " + (d / "k.csv") + " --weights linear --categories 1,2,3,4", d.path());
  EXPECT_EQ(outside.exit_code, 2);
  EXPECT_NE(outside.err.find("k.csv:6:1: label '5' is not one of the declared categories"), std::string::npos)
      << outside.err;
}

// Item 5.
TEST(StatsIssue13Cli, McNemarCarriesMidP) {
  TempDir d;
  const auto j = ok_json(d, "mcnemar 3 11");
  EXPECT_NEAR(j["mid_p"].get<double>(), 0.03515625, 1e-12);
  EXPECT_NEAR(j["p_value"].get<double>(), 0.057373046875, 1e-12);
  EXPECT_DOUBLE_EQ(ok_json(d, "mcnemar 5 5")["mid_p"].get<double>(), 1.0);
}

// Item 6: 8 items x 5 runs, option D offered but never chosen.
TEST(StatsIssue13Cli, FleissAndGwetOverFiveRunsWithDeclaredCategories) {
  TempDir d;
  const int counts[8][3] = {{5, 0, 0}, {4, 1, 0}, {0, 5, 0}, {0, 4, 1}, {1, 0, 4}, {0, 0, 5}, {5, 0, 0}, {3, 2, 0}};
  std::string csv = "item,run1,run2,run3,run4,run5\n";
  for (int i = 0; i < 8; ++i) {
    csv += "q" + std::to_string(i + 1);
    for (int k = 0; k < 3; ++k)
      for (int r = 0; r < counts[i][k]; ++r) csv += std::string(",") + static_cast<char>('A' + k);
    csv += "\n";
  }
  write(d / "runs.csv", csv);
  const auto f = ok_json(d, "fleiss " + (d / "runs.csv") + " --categories A,B,C,D --resamples 100");
  EXPECT_NEAR(f["estimate"].get<double>(), 0.651163, 5e-7);
  EXPECT_EQ(f["n"].get<int>(), 8);
  const auto g = ok_json(d, "gwet " + (d / "runs.csv") + " --categories A,B,C,D --resamples 100");
  EXPECT_NEAR(g["estimate"].get<double>(), 0.713376, 5e-7);
  EXPECT_EQ(g["raters"].size(), 5u);
  EXPECT_EQ(g["categories"], nlohmann::json::array({"A", "B", "C", "D"}));
  // Without the declared set AC1 takes q from the labels found (3): a different value.
  const auto g3 = ok_json(d, "gwet " + (d / "runs.csv") + " --resamples 100");
  EXPECT_GT(std::abs(g3["estimate"].get<double>() - 0.713376), 1e-3);
  auto bad = run_cli("stats gwet " + (d / "runs.csv") + " --categories A,B,D", d.path());
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("label 'C' is not one of the declared categories"), std::string::npos) << bad.err;
}

// Item 7: every stats test prints the same layout and --json the same keys; numbers as
// people write them.
TEST(StatsIssue13Cli, EveryTestHasOneLayoutAndOneSetOfKeys) {
  TempDir d;
  write(d / "two.csv", "a,b,num,den,x,y\n1,0,1,3,1,2\n1,1,0,3,2,1\n0,0,2,3,3,4\n1,0,1,2,4,3\n");
  write(d / "r.csv", "r1,r2,r3\nA,A,B\nB,B,B\nA,A,A\nB,A,B\n");
  const std::vector<std::string> calls = {
      "wilson 18 100", "clopper-pearson 18 100", "binom 7 20", "mcnemar 3 11", "mcnemar 3 11 --cc",
      "paired-diff " + (d / "two.csv") + " --resamples 100", "tost " + (d / "two.csv") + " --margin 0.2 --resamples 100",
      "cluster-bootstrap " + (d / "two.csv") + " --resamples 100", "bh 0.01 0.04 0.2", "holm 0.01 0.04 0.2",
      "kendall " + (d / "two.csv"), "spearman " + (d / "two.csv"), "vignettes-needed 374/4320 25",
      "fleiss " + (d / "r.csv") + " --resamples 50", "gwet " + (d / "r.csv") + " --resamples 50",
      "krippendorff " + (d / "r.csv") + " --resamples 50",
      "cohen " + (d / "r.csv") + " --raters r1,r2 --resamples 50",
      "scott " + (d / "r.csv") + " --raters r1,r2 --resamples 50",
      "raw-agreement " + (d / "r.csv") + " --raters r1,r2 --resamples 50"};
  for (const auto& c : calls) {
    const auto j = ok_json(d, c);
    for (const char* key : {"test", "method", "input", "estimate", "interval", "p_value", "n"})
      EXPECT_TRUE(j.contains(key)) << c << " lacks " << key;
    auto t = run_cli("stats " + c, d.path());
    ASSERT_EQ(t.exit_code, 0) << c;
    size_t pos = t.out.find('\n');
    for (const char* label : {"\n  estimate ", "  p-value ", "  n ", "  method "}) {
      const size_t at = t.out.find(label, pos);
      EXPECT_NE(at, std::string::npos) << c << " lacks " << label << "\n" << t.out;
      if (at != std::string::npos) pos = at;
    }
    EXPECT_EQ(t.out.find("00000000"), std::string::npos) << c << ": " << t.out;  // no 0.036000000000000004
  }
  auto w = run_cli("stats wilson 9 250", d.path());
  EXPECT_NE(w.out.find("  estimate   0.036\n"), std::string::npos) << w.out;
}

}  // namespace
}  // namespace nf
