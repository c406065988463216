// One process at a time calls the API for a store (issue 31 item 1), end to end through
// the real binary against serve-sim: a second `noisefloor run` on a store that another
// live run is filling is refused at once (exit 2, naming the store and the other pid)
// instead of calling the server for every draw the first one is also calling (both read
// the same missing draws at start; the loser's AlreadyExists was counted as run: double
// API spend). The server counts the calls it saw. A run killed with SIGKILL leaves no lock:
// the next run resumes. The lock itself: tests/store/run_lock_test.cc.
#include <gtest/gtest.h>
#include <httplib.h>

#include <signal.h>
#include <stdlib.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "common/process.h"
#include "common/store_poll.h"
#include "common/test_data.h"
#include "store/store.h"

namespace nf {
namespace {

using testing::CmdResult;
using testing::run_cli;
using testing::slurp;
using testing::TempDir;

// 24 items x 3 replicates = 72 draws over HTTP, 2 at a time, each answered after 40 ms:
// about 1.5 s, long enough for a second run to start while the first one runs.
constexpr int kPlanned = 72;

std::string study_text() {
  return "name: one-run\nseed: 3\ndataset:\n  format: medqa\n  path: " + std::string(NF_SOURCE_DIR) +
         "/data/sample-mcq.jsonl\nsubjects:\n  - name: http\n    backend: openai\n    base_url: ${SIM_URL}\n"
         "    model: sim-mcq-1\n    concurrency: 2\nconditions: [none]\nconfigs:\n  temperature: [0.7]\n"
         "replicates: 3\nanalyses:\n  floor: {}\n";
}

int64_t chat_requests(const std::string& url) {
  httplib::Client c("127.0.0.1", std::stoi(url.substr(url.rfind(':') + 1)));
  auto res = c.Get("/v1/sim/stats");
  if (!res || res->status != 200) return -1;
  return nlohmann::json::parse(res->body)["chat_requests"].get<int64_t>();
}

int64_t draws_in(const std::string& store) {
  auto s = Store::open_read_only(store);
  if (!s.ok()) return -1;
  auto n = (*s)->draw_count();
  return n.ok() ? *n : -1;
}

TEST(OneRunPerStore, SecondRunOnALiveStoreIsRefusedAndNoCallIsMadeTwice) {
  TempDir d;
  testing::Child sim;
  const std::string url = testing::start_sim(sim, {"--latency-ms", "40"}, d / "sim.err");
  ASSERT_FALSE(url.empty()) << slurp(d / "sim.err");
  testing::write_text(d / "study.yaml", study_text());
  const std::string store = d / "store.sqlite";
  setenv("SIM_URL", url.c_str(), 1);
  testing::Child first = testing::spawn({"run", d / "study.yaml", "--quiet", "--store", store}, d / "first.err");
  unsetenv("SIM_URL");
  ASSERT_GE(testing::wait_for_draws(store, 1), 1) << slurp(d / "first.err");
  const pid_t first_pid = first.pid;
  const CmdResult second = run_cli("run " + d / "study.yaml" + " --quiet --store " + store, d.path(), "SIM_URL=" + url);
  const int first_rc = testing::wait_exit(first);
  const int64_t calls = chat_requests(url);
  testing::kill_and_wait(sim, SIGTERM);

  EXPECT_EQ(second.exit_code, 2) << second.err;
  EXPECT_NE(second.err.find("noisefloor run: store " + store + " is in use by another noisefloor process (pid " +
                            std::to_string(first_pid) + " on host "),
            std::string::npos)
      << second.err;
  EXPECT_NE(second.err.find("noisefloor run, since "), std::string::npos) << second.err;
  ASSERT_EQ(first_rc, 0) << slurp(d / "first.err");
  // Every planned draw was called once: the refused run made no call.
  EXPECT_EQ(calls, kPlanned);
  EXPECT_EQ(draws_in(store), kPlanned);
}

TEST(OneRunPerStore, RunKilledBySigkillLeavesNoLockAndTheNextRunResumes) {
  TempDir d;
  testing::Child sim;
  const std::string url = testing::start_sim(sim, {"--latency-ms", "40"}, d / "sim.err");
  ASSERT_FALSE(url.empty()) << slurp(d / "sim.err");
  testing::write_text(d / "study.yaml", study_text());
  const std::string store = d / "store.sqlite";
  setenv("SIM_URL", url.c_str(), 1);
  testing::Child first = testing::spawn({"run", d / "study.yaml", "--quiet", "--store", store}, d / "first.err");
  unsetenv("SIM_URL");
  ASSERT_GE(testing::wait_for_draws(store, 4), 4) << slurp(d / "first.err");
  testing::kill_and_wait(first, SIGKILL);
  const int64_t kept = draws_in(store);
  ASSERT_GT(kept, 0);
  ASSERT_LT(kept, kPlanned) << "the first run finished before it was killed: nothing left to resume";
  EXPECT_TRUE(std::filesystem::exists(store + "-lock"));  // left in place; the kernel dropped the lock

  const CmdResult again = run_cli("run " + d / "study.yaml" + " --store " + store, d.path(), "SIM_URL=" + url);
  const int64_t calls = chat_requests(url);
  testing::kill_and_wait(sim, SIGTERM);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.err.find(std::to_string(kept) + " already in the store"), std::string::npos) << again.err;
  EXPECT_EQ(draws_in(store), kPlanned);
  // The resumed run called only the missing draws (plus the killed run's calls that were in
  // flight or waiting for their commit: at most 2 + 2 at concurrency 2).
  EXPECT_GE(calls, kPlanned);
  EXPECT_LE(calls, kPlanned + 4);
}

}  // namespace
}  // namespace nf
