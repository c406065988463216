// `noisefloor plan`: power and type-I error of the signed exact McNemar test with one draw
// per case, by simulation (seed 000 S12, Table S3), plus the expected vignettes to reach N
// discordant pairs (seed 000 S2).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "metrics/fairness.h"
#include "stats/planning.h"
#include "util/exit_code.h"

namespace nf::cli {

int cmd_plan(int argc, char** argv) {
  CLI::App app{
      "Plan a counterfactual fairness audit. For each vignette count V, simulates the signed exact\n"
      "McNemar test with one reference and one condition draw per vignette, where the reference\n"
      "action probability of each vignette is q or 1 - q with 2q(1 - q) = FLOOR, and the condition\n"
      "adds SHIFT (uniform: the same sign on every vignette; opposing: +SHIFT on a random half,\n"
      "-SHIFT on the rest). Reports the rejection rate (type-I error when SHIFT = 0, else power) with\n"
      "its Wilson interval, the mean flip rate and the mean floor expectation, and the expected\n"
      "vignettes to reach --target-pairs discordant pairs under no effect (seed 000 S2, S12, Table S3).\n\n"
      "Example (Table S3 pattern):\n"
      "  noisefloor plan --vignettes 16,50,300 --floor 0.087 --shift 0.10 --pattern uniform\n"
      "  noisefloor plan --vignettes 300 --floor 0.087 --shift 0.10 --pattern opposing --json",
      "noisefloor plan"};
  std::vector<int> vignettes{16, 50, 300};
  double floor = 0.087, shift = 0.0, alpha = 0.05;
  std::string pattern = "uniform";
  int simulations = 2000;
  uint64_t seed = 1;
  int64_t target_pairs = 25;
  bool json = false;
  app.add_option("--vignettes,-V", vignettes, "vignette counts to simulate (comma-separated)")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--floor", floor, "instability floor of the action, in [0, 0.5]")->capture_default_str();
  app.add_option("--shift", shift, "effect on the action probability, in [-1, 1] (0 = the null)")
      ->capture_default_str();
  app.add_option("--pattern", pattern, "uniform | opposing")
      ->capture_default_str()
      ->check(CLI::IsMember({"uniform", "opposing"}));
  app.add_option("--simulations", simulations, "simulated studies per vignette count")->capture_default_str();
  app.add_option("--alpha", alpha, "test level")->capture_default_str();
  app.add_option("--seed", seed, "seed of the simulation streams")->capture_default_str();
  app.add_option("--target-pairs", target_pairs, "discordant pairs wanted (sample-size line)")->capture_default_str();
  app.add_flag("--json", json, "print JSON instead of a table");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : static_cast<int>(ExitCode::kUsage);
  }
  nlohmann::json out = nlohmann::json::array();
  for (int v : vignettes) {
    auto r = simulate_signed_mcnemar(v, floor, shift, pattern == "opposing", simulations, seed, alpha);
    if (!r.ok()) {
      std::fprintf(stderr, "noisefloor plan: %s\n", r.status().message().c_str());
      return static_cast<int>(exit_code_for(r.status()));
    }
    out.push_back({{"vignettes", r->vignettes},
                   {"floor", r->floor},
                   {"shift", r->shift},
                   {"pattern", pattern},
                   {"simulations", r->simulations},
                   {"rejection_rate", r->rejection_rate},
                   {"rejection_low", r->rejection_low},
                   {"rejection_high", r->rejection_high},
                   {"mean_flip_rate", r->mean_flip_rate},
                   {"mean_floor_expectation", r->mean_floor_expectation}});
  }
  nlohmann::json needed = nullptr;
  if (floor > 0) {
    auto n = stats::vignettes_needed(floor, target_pairs, 1);
    if (!n.ok()) {
      std::fprintf(stderr, "noisefloor plan: %s\n", n.status().message().c_str());
      return static_cast<int>(exit_code_for(n.status()));
    }
    needed = n->vignettes;
  }
  if (json) {
    std::printf("%s\n", nlohmann::json{{"rows", out},
                                       {"vignettes_needed", needed},
                                       {"target_pairs", target_pairs},
                                       {"alpha", alpha},
                                       {"seed", seed},
                                       {"source", "seed 000 S2, S12, Table S3"}}
                            .dump(2)
                            .c_str());
    return 0;
  }
  std::printf("signed exact McNemar, one draw per case: floor %.4g, shift %+.3g (%s), alpha %.3g, %d simulations\n\n",
              floor, shift, pattern.c_str(), alpha, simulations);
  std::printf("%10s  %14s  %17s  %10s  %17s\n", "vignettes", shift == 0 ? "type-I error" : "power", "95% CI (Wilson)",
              "mean flip", "floor expectation");
  for (const auto& r : out)
    std::printf("%10d  %14.3f  [%6.3f, %6.3f]  %10.4f  %17.4f\n", r["vignettes"].get<int>(),
                r["rejection_rate"].get<double>(), r["rejection_low"].get<double>(), r["rejection_high"].get<double>(),
                r["mean_flip_rate"].get<double>(), r["mean_floor_expectation"].get<double>());
  if (!needed.is_null())
    std::printf("\nexpected vignettes to reach %lld discordant pairs under no effect: %lld\n",
                static_cast<long long>(target_pairs), static_cast<long long>(needed.get<int64_t>()));
  return 0;
}

}  // namespace nf::cli
