// `noisefloor judge`: help, input errors and exit codes (docs/judging.md).
#include <gtest/gtest.h>

#include <string>

#include "common/test_data.h"
#include "store/store.h"

namespace nf {
namespace {

using testing::CmdResult;
using testing::run_cli;
using testing::TempDir;
using testing::write_text;

TEST(JudgeCommand, HelpTeachesWhatAVoteIsAndTheExitCodes) {
  TempDir d;
  const CmdResult r = run_cli("judge --help", d.path());
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("What is a vote"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("parse_error"), std::string::npos);
  EXPECT_NE(r.out.find("Exit codes"), std::string::npos);
  EXPECT_NE(r.out.find("--refresh"), std::string::npos);
  const CmdResult top = run_cli("--help", d.path());
  EXPECT_NE(top.out.find("judge"), std::string::npos);
}

TEST(JudgeCommand, BadInputExitsTwoWithAReason) {
  TempDir d;
  const std::string panel =
      "judge:\n  panel:\n    - name: j\n      backend: sim\n      model: m\n";
  // Missing store.
  write_text(d / "a.yaml", "name: a\ntask: chat\nstore: " + d / "none.sqlite" + "\n" + panel);
  CmdResult r = run_cli("judge " + d / "a.yaml", d.path());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("none.sqlite"), std::string::npos) << r.err;
  // A store whose study is not a chat task.
  {
    auto s = Store::open(d / "mcq.sqlite");
    ASSERT_TRUE(s.ok());
    ASSERT_TRUE((*s)->put_study({"m", "", 0, {{"task", "mcq"}}}).ok());
  }
  write_text(d / "b.yaml", "name: b\ntask: chat\nstore: " + d / "mcq.sqlite" + "\n" + panel);
  r = run_cli("judge " + d / "b.yaml", d.path());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("chat task"), std::string::npos) << r.err;
  // A mistyped key in the panel.
  write_text(d / "c.yaml", "name: c\ntask: chat\nstore: " + d / "mcq.sqlite" +
                               "\njudge:\n  panel:\n    - name: j\n      backend: sim\n      modle: m\n");
  r = run_cli("judge " + d / "c.yaml", d.path());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("model"), std::string::npos) << r.err;
  // Unknown flag.
  r = run_cli("judge " + d / "b.yaml --refersh", d.path());
  EXPECT_EQ(r.exit_code, 2);
}

}  // namespace
}  // namespace nf
