// The rerun study against the real llama.cpp server (../shared/tools/llama-server/) with
// the tiny random-weight model, replies constrained to the fhir_agent protocol by a GBNF
// grammar (seed 002; issue 10 "Must show"): every trajectory ends classified, nothing
// crashes or hangs, and the metrics are computed over what parsed. Slow (model calls
// take seconds on 2 cores): label "slow". Skips when the server or the model is missing.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>


#include "common/llama_server.h"
#include "common/test_data.h"
#include "store/store.h"

namespace nf {
namespace {

using testing::CmdResult;
using testing::run_cli;
using testing::slurp;
using testing::TempDir;

TEST(MedAgentBenchLlama, EveryTrajectoryEndsClassified) {
  if (const std::string why = testing::llama_server_missing(); !why.empty()) GTEST_SKIP() << why;
  TempDir d;
  testing::LlamaServer server;
  if (const std::string err = testing::start_llama_server(&server, d / "llama.log", 18400, 500, 8192, 2, 30); !err.empty())
    FAIL() << err;
  const std::string url = server.url();
  CmdResult r = run_cli("audit " + std::string(NF_SOURCE_DIR) + "/examples/medagentbench-llama.yaml --quiet --out " +
                            d / "out" + " --store " + d / "l.sqlite",
                        d.path(), testing::data_env() + " LLAMA_URL=" + url);
  server.stop();
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
