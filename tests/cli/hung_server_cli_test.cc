// A hung model server and a prompt stop (issue 16), end to end through the real binary:
// a serve-sim that is SIGSTOPped mid-run accepts connections (the kernel does) but never
// answers. The run must stop on its own within the documented bound (docs/backends.md "A
// server that hangs") with exit 3, keep exactly the draws that finished, and a resume
// must give the outcomes of an uninterrupted run; SIGTERM with calls hung must end within
// the stop's grace without storing the hung draws; a slow server that does answer must
// complete. Every test runs on the event loop and on the thread path (--no-event-loop,
// the path of `worker`). Every wait has its own deadline: a regression fails, never hangs.
#include <gtest/gtest.h>
#include <httplib.h>
#include <sqlite3.h>

#include <nlohmann/json.hpp>

#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <map>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "backend/retry.h"
#include "common/pg.h"
#include "common/process.h"
#include "common/test_data.h"
#include "runner/runner.h"
#include "spec/study.h"
#include "store/store.h"

namespace nf {
namespace {

using testing::CmdResult;
using testing::run_cli;
using testing::slurp;
using testing::TempDir;

using testing::start_sim;

// Ends a (possibly stopped) serve-sim when a test leaves early on a failed assertion.
struct SimGuard {
  testing::Child& c;
  ~SimGuard() {
    if (c.pid <= 0) return;
    kill(c.pid, SIGCONT);
    testing::kill_and_wait(c, SIGKILL);
  }
};

// The sample MCQ study on one openai subject at ${SIM_URL}: 24 items (or `limit`) x 2
// temperatures x `replicates`, concurrency 4 (the default), default retries.
std::string study_yaml(double timeout_s, int replicates, int limit = 0) {
  return "name: hung\nseed: 7\ndataset:\n  format: medqa\n  path: " + std::string(NF_SOURCE_DIR) +
         "/data/sample-mcq.jsonl\n" + (limit > 0 ? "  limit: " + std::to_string(limit) + "\n" : "") +
         "subjects:\n  - name: http\n    backend: openai\n    base_url: ${SIM_URL}\n    model: sim-mcq-1\n"
         "    timeout_s: " +
         std::to_string(timeout_s) + "\nconditions: [none]\nconfigs:\n  temperature: [0, 0.7]\nreplicates: " +
         std::to_string(replicates) + "\nanalyses:\n  floor: {}\nbootstrap: {resamples: 50, seed: 1, level: 0.95}\n";
}

// Waits up to `limit_s` for `c` to exit; SIGKILLs it after that. Seconds waited; *status
// is the wait status (killed: WIFSIGNALED).
double wait_within(testing::Child& c, double limit_s, int* status) {
  const auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    const pid_t done = waitpid(c.pid, status, WNOHANG);
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (done == c.pid) {
      c.pid = -1;
      return waited;
    }
    if (waited > limit_s) {
      *status = testing::kill_and_wait(c, SIGKILL);
      return waited;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

// The "N run now" of a run's summary line (-1 when absent).
int64_t run_now(const std::string& err) {
  std::smatch m;
  if (!std::regex_search(err, m, std::regex(R"((\d+) run now)"))) return -1;
  return std::stoll(m[1]);
}

// Waits (up to 20 s) until the serve-sim at `url` ("http://127.0.0.1:PORT/v1") has
// received `n` chat requests in all (GET /v1/sim/stats); its count (n = 0: the count now). Polling the server, not the
// store: a reader opening the SQLite store while `run` creates it can make the run's
// "set WAL mode" fail (database is locked).
int64_t wait_for_requests(const std::string& url, int64_t n) {
  const size_t colon = url.rfind(':'), slash = url.find("/v1");
  httplib::Client client("127.0.0.1", std::stoi(url.substr(colon + 1, slash - colon - 1)));
  int64_t seen = -1;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (seen < n && std::chrono::steady_clock::now() < deadline) {
    if (auto res = client.Get("/v1/sim/stats"); res && res->status == 200) {
      const auto j = nlohmann::json::parse(res->body, nullptr, false);
      if (j.is_object() && j.contains("chat_requests")) seen = j["chat_requests"].get<int64_t>();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return seen;
}

// (status, error) of every stored draw.
std::vector<std::pair<std::string, std::string>> stored_draws(const std::string& path) {
  std::vector<std::pair<std::string, std::string>> out;
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) return out;
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "SELECT status, error FROM draws", -1, &st, nullptr);
  while (st && sqlite3_step(st) == SQLITE_ROW)
    out.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)),
                     reinterpret_cast<const char*>(sqlite3_column_text(st, 1)));
  sqlite3_finalize(st);
  sqlite3_close(db);
  return out;
}

std::map<std::string, double> outcomes(const std::string& path) {
  std::map<std::string, double> out;
  auto s = Store::open_existing(path);
  if (!s.ok()) return out;
  auto rows = (*s)->outcome_rows();
  if (!rows.ok()) return out;
  for (const auto& o : *rows)
    out[o.subject + "|" + o.item + "|" + o.condition + "|" + o.config + "|" + std::to_string(o.replicate) + "|" +
        o.outcome] = o.value;
  return out;
}

class HungServer : public ::testing::TestWithParam<bool> {  // true = --no-event-loop (thread path)
 protected:
  std::vector<std::string> path_flags() const {
    return GetParam() ? std::vector<std::string>{"--no-event-loop"} : std::vector<std::string>{};
  }
  std::string path_flag() const { return GetParam() ? " --no-event-loop" : ""; }
};

// The server stops answering mid-run (SIGSTOP): with timeout_s 1 the run must exit 3 within
// timeout_s + the longest default back-off (4 s) + the grace (5 s) + the cut (1 s) + 2 s of
// slack = 13 s, having stored exactly the draws it reports (the silent ones as api_error,
// never scored); the resume gives the outcomes of an uninterrupted run. Without the
// silence rule, each draw would spend 5 x 1 s + back-off and the breaker would need 16 of
// them: about 4 x 12 s, plus the draws in flight.
TEST_P(HungServer, MidRunExitsThreeWithinTheBoundAndAResumeCompletes) {
  TempDir d;
  testing::Child sim;
  SimGuard guard{sim};
  const std::string url = start_sim(sim, {"--latency-ms", "20"}, d / "sim.err");
  ASSERT_FALSE(url.empty()) << slurp(d / "sim.err");
  testing::write_text(d / "study.yaml", study_yaml(1.0, 10));
  const int64_t planned = 24 * 2 * 10;
  const CmdResult ref = run_cli("run " + d / "study.yaml" + " --quiet --no-cache --threads 16 --store " + d / "ref.sqlite",
                                d.path(), "SIM_URL=" + url);
  ASSERT_EQ(ref.exit_code, 0) << ref.err;

  const int64_t base = wait_for_requests(url, 0);  // the reference run's
  setenv("SIM_URL", url.c_str(), 1);  // spawn() passes our environment to the child
  std::vector<std::string> args{"run", d / "study.yaml", "--quiet", "--no-cache", "--store", d / "k.sqlite"};
  for (const auto& f : path_flags()) args.push_back(f);
  testing::Child run = testing::spawn(args, d / "run.err");
  ASSERT_GE(wait_for_requests(url, base + 60), base + 60) << slurp(d / "run.err");
  kill(sim.pid, SIGSTOP);
  int status = 0;
  const double waited = wait_within(run, 30.0, &status);
  kill(sim.pid, SIGCONT);
  const std::string err = slurp(d / "run.err");
  ASSERT_TRUE(WIFEXITED(status)) << "killed after " << waited << " s:\n" << err;
  EXPECT_EQ(WEXITSTATUS(status), 3) << err;
  EXPECT_LT(waited, 13.0) << err;
  EXPECT_NE(err.find("stopped: subject 'http' (openai:" + url +
                     "): the server accepted the requests but sent no HTTP response to any call for 1 s"),
            std::string::npos)
      << err;
  // Stored = what the run reports as run and committed; the failures are the silent
  // attempts, stored as api_error (never scored: the resume below equals the reference).
  const auto draws = stored_draws(d / "k.sqlite");
  EXPECT_EQ(static_cast<int64_t>(draws.size()), run_now(err)) << err;
  EXPECT_LT(static_cast<int64_t>(draws.size()), planned) << "the run ended before the hang: make it longer";
  int64_t api_error = 0;
  for (const auto& [st, e] : draws) {
    if (st != "api_error") continue;
    ++api_error;
    EXPECT_NE(e.find("no HTTP response from the server to any call for 1 s"), std::string::npos) << e;
  }
  EXPECT_GE(api_error, 1) << err;

  const CmdResult resumed = run_cli("run " + d / "study.yaml" + " --quiet --no-cache --store " + d / "k.sqlite" + path_flag(),
                                    d.path(), "SIM_URL=" + url);
  testing::kill_and_wait(sim, SIGTERM);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  const auto after = stored_draws(d / "k.sqlite");
  EXPECT_EQ(static_cast<int64_t>(after.size()), planned);
  for (const auto& [st, e] : after) EXPECT_NE(st, "api_error") << e;
  const auto want = outcomes(d / "ref.sqlite");
  EXPECT_EQ(want.size(), static_cast<size_t>(planned * 2));  // two outcomes per MCQ draw
  EXPECT_EQ(outcomes(d / "k.sqlite"), want);
}

// SIGTERM while every call hangs (timeout_s 60: nothing times out): the run ends within
// the grace (5 s) + the cut (about 1 s on the thread path) + 1.5 s of slack, exit 130,
// stores only what finished (no api_error: the hung calls are abandoned, not failures) and
// says how many it abandoned. A second signal ends a run at once. The resume completes
// with the outcomes of an uninterrupted run.
TEST_P(HungServer, SigtermWithCallsHungExitsWithinTheGrace) {
  TempDir d;
  testing::Child sim;
  SimGuard guard{sim};
  const std::string url = start_sim(sim, {"--latency-ms", "20"}, d / "sim.err");
  ASSERT_FALSE(url.empty()) << slurp(d / "sim.err");
  testing::write_text(d / "study.yaml", study_yaml(60.0, 10));
  const int64_t planned = 24 * 2 * 10;
  const CmdResult ref = run_cli("run " + d / "study.yaml" + " --quiet --no-cache --threads 16 --store " + d / "ref.sqlite",
                                d.path(), "SIM_URL=" + url);
  ASSERT_EQ(ref.exit_code, 0) << ref.err;

  const int64_t base = wait_for_requests(url, 0);  // the reference run's
  setenv("SIM_URL", url.c_str(), 1);
  std::vector<std::string> args{"run", d / "study.yaml", "--quiet", "--no-cache", "--store", d / "k.sqlite"};
  for (const auto& f : path_flags()) args.push_back(f);
  testing::Child run = testing::spawn(args, d / "run.err");
  ASSERT_GE(wait_for_requests(url, base + 60), base + 60) << slurp(d / "run.err");
  kill(sim.pid, SIGSTOP);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the calls in flight hang
  kill(run.pid, SIGTERM);
  int status = 0;
  const double waited = wait_within(run, 30.0, &status);
  std::string err = slurp(d / "run.err");
  ASSERT_TRUE(WIFEXITED(status)) << "killed after " << waited << " s:\n" << err;
  EXPECT_EQ(WEXITSTATUS(status), 130) << err;
  EXPECT_LT(waited, 7.5) << err;
  EXPECT_GE(waited, 4.5) << "the draws in flight should have had their grace: " << err;
  EXPECT_NE(err.find("in flight abandoned at the stop"), std::string::npos) << err;
  auto draws = stored_draws(d / "k.sqlite");
  EXPECT_EQ(static_cast<int64_t>(draws.size()), run_now(err)) << err;
  EXPECT_LT(static_cast<int64_t>(draws.size()), planned);
  for (const auto& [st, e] : draws) EXPECT_EQ(st, "ok") << e;

  // A second signal stops at once (exit 128 + 15), the server still hung.
  testing::Child again = testing::spawn(args, d / "again.err");
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  kill(again.pid, SIGTERM);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  kill(again.pid, SIGTERM);
  const double second = wait_within(again, 10.0, &status);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGTERM) << slurp(d / "again.err");
  EXPECT_LT(second, 1.0) << slurp(d / "again.err");

  kill(sim.pid, SIGCONT);
  const CmdResult resumed = run_cli("run " + d / "study.yaml" + " --quiet --no-cache --store " + d / "k.sqlite" + path_flag(),
                                    d.path(), "SIM_URL=" + url);
  testing::kill_and_wait(sim, SIGTERM);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_EQ(static_cast<int64_t>(stored_draws(d / "k.sqlite").size()), planned);
  EXPECT_EQ(outcomes(d / "k.sqlite"), outcomes(d / "ref.sqlite"));
}

// A slow server that answers every request after 1.5 s, with timeout_s 2 and 4 calls in
// flight: replies come 1.5 s apart, every attempt ends in time, and the run completes with
// every draw ok on its first attempt (at the defaults: replies after 30 s against
// timeout_s 120).
TEST_P(HungServer, ASlowServerThatAnswersCompletes) {
  TempDir d;
  testing::Child sim;
  SimGuard guard{sim};
  const std::string url = start_sim(sim, {"--latency-ms", "1500"}, d / "sim.err");
  ASSERT_FALSE(url.empty()) << slurp(d / "sim.err");
  testing::write_text(d / "study.yaml", study_yaml(2.0, 1, 4));
  const CmdResult r = run_cli("run " + d / "study.yaml" + " --quiet --no-cache --store " + d / "s.sqlite" + path_flag(),
                              d.path(), "SIM_URL=" + url);
  testing::kill_and_wait(sim, SIGTERM);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto draws = stored_draws(d / "s.sqlite");
  EXPECT_EQ(draws.size(), 8u);
  for (const auto& [st, e] : draws) EXPECT_EQ(st, "ok") << e;
}

INSTANTIATE_TEST_SUITE_P(Paths, HungServer, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& p) { return p.param ? "ThreadPath" : "EventLoop"; });

// `worker` (PostgreSQL; the thread path in feed mode): SIGTERM with every call hung ends
// within the grace, exit 130, stores only what finished; the abandoned draws stay leased
// and a later worker completes the plan once the leases expire, with the outcomes of an
// uninterrupted `run`.
TEST(HungServerWorker, SigtermWithCallsHungExitsWithinTheGrace) {
  NF_SKIP_WITHOUT_PG();
  TempDir d;
  testing::PgSchema schema;
  testing::Child sim;
  SimGuard guard{sim};
  const std::string url = start_sim(sim, {"--latency-ms", "20"}, d / "sim.err");
  ASSERT_FALSE(url.empty()) << slurp(d / "sim.err");
  testing::write_text(d / "study.yaml", study_yaml(60.0, 10));
  const int64_t planned = 24 * 2 * 10;
  const CmdResult ref = run_cli("run " + d / "study.yaml" + " --quiet --no-cache --threads 16 --store " + d / "ref.sqlite",
                                d.path(), "SIM_URL=" + url);
  ASSERT_EQ(ref.exit_code, 0) << ref.err;
  auto done = [&] {
    const std::string v = schema.query("SELECT count(*) FROM planned_draws WHERE done");
    return v.empty() ? int64_t{0} : std::stoll(v);
  };
  setenv("SIM_URL", url.c_str(), 1);
  const std::vector<std::string> args{"worker", d / "study.yaml", "--store", schema.url(), "--quiet", "--no-cache",
                                      "--threads", "4", "--batch", "16", "--lease-seconds", "2"};
  testing::Child w = testing::spawn(args, d / "w.err");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (done() < 40 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  kill(sim.pid, SIGSTOP);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  kill(w.pid, SIGTERM);
  int status = 0;
  const double waited = wait_within(w, 30.0, &status);
  const std::string err = slurp(d / "w.err");
  ASSERT_TRUE(WIFEXITED(status)) << "killed after " << waited << " s:\n" << err;
  EXPECT_EQ(WEXITSTATUS(status), 130) << err;
  EXPECT_LT(waited, 7.5) << err;
  EXPECT_NE(err.find("in flight abandoned at the stop"), std::string::npos) << err;
  const int64_t at_stop = done();
  EXPECT_LT(at_stop, planned);
  EXPECT_EQ(schema.query("SELECT count(*) FROM draws WHERE status <> 'ok'"), "0") << err;
  EXPECT_EQ(schema.query("SELECT count(*) FROM draws"), std::to_string(at_stop)) << err;

  kill(sim.pid, SIGCONT);
  testing::Child again = testing::spawn(args, d / "again.err");
  const double rest = wait_within(again, 60.0, &status);
  testing::kill_and_wait(sim, SIGTERM);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << rest << " s: " << slurp(d / "again.err");
  EXPECT_EQ(done(), planned);
  auto s = Store::open(schema.url());
  ASSERT_TRUE(s.ok());
  auto rows = (*s)->outcome_rows();
  ASSERT_TRUE(rows.ok());
  std::map<std::string, double> got;
  for (const auto& o : *rows)
    got[o.subject + "|" + o.item + "|" + o.condition + "|" + o.config + "|" + std::to_string(o.replicate) + "|" +
        o.outcome] = o.value;
  EXPECT_EQ(got, outcomes(d / "ref.sqlite"));
}

// The bound at the default settings, by arithmetic on the configured defaults (the
// mechanism is proportional, tested above with timeout_s 1): a server that stops answering
// mid-run is found silent at most timeout_s after the first attempt that starts after its
// last reply; that attempt starts at once when the reply ends a draw (the slot takes the
// next draw) or after at most the longest back-off when it was retried; then the grace,
// then the cut (<= 1 s). At the defaults (timeout_s 120, 4 retries, 5 s grace) that is
// 120 + 4 + 5 + 1 = 130 s: under 3 minutes.
TEST(HungServerDefaults, TheDefaultBoundIsUnderThreeMinutes) {
  const SubjectSpec subject;
  const RunOptions run;
  const RetryPolicy policy;
  EXPECT_EQ(run.max_consecutive_api_errors, 16);  // the breaker is on by default
  double longest_backoff = 0;
  for (int k = 1; k <= policy.max_retries; ++k)
    longest_backoff = std::max(longest_backoff, backoff_delay_s(policy, k, 1.0));
  const double bound = subject.timeout_s + longest_backoff + run.stop_grace_s + 1.0;
  EXPECT_DOUBLE_EQ(bound, 130.0);
  EXPECT_LT(bound, 180.0);
  // The grace is what SIGTERM waits for (plus the cut): "a few seconds".
  EXPECT_LE(run.stop_grace_s, 5.0);
}

}  // namespace
}  // namespace nf
