// examples/envelope-http.yaml against `serve-sim --study examples/envelope.yaml` (issue 11
// "Must show": the envelope study over HTTP, logprob scoring path included). serve-sim
// serves each sim subject under its model name with its own parameters, so every request
// of the HTTP audit equals the in-process one (same study seed, subject names and grid ->
// same per-draw seeds): the draws, both scoring paths and the envelope section are
// identical to the offline audit, and recover the configured truth.
#include <gtest/gtest.h>
#include <httplib.h>

#include <cmath>
#include <map>
#include <string>

#include "cli/envelope_truth.h"
#include "common/process.h"
#include "common/test_data.h"
#include "store/store.h"

namespace nf {
namespace {

std::string key_of(const OutcomeRow& o) {
  return o.subject + "|" + o.item + "|" + o.condition + "|" + o.config + "|" + std::to_string(o.replicate) + "|" +
         o.outcome;
}

TEST(EnvelopeHttp, ServeSimStudyRecoversTheConfiguredRankFlipsOverHttpWithLogprobs) {
  testing::TempDir t;
  const std::string offline_study = std::string(NF_SOURCE_DIR) + "/examples/envelope.yaml";
  const std::string http_study = std::string(NF_SOURCE_DIR) + "/examples/envelope-http.yaml";
  ::setenv("NOISEFLOOR_DATA", testing::data_dir().c_str(), 1);  // serve-sim reads the answer key
  testing::Child sim = testing::spawn({"serve-sim", "--port", "0", "--study", offline_study}, t / "sim.err");
  const std::string line = testing::read_line(sim);
  const auto at = line.find("http://");
  ASSERT_NE(at, std::string::npos) << testing::slurp(t / "sim.err");
  const std::string url = line.substr(at);
  const auto http = testing::run_cli("audit " + http_study + " --quiet --out " + (t / "http") + " --store " +
                                         (t / "http.sqlite"),
                                     t.path(), testing::data_env() + " SIM_URL=" + url);
  // The requests really went over HTTP: 3 subjects x 200 items x 8 configurations.
  httplib::Client cli("127.0.0.1", std::stoi(url.substr(url.rfind(':') + 1)));
  auto stats = cli.Get("/v1/sim/stats");
  testing::kill_and_wait(sim, SIGTERM);
  ASSERT_EQ(http.exit_code, 0) << http.err;
  ASSERT_TRUE(stats);
  EXPECT_EQ(nlohmann::json::parse(stats->body)["chat_requests"], 4800);
  const std::string served = testing::slurp(t / "sim.err");
  EXPECT_NE(served.find("model sim-a (sim-"), std::string::npos) << served;

  const auto off = testing::run_cli("audit " + offline_study + " --quiet --out " + (t / "off") + " --store " +
                                        (t / "off.sqlite"),
                                    t.path(), testing::data_env());
  ASSERT_EQ(off.exit_code, 0) << off.err;

  // 1. The same draws: every outcome of every draw, both scoring paths, equal.
  auto hs = Store::open_existing(t / "http.sqlite");
  auto os = Store::open_existing(t / "off.sqlite");
  ASSERT_TRUE(hs.ok() && os.ok());
  auto hrows = (*hs)->outcome_rows();
  auto orows = (*os)->outcome_rows();
  ASSERT_TRUE(hrows.ok() && orows.ok());
  std::map<std::string, double> offline;
  for (const auto& o : *orows) offline[key_of(o)] = o.value;
  ASSERT_EQ(hrows->size(), orows->size());
  int logprob_rows = 0;
  for (const auto& o : *hrows) {
    const auto it = offline.find(key_of(o));
    ASSERT_NE(it, offline.end()) << key_of(o);
    EXPECT_EQ(o.value, it->second) << key_of(o);
    logprob_rows += o.outcome == "correct_logprob";
  }
  EXPECT_EQ(logprob_rows, 3 * 200 * 4);  // every greedy draw scored from serve-sim's top_logprobs

  // 2. The envelope analysis is identical (same draws, same bootstrap seed) ...
  const auto he = nlohmann::json::parse(testing::slurp(t / "http/results.json"))["analyses"]["envelope"];
  const auto oe = nlohmann::json::parse(testing::slurp(t / "off/results.json"))["analyses"]["envelope"];
  ASSERT_FALSE(he.contains("skipped")) << he.dump();
  EXPECT_EQ(he, oe);

  // 3. ... and recovers the configured truth, computed from the sims' own distributions.
  const auto truth = testing::envelope_truth(offline_study);
  ASSERT_EQ(truth.size(), 36u);
  int logprob_cells = 0;
  for (const auto& s : he["subjects"])
    for (const auto& c : s["cells"]) {
      const std::string cfg = c["config"].get<std::string>();
      const double want = truth.at({s["subject"].get<std::string>(), cfg});
      const double tol = cfg.find("temperature=0,") != std::string::npos ? 1e-12 : 0.1;
      EXPECT_NEAR(c["score"].get<double>(), want, tol) << s["subject"] << " " << cfg;
      if (cfg.find("scoring_path=logprob") != std::string::npos) {
        ++logprob_cells;
        EXPECT_DOUBLE_EQ(c["parse_rate"].get<double>(), 1.0) << cfg;
      }
    }
  EXPECT_EQ(logprob_cells, 12);  // 3 subjects x 4 greedy configurations
  for (const auto& p : he["pairs"]) {
    EXPECT_EQ(p["n_plus"], 6) << p.dump();
    EXPECT_EQ(p["n_minus"], 6) << p.dump();
    EXPECT_DOUBLE_EQ(p["rho_flip"].get<double>(), 0.5);
  }
  EXPECT_EQ(he["rankings"]["reachable"], 2);
  EXPECT_EQ(he["rankings"]["orderings"][0]["total_order"], "sim-a > sim-c > sim-b");
  EXPECT_EQ(he["rankings"]["orderings"][1]["total_order"], "sim-b > sim-c > sim-a");
}

TEST(EnvelopeHttp, ServeSimStudyFlagErrorsAreUsageErrors) {
  testing::TempDir t;
  const std::string study = std::string(NF_SOURCE_DIR) + "/examples/envelope.yaml";
  auto both = testing::run_cli("serve-sim --study " + study + " --seed 3", t.path(), testing::data_env());
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE((both.out + both.err).find("--seed excludes --study"), std::string::npos) << both.out << both.err;
  auto missing = testing::run_cli("serve-sim --study " + (t / "nope.yaml"), t.path(), testing::data_env());
  EXPECT_EQ(missing.exit_code, 2) << missing.err;
  EXPECT_NE(missing.err.find("nope.yaml"), std::string::npos) << missing.err;
  // A study without sim subjects has nothing to serve.
  auto none = testing::run_cli("serve-sim --study " + std::string(NF_SOURCE_DIR) + "/examples/envelope-http.yaml",
                               t.path(), testing::data_env() + " SIM_URL=http://127.0.0.1:1/v1");
  EXPECT_EQ(none.exit_code, 2) << none.err;
  EXPECT_NE(none.err.find("no subject or judge has backend: sim"), std::string::npos) << none.err;
}

}  // namespace
}  // namespace nf
