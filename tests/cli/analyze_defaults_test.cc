// `analyze` over a store written by `audit` uses the study recorded in the store: its
// bootstrap settings (so the numbers equal audit's, byte for byte) and, for a chat study,
// no outcome analyses (chat draws have none: judges score them).
#include <gtest/gtest.h>

#include <string>

#include "common/test_data.h"

namespace nf {
namespace {

TEST(AnalyzeDefaults, AnalyzeAfterAuditReproducesAuditsResultsForAChatStudy) {
  testing::TempDir t;
  const std::string study = std::string(NF_SOURCE_DIR) + "/examples/chat-probe.yaml";  // bootstrap 1000
  auto a = testing::run_cli("audit " + study + " --quiet --out " + (t / "audit") + " --store " + (t / "s.sqlite"),
                            t.path());
  ASSERT_EQ(a.exit_code, 0) << a.err;
  auto b = testing::run_cli("analyze --store " + (t / "s.sqlite") + " --out " + (t / "again"), t.path());
  ASSERT_EQ(b.exit_code, 0) << b.err;
  const std::string first = testing::slurp(t / "audit/results.json");
  ASSERT_FALSE(first.empty());
  EXPECT_EQ(first, testing::slurp(t / "again/results.json"));
  EXPECT_NE(first.find("\"resamples\": 1000"), std::string::npos);
  const std::string report = testing::slurp(t / "again/report.md");
  EXPECT_EQ(report.find("Instability floor"), std::string::npos) << "a chat study has no outcome analyses";
  EXPECT_NE(report.find("Judge panel reliability"), std::string::npos);
  // An explicit option wins over the study's.
  auto c = testing::run_cli("analyze --store " + (t / "s.sqlite") + " --out " + (t / "c") + " --resamples 200",
                            t.path());
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(testing::slurp(t / "c/results.json").find("\"resamples\": 200"), std::string::npos);
}

// `analyze --analysis NAME[=JSON]` runs exactly the analyses named, on any store; a typo in
// the name or the options is exit 2 naming it, never a silent default.
TEST(AnalyzeDefaults, AnalysisFlagRunsNamedAnalysesAndRefusesTypos) {
  testing::TempDir t;
  const std::string study = std::string(NF_SOURCE_DIR) + "/examples/sample-floor.yaml";
  auto a = testing::run_cli("run " + study + " --quiet --store " + (t / "s.sqlite"), t.path());
  ASSERT_EQ(a.exit_code, 0) << a.err;
  auto b = testing::run_cli("analyze --store " + (t / "s.sqlite") + " --out " + (t / "b") +
                                " --analysis 'majority_floor={\"vote_sizes\":[2]}'",
                            t.path());
  ASSERT_EQ(b.exit_code, 0) << b.err;
  const std::string res = testing::slurp(t / "b/results.json");
  EXPECT_NE(res.find("\"majority_floor\""), std::string::npos);
  EXPECT_EQ(res.find("\"mcq_robustness\""), std::string::npos) << "only the named analyses run";
  auto c = testing::run_cli("analyze --store " + (t / "s.sqlite") + " --out " + (t / "c") + " --analysis flor",
                            t.path());
  EXPECT_EQ(c.exit_code, 2);
  EXPECT_NE(c.err.find("did you mean 'floor'"), std::string::npos) << c.err;
  auto d = testing::run_cli("analyze --store " + (t / "s.sqlite") + " --out " + (t / "d") +
                                " --analysis 'majority_floor={\"vote_size\":[2]}'",
                            t.path());
  EXPECT_EQ(d.exit_code, 2);
  EXPECT_NE(d.err.find("majority_floor.vote_size: unknown option"), std::string::npos) << d.err;
  auto e = testing::run_cli("analyze --store " + (t / "s.sqlite") + " --out " + (t / "e") +
                                " --analysis 'floor={not json'",
                            t.path());
  EXPECT_EQ(e.exit_code, 2);
  EXPECT_NE(e.err.find("not valid JSON"), std::string::npos) << e.err;
}

}  // namespace
}  // namespace nf
