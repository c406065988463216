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

#include "common/pg.h"
#include "common/process.h"
#include "common/test_data.h"
#include "store/store.h"

namespace nf {
namespace {

using testing::CmdResult;
using testing::run_cli;
using testing::TempDir;

std::string study_yaml(int replicates) {
  return "name: workers\nseed: 7\ndataset:\n  format: medqa\n  path: " + std::string(NF_SOURCE_DIR) +
         "/data/sample-mcq.jsonl\nsubjects:\n  - name: sim\n    backend: sim\n    model: sim-mcq-1\n"
         "conditions: [none, shuffle, remove_answer, remove_context]\nconfigs:\n  temperature: [0, 0.7]\n"
         "replicates: " +
         std::to_string(replicates) +
         "\nanalyses:\n  floor: {}\n  majority_floor: {vote_sizes: [3]}\n  mcq_robustness: {}\n"
         "bootstrap: {resamples: 200, seed: 1, level: 0.95}\n";
}

int64_t done_count(const testing::PgSchema& schema) {
  const std::string v = schema.query("SELECT count(*) FROM planned_draws WHERE done");
  return v.empty() ? 0 : std::stoll(v);
}

/// results.json without run metadata (the store location differs by construction).
nlohmann::json results_without_metadata(const std::string& dir) {
  auto j = nlohmann::json::parse(testing::slurp(dir + "/results.json"));
  j.erase("store");
  return j;
}

TEST(WorkerCli, FourWorkersTwoKilledMidRunStoreEveryPlannedDrawOnceAndMatchSqlite) {
  NF_SKIP_WITHOUT_PG();
  TempDir d;
  testing::PgSchema schema;
  const int reps = 20;
  const int64_t planned = 24 * 4 * 2 * reps;  // items x conditions x configs x replicates = 3,840
  testing::write_text(d / "study.yaml", study_yaml(reps));
  const std::vector<std::string> worker_args = {"worker",  d / "study.yaml", "--store",         schema.url(), "--quiet",
                                                "--threads", "2",           "--batch",         "16",
                                                "--lease-seconds", "2"};
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<testing::Child> workers;
  for (int w = 0; w < 4; ++w) workers.push_back(testing::spawn(worker_args, d / ("w" + std::to_string(w) + ".err")));
  // Kill two workers without warning once a quarter of the plan is committed.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (done_count(schema) < planned / 4 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const int64_t at_kill = done_count(schema);
  for (int w = 0; w < 2; ++w) {
    const int status = testing::kill_and_wait(workers[w], SIGKILL);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
        << "worker " << w << " had already exited before the kill; make the study larger";
  }
  ASSERT_LT(at_kill, planned) << "the plan was done before the kill; make the study larger";
  // Restart them (new worker ids); the killed workers' leases expire after 2 s.
  workers[0] = testing::spawn(worker_args, d / "w0b.err");
  workers[1] = testing::spawn(worker_args, d / "w1b.err");
  for (int w = 0; w < 4; ++w)
    EXPECT_EQ(testing::wait_exit(workers[w]), 0) << testing::slurp(d / ("w" + std::to_string(w) + ".err"));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  auto store = Store::open(schema.url());
  ASSERT_TRUE(store.ok()) << store.status().message();
  EXPECT_EQ(*(*store)->draw_count(), planned);
  auto keys = (*store)->finished_keys();
  ASSERT_TRUE(keys.ok());
  EXPECT_EQ(static_cast<int64_t>(keys->size()), planned) << "a planned draw is missing or stored twice";
  auto counts = (*store)->plan_counts();
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ(counts->planned, planned);
  EXPECT_EQ(counts->done, planned);
  // Every ok draw carries both outcomes (no half-written draw).
  auto rows = (*store)->outcome_rows();
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(static_cast<int64_t>(rows->size()), 2 * planned);
  const std::string reclaimed = schema.query("SELECT count(*) FROM planned_draws WHERE claims > 1");
  EXPECT_NE(reclaimed, "0") << "the killed workers' leased draws should have been claimed again";
  std::printf("worker test: %lld planned draws, 4 workers (2 SIGKILLed at %lld done, restarted), %s draws claimed "
              "again after lease expiry, %.1f s wall, every draw stored once\n",
              static_cast<long long>(planned), static_cast<long long>(at_kill), reclaimed.c_str(), seconds);

  // The same study by one process on SQLite: the same analysis.
  CmdResult run = run_cli("run " + d / "study.yaml" + " --quiet --threads 1 --store " + d / "one.sqlite", d.path());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  CmdResult a_sqlite = run_cli("analyze --store " + d / "one.sqlite" + " --out " + d / "sqlite", d.path());
  ASSERT_EQ(a_sqlite.exit_code, 0) << a_sqlite.err;
  CmdResult a_pg = run_cli("analyze --store '" + schema.url() + "' --out " + d / "pg", d.path());
  ASSERT_EQ(a_pg.exit_code, 0) << a_pg.err;
  const auto rs = results_without_metadata(d / "sqlite"), rp = results_without_metadata(d / "pg");
  EXPECT_EQ(rs["draws"], rp["draws"]);
  EXPECT_EQ(rs["analyses"], rp["analyses"]);
  EXPECT_EQ(rs, rp);
  EXPECT_GT(rs["analyses"]["floor"]["rows"].size(), 0u);
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
