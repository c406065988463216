// examples/envelope.yaml (issue 11 "Must show"): three sims whose skill depends on the
// template by construction, audited offline over 200 MedQA items x templates x
// temperatures. The true score of every cell is the mean probability of the gold option
// under the sim's own distribution (SimBackend::option_probabilities on the rendered
// prompt); the envelope analysis must recover the true signs, rho_flip and reachable
// orderings.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <string>

#include "cli/envelope_truth.h"
#include "common/test_data.h"

namespace nf {
namespace {

TEST(EnvelopeSim, AuditRecoversTheConfiguredRankFlips) {
  testing::TempDir t;
  const std::string study_path = std::string(NF_SOURCE_DIR) + "/examples/envelope.yaml";
  auto a = testing::run_cli("audit " + study_path + " --quiet --out " + (t / "out") + " --store " + (t / "s.sqlite"),
                            t.path(), testing::data_env());
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const auto results = nlohmann::json::parse(testing::slurp(t / "out/results.json"));
  const auto& e = results["analyses"]["envelope"];
  ASSERT_FALSE(e.contains("skipped")) << e.dump();

  // The truth, from the sim's own distribution.
  const auto truth = testing::envelope_truth(study_path);
  ASSERT_EQ(truth.size(), 36u);  // 3 subjects x (8 free-form + 4 greedy logprob) configurations
  // Measured cells: exact at temperature 0 (argmax), within sampling noise at 0.7.
  for (const auto& s : e["subjects"])
    for (const auto& c : s["cells"]) {
      const double want = truth.at({s["subject"].get<std::string>(), c["config"].get<std::string>()});
      const double tol = c["config"].get<std::string>().find("temperature=0,") != std::string::npos ? 1e-12 : 0.1;
      EXPECT_NEAR(c["score"].get<double>(), want, tol) << s["subject"] << " " << c["config"];
    }
  // True pairwise signs -> true n+, n-, rho_flip.
  for (const auto& p : e["pairs"]) {
    int plus = 0, minus = 0, n = 0;
    for (const auto& [k, v] : truth) {
      if (k.first != p["a"]) continue;
      const double d = v - truth.at({p["b"].get<std::string>(), k.second});
      plus += d > 0;
      minus += d < 0;
      ++n;
    }
    EXPECT_EQ(p["n_plus"], plus) << p.dump();
    EXPECT_EQ(p["n_minus"], minus) << p.dump();
    EXPECT_DOUBLE_EQ(p["rho_flip"].get<double>(), static_cast<double>(std::min(plus, minus)) / n);
    EXPECT_EQ(n, 12);
    EXPECT_DOUBLE_EQ(p["rho_flip"].get<double>(), 0.5);  // as configured: each pair reverses on half the grid
  }
  EXPECT_EQ(e["rankings"]["reachable"], 2);
  EXPECT_EQ(e["rankings"]["orderings"][0]["total_order"], "sim-a > sim-c > sim-b");
  EXPECT_EQ(e["rankings"]["orderings"][1]["total_order"], "sim-b > sim-c > sim-a");
  // The report and the GRID card carry it.
  const std::string md = testing::slurp(t / "out/report.md");
  EXPECT_NE(md.find("| sim-a vs sim-b | 12 | 6 | 6 | 0 | 0.500 |"), std::string::npos) << md;
  // The pair table is a table in report.html too (an unescaped |C| in its header once made
  // cmark-gfm print it as a paragraph of pipes).
  EXPECT_NE(testing::slurp(t / "out/report.html").find("<td>sim-a vs sim-b</td>"), std::string::npos);
  // The variance partition keeps the free-form slice.
  EXPECT_EQ(e["variance"]["slice"], "scoring_path=free_form");
  const auto card = nlohmann::json::parse(testing::slurp(t / "out/grid_card.json"));
  EXPECT_EQ(card["pins"]["served_models"]["sim-a"][0], "sim-a");
  EXPECT_FALSE(card["pins"]["datasets"][0]["sha256"].is_null());
  EXPECT_EQ(card["pins"]["study_hash"], results["study"]["hash"]);

  // pool_axes averages an axis away (as "diverse" decoding averages seeds): few-shot here.
  auto b = testing::run_cli("analyze --store " + (t / "s.sqlite") + " --out " + (t / "pooled") +
                                " --analysis 'envelope={\"pool_axes\": [\"fewshot\"], \"resamples\": 50}'",
                            t.path());
  ASSERT_EQ(b.exit_code, 0) << b.err;
  const auto pooled = nlohmann::json::parse(testing::slurp(t / "pooled/results.json"))["analyses"]["envelope"];
  EXPECT_EQ(pooled["n_configs"], 4);
  for (const auto& s : pooled["subjects"])
    for (const auto& c : s["cells"]) EXPECT_EQ(c["n"], 400) << c.dump();  // 200 items x 2 few-shot levels
  EXPECT_NE(b.err.find("pooled/grid_card.json"), std::string::npos) << b.err;  // the message names every file

  // Re-analysing into the same directory without the envelope leaves no stale card behind.
  auto c = testing::run_cli("analyze --store " + (t / "s.sqlite") + " --out " + (t / "pooled") + " --analysis floor",
                            t.path());
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_FALSE(std::filesystem::exists(t / "pooled/grid_card.json"));
  EXPECT_EQ(c.err.find("grid_card.json"), std::string::npos) << c.err;
  EXPECT_NE(c.err.find("pooled/report.html"), std::string::npos) << c.err;
}

}  // namespace
}  // namespace nf
