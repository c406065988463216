// Dependable runs against misbehaving servers, end to end through the real binary
// (issue 6 "Must show"): the MedQA faults study completes with a zero temperature-0
// floor and faults never scored; secrets never reach any output; --refresh; SIGKILL
// during a concurrent HTTP run loses only in-flight draws and duplicates none.
#include <gtest/gtest.h>
#include <httplib.h>
#include <sqlite3.h>

#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "common/process.h"
#include "common/store_poll.h"
#include "common/test_data.h"
#include "sim/sim.h"
#include "store/store.h"

namespace nf {
namespace {

using testing::CmdResult;
using testing::run_cli;
using testing::slurp;
using testing::TempDir;

using testing::data_env;
void write(const std::string& path, const std::string& text) { testing::write_text(path, text); }

using testing::start_sim;

std::string key_of(const OutcomeRow& o) {
  return o.subject + "|" + o.item + "|" + o.condition + "|" + o.config + "|" + std::to_string(o.replicate) + "|" +
         o.outcome;
}

TEST(FaultsCli, MedqaFaultsStudyCompletesWithZeroGreedyFloorAndNoFaultScored) {
  TempDir d;
  const std::string study = std::string(NF_SOURCE_DIR) + "/examples/medqa-faults.yaml";
  testing::Child bad, good;
  const std::string bad_url = start_sim(
      bad, {"--fail-rate", "0.3", "--fail-kinds", "429,500,reset,truncate,slow", "--retry-after", "1"}, d / "bad.err");
  const std::string good_url = start_sim(good, {}, d / "good.err");
  ASSERT_FALSE(bad_url.empty()) << slurp(d / "bad.err");
  ASSERT_FALSE(good_url.empty()) << slurp(d / "good.err");
  const CmdResult faulty = run_cli("audit " + study + " --out " + d / "faulty" + " --store " + d / "faulty.sqlite",
                                   d.path(), data_env() + " SIM_URL=" + bad_url);
  const CmdResult clean = run_cli("audit " + study + " --quiet --out " + d / "clean" + " --store " + d / "clean.sqlite",
                                  d.path(), data_env() + " SIM_URL=" + good_url);
  testing::kill_and_wait(bad, SIGTERM);
  testing::kill_and_wait(good, SIGTERM);
  ASSERT_EQ(faulty.exit_code, 0) << faulty.err;
  ASSERT_EQ(clean.exit_code, 0) << clean.err;

  // Temperature-0 floor exactly 0 (a fault scored as an answer would break it).
  const auto j = nlohmann::json::parse(slurp(d / "faulty/results.json"));
  int t0_rows = 0;
  for (const auto& row : j["analyses"]["floor"]["rows"]) {
    if (row["config"] != "temperature=0") continue;
    ++t0_rows;
    EXPECT_EQ(row["discordant"], 0) << row.dump();
  }
  EXPECT_GT(t0_rows, 0);

  auto fs = Store::open_existing(d / "faulty.sqlite");
  auto cs = Store::open_existing(d / "clean.sqlite");
  ASSERT_TRUE(fs.ok() && cs.ok());
  const int64_t planned = 20 * 2 * 5;
  EXPECT_EQ(*(*fs)->draw_count(), planned);
  // Every draw is ok / parse_error (the model answered) or an explicit api_error.
  int64_t api_error = 0, answered = 0;
  auto counts = (*fs)->status_counts();  // keep the Result alive for the loop (found by ASan)
  ASSERT_TRUE(counts.ok());
  for (const auto& c : *counts) {
    if (c.status == "api_error") api_error += c.count;
    else answered += c.count;
    EXPECT_TRUE(c.status == "ok" || c.status == "parse_error" || c.status == "api_error") << c.status;
  }
  EXPECT_EQ(api_error + answered, planned);
  auto rows = (*fs)->outcome_rows();
  auto clean_rows = (*cs)->outcome_rows();
  ASSERT_TRUE(rows.ok() && clean_rows.ok());
  std::map<std::string, double> clean_map;
  for (const auto& o : *clean_rows) clean_map[key_of(o)] = o.value;
  // Zero faults scored: every outcome of the faulty run equals the fault-free run's.
  ASSERT_FALSE(rows->empty());
  for (const auto& o : *rows) {
    auto it = clean_map.find(key_of(o));
    ASSERT_NE(it, clean_map.end()) << key_of(o);
    EXPECT_EQ(it->second, o.value) << key_of(o);
  }
  // ... and api_error draws carry none (2 outcomes per ok draw).
  std::map<std::string, int> per_draw;
  for (const auto& o : *rows) ++per_draw[o.item + o.config + std::to_string(o.replicate)];
  for (const auto& [k, n] : per_draw) EXPECT_EQ(n, 2) << k;
  EXPECT_LE(static_cast<int64_t>(per_draw.size()), planned - api_error);
  // The draws record how many attempts they took; faults at 30% make some > 1.
  const std::string dump = d / "faulty.jsonl";
  ASSERT_TRUE((*fs)->export_jsonl(dump).ok());
  std::ifstream in(dump);
  std::string line;
  int64_t multi = 0;
  while (std::getline(in, line)) {
    const auto draw = nlohmann::json::parse(line);
    if (draw.value("attempts", 1) > 1) ++multi;
  }
  EXPECT_GT(multi, 0) << "no draw was retried: were faults injected?";
}

// A server that answers from the simulator but echoes the Authorization header back in
// the error body of every other request (a careless proxy).
class EchoingServer {
 public:
  EchoingServer() {
    server_.Post("/v1/chat/completions", [this](const httplib::Request& req, httplib::Response& res) {
      const std::string auth = req.get_header_value("Authorization");
      {
        std::lock_guard<std::mutex> lock(mu_);
        seen_auth_ = auth;
      }
      auto body = nlohmann::json::parse(req.body, nullptr, false);
      auto request = ChatRequest::from_openai_json(body);
      if (!request.ok() || body.dump().size() % 2 == 0) {
        res.status = 500;
        res.set_content("upstream failed for " + auth, "text/plain");
        return;
      }
      res.set_header("x-request-id", "echo-" + auth);
      res.set_content(sim_.complete(*request).raw_body, "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~EchoingServer() {
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
  std::string seen_auth() {
    std::lock_guard<std::mutex> lock(mu_);
    return seen_auth_;
  }

 private:
  SimBackend sim_{SimParams{}};
  httplib::Server server_;
  std::thread thread_;
  std::mutex mu_;
  std::string seen_auth_;
  int port_ = -1;
};

std::string sample_study(const std::string& name, const std::string& subject_extra, int replicates = 3) {
  return "name: " + name + "\nseed: 7\ndataset:\n  format: medqa\n  path: " + std::string(NF_SOURCE_DIR) +
         "/data/sample-mcq.jsonl\nsubjects:\n  - name: http\n    backend: openai\n    base_url: ${SIM_URL}\n"
         "    model: sim-mcq-1\n    concurrency: 8\n" +
         subject_extra + "conditions: [none]\nconfigs:\n  temperature: [0, 0.7]\nreplicates: " +
         std::to_string(replicates) + "\nanalyses:\n  floor: {}\nbootstrap: {resamples: 100, seed: 1, level: 0.95}\n";
}

TEST(FaultsCli, TheApiKeyNeverReachesAnyOutput) {
  TempDir d;
  const std::string key = "sk-FAKE-noisefloor-test-key-7f3a9c";
  EchoingServer server;
  write(d / "study.yaml", sample_study("secrets", "    api_key_env: NF_TEST_API_KEY\n    max_retries: 0\n"));
  const CmdResult r = run_cli("audit " + d / "study.yaml" + " --out " + d / "out" + " --store " + d / "s.sqlite",
                              d.path(), "SIM_URL=" + server.url() + " NF_TEST_API_KEY=" + key);
  EXPECT_EQ(server.seen_auth(), "Bearer " + key) << "the key must reach the server";
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("api_error"), std::string::npos) << "some draws should have failed: " << r.err;
  std::vector<std::string> outputs{r.out, r.err};
  for (const auto& e : std::filesystem::recursive_directory_iterator(d.path())) {
    if (e.is_regular_file() && e.path().filename() != "study.yaml") outputs.push_back(slurp(e.path().string()));
  }
  auto store = Store::open_existing(d / "s.sqlite");
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE((*store)->export_jsonl(d / "dump.jsonl").ok());
  outputs.push_back(slurp(d / "dump.jsonl"));
  EXPECT_GE(outputs.size(), 5u);  // stdout, stderr, store, report.md, results.json, ...
  for (const auto& text : outputs) EXPECT_EQ(text.find("FAKE-noisefloor"), std::string::npos);
  EXPECT_NE(slurp(d / "dump.jsonl").find("[redacted]"), std::string::npos)
      << "the echoed key should have been redacted in the stored error bodies";
}

TEST(FaultsCli, RefreshRerunsEveryDrawAndNoCacheSkipsTheCache) {
  TempDir d;
  testing::Child sim;
  const std::string url = start_sim(sim, {}, d / "sim.err");
  ASSERT_FALSE(url.empty());
  write(d / "study.yaml", sample_study("refresh", ""));
  const std::string env = "SIM_URL=" + url;
  const std::string base = "run " + d / "study.yaml" + " --quiet --store " + d / "r.sqlite";
  const CmdResult first = run_cli(base, d.path(), env);
  const CmdResult again = run_cli(base, d.path(), env);
  const CmdResult refresh = run_cli(base + " --refresh", d.path(), env);
  // Drop the stored draws but keep the response cache: a plain run is served from the
  // cache (and flagged), --no-cache calls the server for every draw.
  auto drop_draws = [&] {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((d / "r.sqlite").c_str(), &db), SQLITE_OK);
    EXPECT_EQ(sqlite3_exec(db, "DELETE FROM outcomes; DELETE FROM draws;", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
  };
  drop_draws();
  const CmdResult cached = run_cli(base, d.path(), env);
  drop_draws();
  const CmdResult no_cache = run_cli(base + " --no-cache", d.path(), env);
  testing::kill_and_wait(sim, SIGTERM);
  EXPECT_NE(cached.err.find(std::to_string(24 * 2 * 3) + " from cache"), std::string::npos) << cached.err;
  EXPECT_EQ(no_cache.err.find("from cache"), std::string::npos) << no_cache.err;
  EXPECT_NE(no_cache.err.find(std::to_string(24 * 2 * 3) + " run now"), std::string::npos) << no_cache.err;
  const int64_t planned = 24 * 2 * 3;
  ASSERT_EQ(first.exit_code, 0) << first.err;
  ASSERT_EQ(again.exit_code, 0) << again.err;
  ASSERT_EQ(refresh.exit_code, 0) << refresh.err;
  EXPECT_NE(first.err.find(std::to_string(planned) + " run now"), std::string::npos) << first.err;
  EXPECT_NE(again.err.find("0 run now"), std::string::npos) << again.err;
  EXPECT_NE(refresh.err.find("--refresh: every planned draw re-run, stored ones replaced, " + std::to_string(planned) +
                             " run now"),
            std::string::npos)
      << refresh.err;
  EXPECT_EQ(refresh.err.find("0 already in the store"), std::string::npos) << refresh.err;
  EXPECT_EQ(refresh.err.find("from cache"), std::string::npos) << refresh.err;
  auto store = Store::open_existing(d / "r.sqlite");
  ASSERT_TRUE(store.ok());
  EXPECT_EQ(*(*store)->draw_count(), planned);
  auto keys = (*store)->finished_keys();
  ASSERT_TRUE(keys.ok());
  EXPECT_EQ(static_cast<int64_t>(keys->size()), planned);
}

TEST(FaultsCli, SigkillDuringAConcurrentHttpRunLosesOnlyInFlightDraws) {
  TempDir d;
  testing::Child sim;
  const std::string url = start_sim(sim, {"--latency-ms", "2"}, d / "sim.err");
  ASSERT_FALSE(url.empty());
  write(d / "study.yaml", sample_study("kill", "", 20));
  const int64_t planned = 24 * 2 * 20;
  setenv("SIM_URL", url.c_str(), 1);  // spawn() passes our environment to the child
  testing::Child run = testing::spawn({"run", d / "study.yaml", "--quiet", "--threads", "16", "--no-cache", "--store",
                                       d / "k.sqlite"},
                                      d / "run.err");
  testing::wait_for_draws(d / "k.sqlite", 200, 4000);
  testing::kill_and_wait(run, SIGKILL);
  {
    auto s = Store::open_existing(d / "k.sqlite");
    ASSERT_TRUE(s.ok()) << slurp(d / "run.err");
    const int64_t after_kill = *(*s)->draw_count();
    ASSERT_GT(after_kill, 0) << slurp(d / "run.err");
    ASSERT_LT(after_kill, planned) << "the run finished before the kill; make the study larger";
  }
  const CmdResult r = run_cli("run " + d / "study.yaml" + " --quiet --threads 16 --store " + d / "k.sqlite", d.path(),
                              "SIM_URL=" + url);
  testing::kill_and_wait(sim, SIGTERM);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto s = Store::open_existing(d / "k.sqlite");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*(*s)->draw_count(), planned);
  auto keys = (*s)->finished_keys();
  ASSERT_TRUE(keys.ok());
  EXPECT_EQ(static_cast<int64_t>(keys->size()), planned);
  auto rows = (*s)->outcome_rows();
  ASSERT_TRUE(rows.ok());
  std::map<std::string, int> per_draw;
  for (const auto& o : *rows) ++per_draw[o.item + o.config + std::to_string(o.replicate)];
  for (const auto& [k, n] : per_draw) ASSERT_EQ(n, 2) << k;
}

// A server that dies mid-run (the circuit breaker, docs/backends.md "A server that goes
// down mid-run"): the run stops within seconds with exit 3, naming the endpoint and the
// last error, keeps what finished, and a resume against the restarted server completes the
// study with the results of an uninterrupted run.
TEST(FaultsCli, AServerKilledMidRunTripsTheBreakerAndAResumeCompletesTheStudy) {
  TempDir d;
  testing::Child sim;
  const std::string url = start_sim(sim, {"--latency-ms", "5"}, d / "sim.err");
  ASSERT_FALSE(url.empty());
  const size_t colon = url.rfind(':'), slash = url.find("/v1");
  ASSERT_TRUE(colon != std::string::npos && slash != std::string::npos && slash > colon) << url;
  const std::string port = url.substr(colon + 1, slash - colon - 1);
  // 2 retries (~1.5 s of back-off per failed draw) keep the test short; the default 4 make
  // it about 6 s (16 draws in flight fail together).
  write(d / "study.yaml", sample_study("down", "    max_retries: 2\n", 40));
  const int64_t planned = 24 * 2 * 40;
  const CmdResult ref = run_cli("run " + d / "study.yaml" + " --quiet --no-cache --store " + d / "ref.sqlite",
                                d.path(), "SIM_URL=" + url);
  ASSERT_EQ(ref.exit_code, 0) << ref.err;

  setenv("SIM_URL", url.c_str(), 1);  // spawn() passes our environment to the child
  testing::Child run = testing::spawn({"run", d / "study.yaml", "--quiet", "--no-cache", "--store", d / "k.sqlite"},
                                      d / "run.err");
  ASSERT_GT(testing::wait_for_draws(d / "k.sqlite", 100, 4000), 0) << slurp(d / "run.err");
  testing::kill_and_wait(sim, SIGKILL);
  const auto t0 = std::chrono::steady_clock::now();
  int status = 0;
  pid_t done = 0;
  while ((done = waitpid(run.pid, &status, WNOHANG)) == 0 &&
         std::chrono::steady_clock::now() - t0 < std::chrono::seconds(60))
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (done == 0) testing::kill_and_wait(run, SIGKILL);
  const std::string err = slurp(d / "run.err");
  ASSERT_NE(done, 0) << "the run did not stop within 60 s of the server's death:\n" << err;
  ASSERT_TRUE(WIFEXITED(status)) << err;
  EXPECT_EQ(WEXITSTATUS(status), 3) << err;
  EXPECT_LT(waited, 20.0) << err;  // one draw's retry budget (~1.5 s) per 8 draws in flight, twice
  EXPECT_NE(err.find("stopped: subject 'http' (openai:" + url + "): 16 draws in a row failed at the API; last: connect:"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("backend unavailable"), std::string::npos) << err;
  {
    auto s = Store::open_existing(d / "k.sqlite");
    ASSERT_TRUE(s.ok());
    const int64_t stored = *(*s)->draw_count();
    EXPECT_LT(stored, planned) << "no draw was left for the resume: make the study larger";
    auto counts = (*s)->status_counts();
    ASSERT_TRUE(counts.ok());
    int64_t api_error = 0;
    for (const auto& c : *counts)
      if (c.status == "api_error") api_error += c.count;
    EXPECT_GE(api_error, 16) << err;  // the failed draws are stored as api_error, never scored
  }

  // The server comes back on the same port; the same command completes the study.
  testing::Child back;
  back = testing::spawn({"serve-sim", "--port", port, "--latency-ms", "5"}, d / "back.err");
  ASSERT_NE(testing::read_line(back).find("http://"), std::string::npos) << slurp(d / "back.err");
  const CmdResult resumed = run_cli("run " + d / "study.yaml" + " --quiet --no-cache --store " + d / "k.sqlite",
                                    d.path(), "SIM_URL=" + url);
  testing::kill_and_wait(back, SIGTERM);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  auto s = Store::open_existing(d / "k.sqlite");
  auto r = Store::open_existing(d / "ref.sqlite");
  ASSERT_TRUE(s.ok() && r.ok());
  EXPECT_EQ(*(*s)->draw_count(), planned);
  auto keys = (*s)->finished_keys();
  ASSERT_TRUE(keys.ok());
  EXPECT_EQ(static_cast<int64_t>(keys->size()), planned);
  auto counts = (*s)->status_counts();
  ASSERT_TRUE(counts.ok());
  for (const auto& c : *counts) EXPECT_NE(c.status, "api_error") << c.count;
  auto rows = (*s)->outcome_rows();
  auto ref_rows = (*r)->outcome_rows();
  ASSERT_TRUE(rows.ok() && ref_rows.ok());
  std::map<std::string, double> got, want;
  for (const auto& o : *rows) got[key_of(o)] = o.value;
  for (const auto& o : *ref_rows) want[key_of(o)] = o.value;
  EXPECT_EQ(got.size(), static_cast<size_t>(planned * 2));
  EXPECT_EQ(got, want);
}

// Tester finding 22.1 (session 9): every request refused with HTTP 400 (prompts longer than
// the server's context) ended "every draw failed at the API: backend unavailable", exit 3.
// The server is up and refusing the requests themselves: that is input, exit 2, said so.
TEST(FaultsCli, EveryRequestRefusedWithHttp400IsInputNotAnOutage) {
  httplib::Server server;
  server.Post("/v1/chat/completions", [](const httplib::Request&, httplib::Response& res) {
    res.status = 400;
    res.set_content(R"({"error":{"code":400,"message":"the request exceeds the available context size"}})",
                    "application/json");
  });
  const int port = server.bind_to_any_port("127.0.0.1");
  std::thread t([&] { server.listen_after_bind(); });
  while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  TempDir d;
  write(d / "study.yaml", sample_study("ctx", "    max_retries: 0\n", 1));
  const CmdResult r = run_cli("run " + d / "study.yaml" + " --quiet --no-cache --store " + d / "ctx.sqlite", d.path(),
                              "SIM_URL=http://127.0.0.1:" + std::to_string(port) + "/v1");
  server.stop();
  t.join();
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("the server refused every request (first: HTTP 400: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("exceeds the available context size"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("backend unavailable"), std::string::npos) << r.err;
}

// --max-consecutive-api-errors 0 turns the breaker off: every draw is tried and stored as
// api_error, and the run exits 3 because every draw failed (the older rule).
TEST(FaultsCli, TheBreakerOffTriesEveryDraw) {
  TempDir d;
  write(d / "study.yaml", sample_study("off", "    max_retries: 0\n", 1));
  // Port 9 (discard) on localhost: connection refused.
  const CmdResult r = run_cli("run " + d / "study.yaml" + " --quiet --no-cache --max-consecutive-api-errors 0 --store " +
                                  d / "off.sqlite",
                              d.path(), "SIM_URL=http://127.0.0.1:9/v1");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(r.err.find("in a row"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("every draw failed at the API"), std::string::npos) << r.err;
  auto s = Store::open_existing(d / "off.sqlite");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*(*s)->draw_count(), 24 * 2);
  // With the breaker on (default 16), the same run stops after 16 draws.
  const CmdResult on = run_cli("run " + d / "study.yaml" + " --quiet --no-cache --store " + d / "on.sqlite", d.path(),
                               "SIM_URL=http://127.0.0.1:9/v1");
  EXPECT_EQ(on.exit_code, 3) << on.err;
  EXPECT_NE(on.err.find("16 draws in a row failed at the API"), std::string::npos) << on.err;
  auto so = Store::open_existing(d / "on.sqlite");
  ASSERT_TRUE(so.ok());
  EXPECT_GE(*(*so)->draw_count(), 16);
  EXPECT_LT(*(*so)->draw_count(), 24 * 2);
  // A breaker of 1 stops at the first failure, and says so in the singular.
  const CmdResult one = run_cli("run " + d / "study.yaml" +
                                    " --quiet --no-cache --max-consecutive-api-errors 1 --store " + d / "one.sqlite",
                                d.path(), "SIM_URL=http://127.0.0.1:9/v1");
  EXPECT_EQ(one.exit_code, 3) << one.err;
  EXPECT_NE(one.err.find("): a draw failed at the API; last: "), std::string::npos) << one.err;
  EXPECT_EQ(one.err.find("in a row"), std::string::npos) << one.err;
}

// A server whose greedy reply depends on how many requests are in flight (the batch
// nondeterminism of a real serving stack, seed 002 §5): alone it always says the same.
class BatchServer {
 public:
  BatchServer() {
    server_.Post("/v1/chat/completions", [this](const httplib::Request&, httplib::Response& res) {
      const int batch = ++in_flight_;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      --in_flight_;
      const std::string text = batch == 1 ? "Answer: B" : "Answer: B (batch " + std::to_string(batch) + ")";
      res.set_content(nlohmann::json({{"model", "m"},
                                      {"choices", {{{"message", {{"role", "assistant"}, {"content", text}}},
                                                    {"finish_reason", "stop"}}}}})
                          .dump(),
                      "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~BatchServer() {
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }

 private:
  httplib::Server server_;
  std::thread thread_;
  std::atomic<int> in_flight_{0};
  int port_ = -1;
};

TEST(FaultsCli, NoiseControlShowsWhetherTheServerIsDeterministicUnderLoad) {
  TempDir d;
  const std::string nc = "noise_control: {requests: 6, items: 3, concurrency: 8}\n";
  // The simulator is deterministic at temperature 0, alone or under load.
  testing::Child sim;
  const std::string url = start_sim(sim, {}, d / "sim.err");
  ASSERT_FALSE(url.empty());
  write(d / "sim.yaml", sample_study("nc-sim", "") + nc);
  const CmdResult a = run_cli("run " + d / "sim.yaml" + " --quiet --out " + d / "a" + " --store " + d / "a.sqlite",
                              d.path(), "SIM_URL=" + url);
  testing::kill_and_wait(sim, SIGTERM);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const auto ja = nlohmann::json::parse(slurp(d / "a/noise_control.json"));
  ASSERT_EQ(ja["subjects"].size(), 1u);
  EXPECT_EQ(ja["subjects"][0]["serial_distinct_max"], 1) << ja.dump();
  EXPECT_EQ(ja["subjects"][0]["concurrent_distinct_max"], 1) << ja.dump();
  EXPECT_EQ(ja["subjects"][0]["cells"].size(), 3u);
  EXPECT_NE(a.err.find("noise control http"), std::string::npos) << a.err;
  // A batch-dependent server: identical serially, divergent under load.
  BatchServer batch;
  write(d / "batch.yaml", sample_study("nc-batch", "") + nc);
  const CmdResult b = run_cli("run " + d / "batch.yaml" + " --quiet --out " + d / "b" + " --store " + d / "b.sqlite",
                              d.path(), "SIM_URL=" + batch.url());
  ASSERT_EQ(b.exit_code, 0) << b.err;
  const auto jb = nlohmann::json::parse(slurp(d / "b/noise_control.json"));
  EXPECT_EQ(jb["subjects"][0]["serial_distinct_max"], 1) << jb.dump();
  EXPECT_GT(jb["subjects"][0]["concurrent_distinct_max"].get<int>(), 1) << jb.dump();
  auto store = Store::open_existing(d / "b.sqlite");
  ASSERT_TRUE(store.ok());
  auto rec = (*store)->get_study();
  ASSERT_TRUE(rec.ok());
  EXPECT_EQ(rec->spec["noise_control"], jb);
  EXPECT_TRUE(rec->spec.contains("provenance"));
}

}  // namespace
}  // namespace nf
