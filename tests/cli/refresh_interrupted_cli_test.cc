// Tester s10 finding 13, end to end through the binary: "An interrupted `run --refresh`
// leaves a store half old / half new; a plain resume calls it complete." `run` and `audit`
// now say that the refresh did not finish, how many planned draws still hold answers from
// before it, and how to finish it; `run --refresh` again resumes it (runner.h
// RunSummary::Refresh; tests/runner/refresh_resume_test.cc checks the counts).
#include <gtest/gtest.h>

#include <string>

#include "common/test_data.h"

namespace nf {
namespace {

using testing::CmdResult;
using testing::run_cli;
using testing::TempDir;

TEST(RefreshInterruptedCli, RunAndAuditSayAnUnfinishedRefreshAndRunRefreshFinishesIt) {
  TempDir d;
  testing::write_text(d / "r.yaml", "name: r\nseed: 5\ntask: mcq\ndataset:\n  format: medqa\n  limit: 6\n  path: " +
                                        std::string(NF_SOURCE_DIR) +
                                        "/data/sample-mcq.jsonl\nsubjects:\n  - name: s\n    backend: sim\n"
                                        "    model: sim-mcq-1\nconditions: [none]\nconfigs:\n  temperature: [0.7]\n"
                                        "replicates: 2\nanalyses:\n  floor: {}\n");
  const std::string store = " --store " + d / "s.sqlite" + " --quiet";
  const CmdResult first = run_cli("run " + d / "r.yaml" + store, d.path());
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(first.err.find("--refresh"), std::string::npos) << first.err;

  const CmdResult cut = run_cli("run " + d / "r.yaml" + store + " --refresh --max-draws 5 --threads 1", d.path());
  ASSERT_EQ(cut.exit_code, 0) << cut.err;
  EXPECT_NE(cut.err.find("did not finish: 7 of 12 planned draws still hold answers from before it"), std::string::npos)
      << cut.err;

  // The plain resume used to say only "12 already in the store".
  const CmdResult plain = run_cli("run " + d / "r.yaml" + store, d.path());
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_NE(plain.err.find("12 already in the store"), std::string::npos) << plain.err;
  EXPECT_NE(plain.err.find("a `run --refresh` started "), std::string::npos) << plain.err;
  EXPECT_NE(plain.err.find("did not finish: 7 of 12 planned draws"), std::string::npos) << plain.err;
  EXPECT_NE(plain.err.find("run `noisefloor run " + d / "r.yaml" + " --refresh` again to finish it"),
            std::string::npos)
      << plain.err;
  const CmdResult audit = run_cli("audit " + d / "r.yaml" + store + " --out " + d / "out", d.path());
  ASSERT_EQ(audit.exit_code, 0) << audit.err;
  EXPECT_NE(audit.err.find("did not finish: 7 of 12 planned draws"), std::string::npos) << audit.err;

  const CmdResult resumed = run_cli("run " + d / "r.yaml" + store + " --refresh", d.path());
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.err.find("--refresh resumed: 5 already refreshed, the rest re-run, 7 run now"), std::string::npos)
      << resumed.err;
  EXPECT_NE(resumed.err.find("is complete: every planned draw refreshed"), std::string::npos) << resumed.err;
  const CmdResult after = run_cli("run " + d / "r.yaml" + store, d.path());
  ASSERT_EQ(after.exit_code, 0) << after.err;
  EXPECT_EQ(after.err.find("--refresh"), std::string::npos) << after.err;
}

}  // namespace
}  // namespace nf
