// The rerun study against the real llama.cpp server (../shared/tools/llama-server/) with
// the tiny random-weight model, replies constrained to the fhir_agent protocol by a GBNF
// grammar (seed 002; issue 10 "Must show"): every trajectory ends classified, nothing
// crashes or hangs, and the metrics are computed over what parsed. Slow (model calls
// take seconds on 2 cores): label "slow". Skips when the server or the model is missing.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include <httplib.h>

#include "common/test_data.h"
#include "store/store.h"

namespace nf {
namespace {

using testing::CmdResult;
using testing::run_cli;
using testing::slurp;
using testing::TempDir;

TEST(MedAgentBenchLlama, EveryTrajectoryEndsClassified) {
  const std::string root = std::string(NF_SOURCE_DIR) + "/../shared";
  const std::string bin = root + "/tools/llama-server/bin/llama-server";
  const std::string model = testing::data_dir() + "/models/llama-2-tiny-random.gguf";
  if (!std::filesystem::exists(bin)) GTEST_SKIP() << "llama-server not found at " << bin << " (see its README)";
  if (!std::filesystem::exists(model)) GTEST_SKIP() << "tiny model not found at " << model;
  TempDir d;
  const int port = 18400 + static_cast<int>(getpid() % 500);
  const pid_t pid = fork();
  if (pid == 0) {
    const std::string log = d / "llama.log";
    freopen(log.c_str(), "w", stdout);
    freopen(log.c_str(), "a", stderr);
    const std::string p = std::to_string(port);
    execl(bin.c_str(), bin.c_str(), "-m", model.c_str(), "--alias", "tiny", "--host", "127.0.0.1", "--port", p.c_str(),
          "-c", "8192", "-np", "2", "-t", "2", "--no-webui", "--offline", static_cast<char*>(nullptr));
    _exit(127);
  }
  ASSERT_GT(pid, 0);
  bool up = false;
  httplib::Client health("127.0.0.1", port);
  for (int i = 0; i < 300 && !up; ++i) {
    auto r = health.Get("/health");
    up = r && r->status == 200;
    if (!up) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (!up) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    FAIL() << "llama-server did not come up: " << slurp(d / "llama.log");
  }
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/v1";
  CmdResult r = run_cli("audit " + std::string(NF_SOURCE_DIR) + "/examples/medagentbench-llama.yaml --quiet --out " +
                            d / "out" + " --store " + d / "l.sqlite",
                        d.path(), testing::data_env() + " LLAMA_URL=" + url);
  kill(pid, SIGTERM);
  waitpid(pid, nullptr, 0);
  // Exit 0, or 1 when some draws failed at the API (they are reported, never scored).
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1 || r.exit_code == 3) << r.exit_code << r.err;
  auto store = Store::open_existing(d / "l.sqlite");
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE((*store)->export_jsonl(d / "l.jsonl").ok());
  std::ifstream in(d / "l.jsonl");
  std::string line;
  int draws = 0, ok = 0;
  while (std::getline(in, line)) {
    const auto j = nlohmann::json::parse(line);
    ++draws;
    const std::string status = j["status"];
    const auto& c = j["extra"]["condition"];
    ASSERT_TRUE(status == "ok" || status == "parse_error" || status == "api_error") << status;
    if (status == "ok") {
      ++ok;
      EXPECT_TRUE(c["end"] == "finish" || c["end"] == "round_limit") << c["end"];
      EXPECT_TRUE(c.contains("verdict"));
    } else {
      EXPECT_TRUE(c["failing_turn"].is_number_integer()) << line.substr(0, 300);
      EXPECT_EQ(j["error"].get<std::string>().rfind("turn ", 0), 0u) << j["error"];
    }
  }
  EXPECT_EQ(draws, 5 * 2 * 2);
  const auto res = nlohmann::json::parse(slurp(d / "out/results.json"));
  int64_t runs = 0, excluded = 0;
  for (const auto& a : res["analyses"]["rerun"]["arms"]) {
    runs += a["runs"].get<int64_t>();
    excluded += a["excluded_runs"]["parse_error"].get<int64_t>() + a["excluded_runs"]["api_error"].get<int64_t>();
  }
  EXPECT_EQ(ok + excluded, draws) << "every draw that is not ok is counted as excluded";
  EXPECT_LE(runs, ok) << "only ok runs enter the metrics";
}

}  // namespace
}  // namespace nf
