// `noisefloor serve-fhir`: the FHIR R4 record server (fhir/) with the MedAgentBench chart
// on 127.0.0.1, for agents and studies that talk FHIR over HTTP (seed 002 §3, §6).
#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/common.h"
#include "data/medagentbench.h"
#include "fhir/chart_fixture.h"
#include "fhir/http_server.h"
#include "util/exit_code.h"

namespace nf::cli {

int cmd_serve_fhir(int argc, char** argv) {
  CLI::App app{
      "Serve the FHIR R4 record server on 127.0.0.1 until Ctrl-C / SIGTERM: the 500 Patient resources of\n"
      "MedAgentBench's fhir_snapshot.jsonl plus the chart fixture noisefloor generates so that every fact\n"
      "the benchmark's grader reads for task3/5/8/9/10 holds (docs/fhir-rerun.md). Searches: Patient?identifier=,\n"
      "Observation?patient=&code=&date=ge.. with _sort, _count and paging. Writes: POST to a typed endpoint\n"
      "is validated and answered 201 + Location; POST to the base URL or with a mismatched type is 400 with\n"
      "an OperationOutcome. Writes persist for the life of the process.\n\n"
      "On start it prints exactly one line: noisefloor serve-fhir listening on http://127.0.0.1:PORT/fhir/\n\n"
      "Example:\n"
      "  noisefloor serve-fhir --port 8090 --data ../shared/data/medagentbench\n"
      "  curl 'http://127.0.0.1:8090/fhir/Observation?patient=S3241217&code=K&_sort=-date&_count=1'",
      "noisefloor serve-fhir"};
  int port = 0;
  std::string dir;
  if (const char* d = std::getenv("NOISEFLOOR_DATA"); d != nullptr && *d) dir = std::string(d) + "/medagentbench";
  uint64_t seed = 2;
  app.add_option("--port", port, "TCP port on 127.0.0.1 (0 = any free port)")->capture_default_str();
  app.add_option("--data", dir,
                 "folder with test_data_v2.json, fhir_snapshot.jsonl and task_truth_audit.json "
                 "(default: $NOISEFLOOR_DATA/medagentbench)");
  app.add_option("--chart-seed", seed, "seed of the chart fixture's older history")->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : static_cast<int>(ExitCode::kUsage);
  }
  if (dir.empty()) {
    std::fprintf(stderr, "noisefloor serve-fhir: --data is required (or set NOISEFLOOR_DATA)\n");
    return static_cast<int>(ExitCode::kUsage);
  }
  auto mrns = read_medagentbench_mrns(dir + "/test_data_v2.json");
  if (!mrns.ok()) {
    std::fprintf(stderr, "noisefloor serve-fhir: %s\n", mrns.status().message().c_str());
    return static_cast<int>(exit_code_for(mrns.status()));
  }
  return serve_until_signal("serve-fhir", [&] {
    return FhirHttpServer::start(
        [&](const std::string& base) {
          return build_medagentbench_server(base, dir + "/fhir_snapshot.jsonl", dir + "/task_truth_audit.json", *mrns,
                                            seed);
        },
        port);
  });
}

}  // namespace nf::cli
