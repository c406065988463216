// A judging-only study (judge block, no dataset or subjects) through the binary: `run`
// refuses it with a message pointing at `judge`, and `analyze` over a store whose
// judgments are all API failures reports "no votes" instead of failing.
#include <gtest/gtest.h>

#include <string>

#include "common/test_data.h"
#include "store/store.h"

namespace nf {
namespace {

const char* kJudgeOnly =
    "name: judge-only\n"
    "task: chat\n"
    "judge:\n"
    "  panel:\n"
    "    - {name: j1, provider: openai, backend: sim, model: sim-judge}\n";

TEST(JudgeOnlyStudy, RunRefusesItAndNamesTheJudgeCommand) {
  testing::TempDir dir;
  testing::write_text(dir.path() + "/s.yaml", kJudgeOnly);
  auto r = testing::run_cli("run " + dir.path() + "/s.yaml --store " + dir.path() + "/x.sqlite --quiet", dir.path());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("has no subjects (a judging-only study)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("noisefloor judge"), std::string::npos) << r.err;
}

TEST(JudgeOnlyStudy, AnalyzeWithOnlyFailedJudgmentsReportsNoVotes) {
  testing::TempDir dir;
  const std::string store_path = dir.path() + "/s.sqlite";
  {
    auto store = Store::open(store_path);
    ASSERT_TRUE(store.ok()) << store.status().to_string();
    std::vector<JudgmentRow> rows;
    for (const char* item : {"A001", "A002", "A003"}) {
      JudgmentRow r;
      r.subject = "m1";
      r.subject_provider = "openai";
      r.item = item;
      r.cluster = item;
      r.judge = "j1";
      r.judge_provider = "openai";
      r.status = "api_error";
      r.raw_response = "HTTP 500";
      rows.push_back(r);
    }
    ASSERT_TRUE((*store)->put_judgments(rows).ok());
  }
  auto r = testing::run_cli("analyze --store " + store_path + " --out " + dir.path() + "/out", dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string report = testing::slurp(dir.path() + "/out/report.md");
  EXPECT_NE(report.find("3 judgments but no votes (3 api_error, 0 parse_error"), std::string::npos) << report;
  const std::string results = testing::slurp(dir.path() + "/out/results.json");
  EXPECT_NE(results.find("\"skipped\""), std::string::npos);
}

}  // namespace
}  // namespace nf
