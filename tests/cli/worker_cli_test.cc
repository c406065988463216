// `noisefloor worker` on a shared PostgreSQL store (issue 14 item 4; docs/store.md): four
// worker processes, two SIGKILLed mid-run and restarted, store every planned draw exactly
// once, and the analysis equals the same study run by one `run` process on SQLite.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/worker_test_util.h"

namespace nf {
namespace {

using testing::CmdResult;
using testing::run_cli;
using testing::TempDir;

using worker_test::study_yaml;

TEST(WorkerCli, FourWorkersTwoKilledMidRunStoreEveryPlannedDrawOnceAndMatchSqlite) {
  worker_test::worker_kill_scenario(/*reps=*/20, /*workers=*/4, /*killed=*/2);  // 3,840 draws
}

TEST(WorkerCli, SqliteStoreIsRefusedWithAPointerToRun) {
  TempDir d;
  testing::write_text(d / "study.yaml", study_yaml(1));
  CmdResult r = run_cli("worker " + d / "study.yaml" + " --store " + d / "s.sqlite", d.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("needs a shared PostgreSQL store"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("noisefloor run"), std::string::npos) << r.err;
}

TEST(WorkerCli, UnreachableServerExits3) {
  TempDir d;
  testing::write_text(d / "study.yaml", study_yaml(1));
  CmdResult r = run_cli("worker " + d / "study.yaml" + " --store 'postgresql://nf:pw@127.0.0.1:1/x?connect_timeout=2'",
                        d.path());
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("cannot connect to PostgreSQL"), std::string::npos) << r.err;
}

TEST(WorkerCli, PostgresqlStoreUnsupportedStepsAreClearErrors) {
  NF_SKIP_WITHOUT_PG();
  TempDir d;
  testing::PgSchema schema;
  testing::write_text(d / "study.yaml", study_yaml(1) + "store: " + schema.url() + "\n");
  // `run` takes the study's `store:` URL (a single process on PostgreSQL works too).
  CmdResult run = run_cli("run " + d / "study.yaml" + " --quiet", d.path());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto store = Store::open(schema.url());
  ASSERT_TRUE(store.ok());
  EXPECT_EQ(*(*store)->draw_count(), 24 * 4 * 2);
  testing::write_text(d / "long.csv", "subject,item,condition,config,replicate,outcome,value\nm,q1,none,default,0,correct,1\n");
  CmdResult imp = run_cli("import draws " + d / "long.csv" + " --store '" + schema.url() + "'", d.path());
  EXPECT_EQ(imp.exit_code, 2) << imp.err;
  EXPECT_NE(imp.err.find("PostgreSQL store"), std::string::npos) << imp.err;
}

}  // namespace
}  // namespace nf
