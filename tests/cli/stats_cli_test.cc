// `noisefloor stats` end to end: the published values of issue 3 through the real binary.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "common/test_data.h"

namespace nf {
namespace {

using testing::run_cli;
using testing::TempDir;

nlohmann::json json_of(const std::string& args) {
  TempDir d;
  auto r = run_cli("stats " + args + " --json", d.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

TEST(StatsCli, McNemarTable11) {
  EXPECT_DOUBLE_EQ(json_of("mcnemar 0 4")["p_value"].get<double>(), 0.125);
  EXPECT_DOUBLE_EQ(json_of("mcnemar 1 1")["p_value"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(json_of("mcnemar 6 6")["p_value"].get<double>(), 1.0);
}

TEST(StatsCli, WilsonTable12) {
  const auto j = json_of("wilson 18 100");
  EXPECT_NEAR(j["interval"][0].get<double>(), 0.12, 0.005);
  EXPECT_NEAR(j["interval"][1].get<double>(), 0.27, 0.005);
}

TEST(StatsCli, SuccessesAboveTrialsExit2WithMessage) {
  TempDir d;
  auto r = run_cli("stats wilson 7 5", d.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("successes (7) exceeds trials (5)"), std::string::npos) << r.err;
}

TEST(StatsCli, MistypedTestSuggestsTheClosest) {
  TempDir d;
  auto r = run_cli("stats wilsn 1 2", d.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("did you mean 'wilson'"), std::string::npos) << r.err;
}

TEST(StatsCli, FleissFromCsvAndUndefinedWhenOneCategory) {
  TempDir d;
  {
    std::ofstream f(d / "r.csv");
    f << "a,b,c\n1,1,1\n0,0,1\n1,0,0\n0,0,0\n1,1,0\n";
  }
  auto r = run_cli("stats fleiss " + d / "r.csv" + " --json", d.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // statsmodels 0.13 fleiss_kappa([[0,3],[2,1],[2,1],[3,0],[1,2]]) = 0.19642857142857137
  EXPECT_NEAR(nlohmann::json::parse(r.out)["estimate"].get<double>(), 0.19642857142857137, 1e-12);
  {
    std::ofstream f(d / "one.csv");
    f << "a,b\n1,1\n1,1\n";
  }
  auto u = run_cli("stats fleiss " + d / "one.csv", d.path());
  // Undefined for the data is a result, not bad input: exit 0 as `stats --help` says.
  EXPECT_EQ(u.exit_code, 0) << u.err;
  EXPECT_NE((u.out + u.err).find("undefined"), std::string::npos) << u.out << u.err;
  auto uj = run_cli("stats fleiss " + d / "one.csv" + " --json", d.path());
  ASSERT_EQ(uj.exit_code, 0) << uj.err;
  const auto j = nlohmann::json::parse(uj.out);
  EXPECT_TRUE(j["estimate"].is_null()) << uj.out;
  EXPECT_TRUE(j.contains("undefined")) << uj.out;
}

// Tester finding 20 (session 9): a row shorter than the header was read as "the last
// raters missing", so a truncated line silently dropped its item (n 3, kappa 0.1).
// A short row is refused as a long one is; empty fields are the way to write missing.
TEST(StatsCli, ShortRowRefusedLikeALongRowEmptyFieldsAreMissing) {
  TempDir d;
  {
    std::ofstream f(d / "ragged.csv");
    f << "item,r1,r2,r3\nq1,A,A,A\nq2,B\nq3,A,B,B\nq4,B,B,A\n";
  }
  auto r = run_cli("stats fleiss " + d / "ragged.csv", d.path());
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("ragged.csv:3: 2 fields, the header has 4"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("q2,B,,"), std::string::npos) << r.err;
  {
    std::ofstream f(d / "empty_fields.csv");
    f << "item,r1,r2,r3\nq1,A,A,A\nq2,B,,\nq3,A,B,B\nq4,B,B,A\n";
  }
  // Written as empty fields the same data is accepted: q2 has one rating and drops out of
  // Fleiss (which needs >= 2 ratings per item), leaving q1, q3, q4.
  auto ok = run_cli("stats fleiss " + d / "empty_fields.csv" + " --json", d.path());
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(nlohmann::json::parse(ok.out)["n"].get<int>(), 3) << ok.out;
}

TEST(StatsCli, VignettesNeededS2) {
  EXPECT_DOUBLE_EQ(json_of("vignettes-needed 374/4320 25")["estimate"].get<double>(), 289);
}

}  // namespace
}  // namespace nf
