// `noisefloor serve-sim`: the seeded simulator over an OpenAI-compatible API on loopback.
#include <pthread.h>
#include <signal.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/common.h"
#include "runner/sim_models.h"
#include "sim/sim_server.h"
#include "util/exit_code.h"

namespace nf::cli {

int cmd_serve_sim(int argc, char** argv) {
  CLI::App app{
      "Serve the seeded simulator (a model with known ground truth) over an OpenAI-compatible\n"
      "chat/completions API on 127.0.0.1 only, until Ctrl-C / SIGTERM. Use it to try a study end to\n"
      "end over HTTP, to test an OpenAI-compatible client, or to check that the analyses recover the\n"
      "simulator's known instability floor. Answers depend only on the flags (or --study's sim blocks) and\n"
      "each request's (model, messages, seed, temperature, top_p); temperature 0 is exactly deterministic.\n\n"
      "Endpoints: POST /v1/chat/completions, GET /v1/models, GET /health.\n"
      "On start it prints exactly one line: noisefloor serve-sim listening on http://127.0.0.1:PORT/v1\n\n"
      "Fault injection (rehearse a bad day): --fail-rate F makes a share F of chat requests fail with a\n"
      "kind drawn from --fail-kinds (429 with Retry-After, 500, reset = connection dropped mid-body,\n"
      "truncate = cut-off JSON, slow = --slow-ms extra delay); faults depend only on --fault-seed and the\n"
      "request, so a study sees the same faults at any concurrency.\n\n"
      "Example:\n"
      "  noisefloor serve-sim --port 8089 --seed 7 --parse-error-rate 0.02\n"
      "  noisefloor serve-sim --fail-rate 0.3 --fail-kinds 429,500,reset,truncate,slow --retry-after 1\n"
      "  noisefloor serve-sim --port 8089 --study examples/envelope.yaml   # its sim subjects, by model name\n"
      "and in the study file:\n"
      "  subjects:\n"
      "    - name: sim-http\n"
      "      backend: openai\n"
      "      model: sim-model\n"
      "      base_url: http://127.0.0.1:8089/v1",
      "noisefloor serve-sim"};
  int port = 0;
  SimParams defaults;
  uint64_t seed = defaults.seed;
  double spread = defaults.spread;
  double abstain_logit = defaults.abstain_logit;
  double parse_error_rate = defaults.parse_error_rate;
  app.add_option("--port", port, "TCP port on 127.0.0.1 (0 = any free port)")->capture_default_str();
  app.add_option("--seed", seed, "master seed of the simulator's streams")->capture_default_str();
  app.add_option("--spread", spread, "sd of the latent option logits (>= 0; larger = more decisive)")
      ->capture_default_str();
  app.add_option("--abstain-logit", abstain_logit,
                 "added to the logit of the abstention options (\"None of the other answers is correct.\", ...)")
      ->capture_default_str();
  app.add_option("--parse-error-rate", parse_error_rate,
                 "probability in [0, 1] that a reply has no extractable answer letter")
      ->capture_default_str();
  std::string study_path;
  auto* study_opt = app.add_option(
      "--study", study_path,
      "serve the backend: sim subjects of this study file by their model names, each with its own sim\n"
      "parameters (as in process); other model names get 404. Replaces --seed/--spread/--abstain-logit/\n"
      "--parse-error-rate (those come from each subject's sim block)");
  for (const char* flag : {"--seed", "--spread", "--abstain-logit", "--parse-error-rate"})
    study_opt->excludes(app.get_option(flag));
  FaultOptions faults;
  std::string fail_kinds = "429,500,reset,truncate,slow";
  app.add_option("--latency-ms", faults.latency_ms, "delay added to every chat request, milliseconds")
      ->capture_default_str();
  app.add_option("--fail-rate", faults.fail_rate, "share of chat requests that fail, in [0, 1]")->capture_default_str();
  app.add_option("--fail-kinds", fail_kinds, "comma-separated fault kinds to draw from: 429,500,reset,truncate,slow")
      ->capture_default_str();
  app.add_option("--retry-after", faults.retry_after,
                 "Retry-After value sent with injected 429s (seconds, or an HTTP date)")
      ->capture_default_str();
  app.add_option("--slow-ms", faults.slow_ms, "extra delay of a 'slow' fault, milliseconds")->capture_default_str();
  app.add_option("--fault-seed", faults.seed, "seed of the fault stream")->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : static_cast<int>(ExitCode::kUsage);
  }
  auto params = SimParams::from_json(
      {{"seed", seed}, {"spread", spread}, {"abstain_logit", abstain_logit}, {"parse_error_rate", parse_error_rate}});
  if (!params.ok()) {
    std::fprintf(stderr, "noisefloor serve-sim: %s\n", params.status().message().c_str());
    return static_cast<int>(ExitCode::kUsage);
  }

  auto kinds = FaultOptions::parse_kinds(fail_kinds);
  if (!kinds.ok()) {
    std::fprintf(stderr, "noisefloor serve-sim: %s\n", kinds.status().message().c_str());
    return static_cast<int>(ExitCode::kUsage);
  }
  faults.kinds = *kinds;
  if (Status st = faults.validate(); !st.ok()) {
    std::fprintf(stderr, "noisefloor serve-sim: %s\n", st.message().c_str());
    return static_cast<int>(ExitCode::kUsage);
  }

  SimModels models;
  if (!study_path.empty()) {
    auto study = load_study(study_path);
    auto served = study.ok() ? served_sim_models(*study, study_path) : Result<SimModels>(study.status());
    if (!served.ok()) {
      std::fprintf(stderr, "noisefloor serve-sim: %s\n", served.status().message().c_str());
      return static_cast<int>(exit_code_for(served.status()));
    }
    models = std::move(*served);
    for (const auto& [name, p] : models)
      std::fprintf(stderr, "noisefloor serve-sim: model %s (sim-%s)\n", name.c_str(), p.short_hash().c_str());
  }

  return serve_until_signal("serve-sim", [&] { return SimServer::start(*params, port, faults, models); });
}

}  // namespace nf::cli
