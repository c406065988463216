// noisefloor: a thin main over the library. Finds the subcommand and dispatches; every
// command parses its own flags (CLI11) and calls into the library.
#include <malloc.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "util/exit_code.h"
#include "util/strings.h"

namespace {

struct Command {
  const char* name;
  nf::cli::CommandFn fn;
  const char* summary;
};

const std::vector<Command>& commands() {
  static const std::vector<Command> k = {
      {"audit", nf::cli::cmd_audit, "plan, run (resumable), analyze and report a study in one go"},
      {"run", nf::cli::cmd_run, "run the study's missing draws into its store (resumable)"},
      {"worker", nf::cli::cmd_worker, "run a study's draws from a shared PostgreSQL store (any number of machines)"},
      {"analyze", nf::cli::cmd_analyze, "analyze a store and write report.md, report.html and results.json"},
      {"import", nf::cli::cmd_import, "import into a store: draws | votes | labels | missing-info | probe-sheet | inspect | lm-eval (import KIND FILE...)"},
      {"export", nf::cli::cmd_export, "export a store's draws, judge votes or human labels as JSONL or CSV"},
      {"judge", nf::cli::cmd_judge, "re-score stored chat answers with the study's judge panel (resumable)"},
      {"serve-sim", nf::cli::cmd_serve_sim, "serve the simulator over an OpenAI-compatible API on 127.0.0.1"},
      {"serve-fhir", nf::cli::cmd_serve_fhir, "serve the FHIR record server with the MedAgentBench chart on 127.0.0.1"},
      {"stats", nf::cli::cmd_stats, "run one statistical test from the command line (stats --help)"},
      {"plan", nf::cli::cmd_plan, "power and type-I error of the signed McNemar test by simulation"},
      {"check", nf::cli::cmd_check, "CI gates: exit 1 when a rule (floor, flip rate, parse rate, clusters) fails"},
  };
  return k;
}

void print_usage(FILE* out) {
  std::fprintf(out,
               "noisefloor %s - how much of an LLM evaluation result is signal, how much run-to-run noise\n\n"
               "Usage: noisefloor COMMAND [ARGS...]   (noisefloor COMMAND --help for details)\n\nCommands:\n",
               NOISEFLOOR_VERSION);
  for (const auto& c : commands()) std::fprintf(out, "  %-10s %s\n", c.name, c.summary);
  std::fprintf(out,
               "\nQuick start:\n"
               "  noisefloor audit examples/sample-floor.yaml --out runs/sample\n"
               "  NOISEFLOOR_DATA=../shared/data noisefloor audit examples/medqa-floor.yaml\n\n"
               "Exit codes: 0 success, 1 analysis found problems, 2 bad input or usage,\n"
               "            3 backend unavailable, 4 internal error, 130 interrupted (Ctrl-C / SIGTERM;\n"
               "            run the same command again to resume).\n");
}

}  // namespace

int main(int argc, char** argv) {
  // glibc's malloc serves blocks from 128 KiB up by mmap and unmaps them when freed, raising
  // that threshold (up to 32 MiB, the trim threshold to twice it) only as such blocks are
  // freed; until then each new block's pages are faulted in afresh (a few microseconds per
  // 4 KiB page on a virtual machine). Start at the adapted values: `analyze` of 1M outcome
  // values takes ~1,300 fewer page faults (issue 14; bench/README.md).
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
  if (argc < 2) {
    print_usage(stderr);
    return static_cast<int>(nf::ExitCode::kUsage);
  }
  const std::string name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    print_usage(stdout);
    return 0;
  }
  if (name == "--version" || name == "version") {
    std::printf("noisefloor %s\n", NOISEFLOOR_VERSION);
    return 0;
  }
  std::vector<std::string> names;
  for (const auto& c : commands()) {
    if (name == c.name) return c.fn(argc - 1, argv + 1);
    names.emplace_back(c.name);
  }
  std::fprintf(stderr, "noisefloor: unknown command '%s'%s\nRun 'noisefloor --help' for the list of commands.\n",
               name.c_str(), nf::did_you_mean(name, names).c_str());
  return static_cast<int>(nf::ExitCode::kUsage);
}
