// Adaptive back-off after 429s end to end (issue 6 item 2): `noisefloor audit` of an
// OpenAI-compatible subject WITHOUT rpm/tpm budgets against `noisefloor serve-sim
// --fail-rate 0.5 --fail-kinds 429 --retry-after 1` completes, and receives fewer 429s than
// the same run with the adaptation turned off (subject key adaptive_429: false). serve-sim
// throttles for Retry-After seconds after each injected 429, as a real rate limiter does,
// and counts every 429 it sends (GET /v1/sim/stats). Also: logprobs asked of serve-sim
// reach the report's option-probability section (issue 6 item 7).
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/process.h"
#include "common/test_data.h"

namespace nf {
namespace {

using testing::CmdResult;
using testing::run_cli;
using testing::slurp;
using testing::TempDir;

struct Sim {
  testing::Child child;
  std::string url;  // http://127.0.0.1:PORT/v1
  int port = -1;
  ~Sim() {
    if (child.pid > 0) testing::kill_and_wait(child, SIGTERM);
  }
};

void start_sim(Sim& sim, const std::vector<std::string>& flags, const std::string& err) {
  std::vector<std::string> args{"serve-sim", "--port", "0"};
  args.insert(args.end(), flags.begin(), flags.end());
  sim.child = testing::spawn(args, err);
  const std::string line = testing::read_line(sim.child);
  const auto at = line.find("http://");
  if (at == std::string::npos) return;
  sim.url = line.substr(at);
  while (!sim.url.empty() && (sim.url.back() == '\r' || sim.url.back() == ' ')) sim.url.pop_back();
  const auto colon = sim.url.rfind(':');
  sim.port = std::stoi(sim.url.substr(colon + 1));
}

nlohmann::json sim_stats(const Sim& sim) {
  httplib::Client c("127.0.0.1", sim.port);
  auto res = c.Get("/v1/sim/stats");
  if (!res || res->status != 200) return nullptr;
  return nlohmann::json::parse(res->body, nullptr, false);
}

std::string study(const std::string& extra, int limit, int concurrency, const std::string& temps) {
  return "name: adaptive\nseed: 5\ndataset:\n  format: medqa\n  path: " + std::string(NF_SOURCE_DIR) +
         "/data/sample-mcq.jsonl\n  limit: " + std::to_string(limit) +
         "\nsubjects:\n  - name: http\n    backend: openai\n    base_url: ${SIM_URL}\n    model: sim-mcq-1\n"
         "    concurrency: " + std::to_string(concurrency) + "\n    max_retries: 4\n" + extra +
         "conditions: [none]\nconfigs:\n  temperature: [" + temps + "]\nreplicates: 1\nanalyses:\n  floor: {}\n"
         "bootstrap: {resamples: 50, seed: 1, level: 0.95}\n";
}

// One draw per item, all in flight at once at the start.
constexpr int kDraws = 12;

struct Outcome429 {
  int exit_code = -1;
  int64_t total_429 = -1, throttled_429 = -1, requests = -1;
  int64_t ok_draws = -1, all_draws = -1;
  std::string err;
};

Outcome429 run_against_faulty_sim(const TempDir& d, const std::string& name, bool adaptive) {
  Sim sim;
  start_sim(sim, {"--fail-rate", "0.5", "--fail-kinds", "429", "--retry-after", "1"}, d / (name + ".sim.err"));
  Outcome429 o;
  if (sim.url.empty()) return o;
  testing::write_text(d / (name + ".yaml"),
                      study(adaptive ? "" : "    adaptive_429: false\n", kDraws, kDraws, "0.7"));
  const std::string env = "SIM_URL=" + sim.url;
  const CmdResult r = run_cli("audit " + d / (name + ".yaml") + " --quiet --out " + d / name + " --store " +
                                  d / (name + ".sqlite"),
                              d.path(), env);
  o.exit_code = r.exit_code;
  o.err = r.err;
  const auto results = nlohmann::json::parse(slurp(d / (name + "/results.json")), nullptr, false);
  if (results.is_object() && results["draws"]["rows"].size() == 1) {
    o.ok_draws = results["draws"]["rows"][0]["ok"];
    o.all_draws = results["draws"]["rows"][0]["total"];
  }
  const nlohmann::json s = sim_stats(sim);
  if (s.is_object()) {
    o.total_429 = s["total_429"].get<int64_t>();
    o.throttled_429 = s["throttled_429"].get<int64_t>();
    o.requests = s["chat_requests"].get<int64_t>();
  }
  return o;
}

TEST(Adaptive429Cli, A429StormIsSurvivedWithFewer429sThanWithoutAdaptation) {
  TempDir d;
  // One after the other (each against its own serve-sim): side by side they competed for
  // the CPU and the timing of the throttle windows became noisy under a parallel ctest.
  const Outcome429 fixed = run_against_faulty_sim(d, "fixed", false);
  const Outcome429 adaptive = run_against_faulty_sim(d, "adaptive", true);
  ASSERT_GE(adaptive.total_429, 0) << "serve-sim stats unavailable";
  ASSERT_GE(fixed.total_429, 0) << "serve-sim stats unavailable";
  // The adaptive run completes: exit 0, every planned draw stored (ok, or an explicit
  // api_error when one body met 429s on all 5 attempts), and at least as many draws
  // succeed as without the adaptation.
  EXPECT_EQ(adaptive.exit_code, 0) << adaptive.err;
  EXPECT_EQ(adaptive.all_draws, kDraws) << adaptive.err;
  EXPECT_GE(adaptive.ok_draws, fixed.ok_draws) << adaptive.err;
  // Fewer 429s received: workers that honour Retry-After endpoint-wide and shrink the
  // requests in flight do not walk into the server's throttle window.
  EXPECT_LT(adaptive.total_429, fixed.total_429)
      << "adaptive: " << adaptive.total_429 << " (" << adaptive.throttled_429 << " throttled) of "
      << adaptive.requests << " requests; fixed: " << fixed.total_429 << " (" << fixed.throttled_429
      << " throttled) of " << fixed.requests;
  EXPECT_LT(adaptive.throttled_429, fixed.throttled_429);
  std::printf("429s received: adaptive %lld (%lld throttled) of %lld requests, %lld ok; without adaptation %lld "
              "(%lld) of %lld, %lld ok\n",
              static_cast<long long>(adaptive.total_429), static_cast<long long>(adaptive.throttled_429),
              static_cast<long long>(adaptive.requests), static_cast<long long>(adaptive.ok_draws),
              static_cast<long long>(fixed.total_429), static_cast<long long>(fixed.throttled_429),
              static_cast<long long>(fixed.requests), static_cast<long long>(fixed.ok_draws));
}

TEST(Adaptive429Cli, LogprobsFromServeSimReachTheReport) {
  TempDir d;
  Sim sim;
  start_sim(sim, {}, d / "sim.err");
  ASSERT_FALSE(sim.url.empty());
  testing::write_text(d / "lp.yaml", study("    logprobs: 3\n", 6, 4, "0, 0.7"));
  const CmdResult r = run_cli("audit " + d / "lp.yaml" + " --quiet --out " + d / "out" + " --store " + d / "s.sqlite",
                              d.path(), "SIM_URL=" + sim.url);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string md = slurp(d / "out/report.md");
  EXPECT_NE(md.find("## Option probabilities"), std::string::npos) << md;
  const auto results = nlohmann::json::parse(slurp(d / "out/results.json"), nullptr, false);
  ASSERT_TRUE(results.is_object());
  const auto& rows = results["analyses"]["option_probs"]["rows"];
  ASSERT_EQ(rows.size(), 2u) << results["analyses"].dump(2);  // two configs x condition none
  for (const auto& row : rows) {
    EXPECT_EQ(row["draws"], 6);
    EXPECT_EQ(row["options_unknown"], 6);  // 4 options, top 3 listed
    if (row["config"].get<std::string>().find("temperature=0") != std::string::npos &&
        row["config"].get<std::string>().find("0.7") == std::string::npos) {
      // Greedy: the sim answers its most likely option, which tops the logprobs.
      EXPECT_EQ(row["argmax_matches"], 6) << row.dump();
    }
  }
  // Without logprobs there is no section.
  testing::write_text(d / "plain.yaml", study("", 6, 4, "0"));
  const CmdResult p = run_cli("audit " + d / "plain.yaml" + " --quiet --out " + d / "plain" + " --store " +
                                  d / "p.sqlite",
                              d.path(), "SIM_URL=" + sim.url);
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_EQ(slurp(d / "plain/report.md").find("## Option probabilities"), std::string::npos);
}

}  // namespace
}  // namespace nf
