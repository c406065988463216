// The multi-worker SIGKILL scenario of `noisefloor worker` on PostgreSQL (issue 14 item 4),
// shared by the default-tier test (worker_cli_test.cc) and the larger slow-tier one.
#pragma once

#include <gtest/gtest.h>

#include <sys/wait.h>

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

namespace nf::worker_test {

using testing::CmdResult;
using testing::run_cli;
using testing::TempDir;

inline std::string study_yaml(int replicates, bool majority_floor = true) {
  return "name: workers\nseed: 7\ndataset:\n  format: medqa\n  path: " + std::string(NF_SOURCE_DIR) +
         "/data/sample-mcq.jsonl\nsubjects:\n  - name: sim\n    backend: sim\n    model: sim-mcq-1\n"
         "conditions: [none, shuffle, remove_answer, remove_context]\nconfigs:\n  temperature: [0, 0.7]\n"
         "replicates: " +
         std::to_string(replicates) +
         "\nanalyses:\n  floor: {}\n" + (majority_floor ? "  majority_floor: {vote_sizes: [3]}\n" : "") +
         "  mcq_robustness: {}\n"
         "bootstrap: {resamples: 200, seed: 1, level: 0.95}\n";
}

inline int64_t done_count(const testing::PgSchema& schema) {
  const std::string v = schema.query("SELECT count(*) FROM planned_draws WHERE done");
  return v.empty() ? 0 : std::stoll(v);
}

/// results.json without run metadata (the store location differs by construction).
inline nlohmann::json results_without_metadata(const std::string& dir) {
  auto j = nlohmann::json::parse(testing::slurp(dir + "/results.json"));
  j.erase("store");
  return j;
}

/// `workers` worker processes on one PostgreSQL study of sim subjects (sample-mcq: 24 items x
/// 4 conditions x 2 configs x `reps`); `killed` of them are SIGKILLed once a quarter of the
/// plan is committed and restarted. Checks every planned draw is stored exactly once and
/// that results.json equals the same study run by one `run` process on SQLite (up to the
/// store location), and prints the measured numbers. `majority_floor` = false leaves that
/// analysis out (its exact enumeration refuses 100 replicates).
inline void worker_kill_scenario(int reps, int workers_n, int killed, bool majority_floor = true) {
  NF_SKIP_WITHOUT_PG();
  TempDir d;
  testing::PgSchema schema;
  const int64_t planned = 24 * 4 * 2 * reps;  // items x conditions x configs x replicates
  testing::write_text(d / "study.yaml", study_yaml(reps, majority_floor));
  const std::vector<std::string> worker_args = {"worker",  d / "study.yaml", "--store",         schema.url(), "--quiet",
                                                "--threads", "2",           "--batch",         "16",
                                                "--lease-seconds", "2"};
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<testing::Child> workers;
  for (int w = 0; w < workers_n; ++w) workers.push_back(testing::spawn(worker_args, d / ("w" + std::to_string(w) + ".err")));
  // Kill `killed` workers without warning once a quarter of the plan is committed.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (done_count(schema) < planned / 4 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const int64_t at_kill = done_count(schema);
  for (int w = 0; w < killed; ++w) {
    const int status = testing::kill_and_wait(workers[w], SIGKILL);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
        << "worker " << w << " had already exited before the kill (done " << at_kill << " of " << planned
        << "); its stderr: " << testing::slurp(d / ("w" + std::to_string(w) + ".err"));
  }
  ASSERT_LT(at_kill, planned) << "the plan was done before the kill; make the study larger";
  // Restart them (new worker ids); the killed workers' leases expire after 2 s.
  for (int w = 0; w < killed; ++w) workers[w] = testing::spawn(worker_args, d / ("w" + std::to_string(w) + "b.err"));
  for (int w = 0; w < workers_n; ++w)
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
  std::printf("worker test: %lld planned draws, %d workers (%d SIGKILLed at %lld done, restarted), %s draws claimed "
              "again after lease expiry, %.1f s wall (%.0f draws/s), every draw stored once\n",
              static_cast<long long>(planned), workers_n, killed, static_cast<long long>(at_kill), reclaimed.c_str(),
              seconds, static_cast<double>(planned) / seconds);

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

}  // namespace nf::worker_test
