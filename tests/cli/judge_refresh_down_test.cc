// `judge --refresh` against a judge server that is down keeps every stored vote (issue 31
// item 2): a refreshed judgment whose call failed at the API replaced the stored verdict
// with an api_error, so a refresh during an outage deleted the votes it meant to renew.
// As `run --refresh` keeps a stored answer (runner.cc), the failed call now replaces
// nothing, and the closing message says how many refreshed calls failed and that no
// stored vote was replaced.
#include <gtest/gtest.h>

#include <signal.h>

#include <string>
#include <tuple>
#include <vector>

#include "common/process.h"
#include "common/test_data.h"
#include "store/store.h"

namespace nf {
namespace {

using testing::CmdResult;
using testing::data_env;
using testing::data_file;
using testing::run_cli;
using testing::slurp;
using testing::TempDir;
using testing::write_text;

std::string judge(const std::string& name, const std::string& provider) {
  return "    - name: " + name + "\n      provider: " + provider + "\n      backend: openai\n      model: sim-" + name +
         "\n      base_url: ${SIM_URL}\n      max_retries: 0\n      concurrency: 4\n";
}

// Every stored judgment as (judge, draw, status, label, reply): what a refresh must keep.
std::vector<std::tuple<std::string, int64_t, std::string, int, std::string>> judgments_of(const std::string& path) {
  std::vector<std::tuple<std::string, int64_t, std::string, int, std::string>> out;
  auto s = Store::open_existing(path);
  EXPECT_TRUE(s.ok());
  if (!s.ok()) return out;
  auto rows = (*s)->judgments();
  EXPECT_TRUE(rows.ok());
  if (!rows.ok()) return out;
  for (const auto& r : *rows)
    out.emplace_back(r.judge, r.draw_id.value_or(-1), r.status, r.label.value_or(-1), r.raw_response);
  return out;
}

TEST(JudgeRefreshDown, RefreshAgainstADownJudgeReplacesNoStoredVote) {
  TempDir d;
  testing::Child sim;
  const std::string url = testing::start_sim(sim, {}, d / "sim.err");
  ASSERT_FALSE(url.empty()) << slurp(d / "sim.err");
  const std::string store = d / "probe.sqlite";
  const CmdResult imp = run_cli(
      "import probe-sheet " + data_file("missing-info-judges/annotation_sheet.md") + " --store " + store, d.path(),
      data_env());
  ASSERT_EQ(imp.exit_code, 0) << imp.err;
  write_text(d / "judges.yaml", "name: refresh-down\ntask: chat\nstore: " + store + "\njudge:\n  panel:\n" +
                                    judge("judge-o", "openai") + judge("judge-a", "anthropic"));
  const CmdResult first = run_cli("judge " + d / "judges.yaml" + " --quiet", d.path(), "SIM_URL=" + url);
  testing::kill_and_wait(sim, SIGTERM);  // the judge server is down from here on
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const auto before = judgments_of(store);
  ASSERT_EQ(before.size(), 100u);
  int votes = 0;
  for (const auto& j : before) votes += std::get<2>(j) == "ok";
  ASSERT_GT(votes, 80);

  const CmdResult refresh = run_cli("judge " + d / "judges.yaml" + " --quiet --refresh", d.path(), "SIM_URL=" + url);
  // Every refreshed call failed: exit 3 (judge backend unavailable), as before.
  EXPECT_EQ(refresh.exit_code, 3) << refresh.err;
  EXPECT_NE(refresh.err.find("100 judgments planned, 0 already in the store, 100 run now (ok 0, parse_error 0, "
                             "api_error 100)"),
            std::string::npos)
      << refresh.err;
  EXPECT_NE(refresh.err.find("judge: 100 refreshed judgments failed at the API (first: "), std::string::npos)
      << refresh.err;
  EXPECT_NE(refresh.err.find("no stored vote was replaced: 100 stored judgments were kept as they were, 0 (none or an "
                             "api_error stored) are stored as api_error"),
            std::string::npos)
      << refresh.err;
  // The store holds exactly what it held: every vote, parse error and reply.
  EXPECT_EQ(judgments_of(store), before);
}

}  // namespace
}  // namespace nf
