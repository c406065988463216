// `noisefloor stats TEST ARGS... [--json]`: one statistical test from the command line.
// Dispatches over the registry filled by register_core_stats_tests (stats_tests_core.cc)
// and register_model_stats_tests (stats_tests_models.cc).
#include <cstdio>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "util/exit_code.h"
#include "util/strings.h"

namespace nf::cli {

namespace {

const std::vector<StatsTest>& registry() {
  static const std::vector<StatsTest> tests = [] {
    std::vector<StatsTest> out;
    register_core_stats_tests(out);
    register_model_stats_tests(out);
    return out;
  }();
  return tests;
}

void print_listing(FILE* out) {
  std::fputs(
      "Usage: noisefloor stats TEST ARGS... [--json]\n\n"
      "Runs one statistical test and prints the estimate, interval, p-value and method\n"
      "(--json: one JSON object). noisefloor stats TEST --help shows one test.\n\nTests:\n",
      out);
  for (const auto& t : registry()) {
    if (t.usage.size() <= 40) {
      std::fprintf(out, "  %-40s %s\n", t.usage.c_str(), t.summary.c_str());
    } else {
      std::fprintf(out, "  %s\n  %-40s %s\n", t.usage.c_str(), "", t.summary.c_str());
    }
  }
  std::fputs(
      "\nExit codes: 0 success, also when the statistic is undefined for the data (printed as n/a\n"
      "with the reason on the `undefined` line; --json: null values and an \"undefined\" key);\n"
      "2 bad input (file, line and column named); 4 internal error.\n",
      out);
}

}  // namespace

int cmd_stats(int argc, char** argv) {
  std::vector<std::string> args;
  bool json = false;
  bool help = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json") json = true;
    else if (a == "--help" || a == "-h") help = true;
    else args.push_back(a);
  }
  if (args.empty()) {
    print_listing(help ? stdout : stderr);
    return help ? 0 : static_cast<int>(ExitCode::kUsage);
  }
  const std::string name = args.front();
  args.erase(args.begin());
  std::vector<std::string> names;
  for (const auto& t : registry()) {
    if (t.name == name) {
      if (help) {
        std::printf("Usage: noisefloor stats %s [--json]\n  %s\n", t.usage.c_str(), t.summary.c_str());
        if (t.usage.find("--item-column") != std::string::npos) std::fputs(kRatingsLayoutHelp, stdout);
        return 0;
      }
      return t.run(args, json);
    }
    names.push_back(t.name);
  }
  std::fprintf(stderr, "noisefloor stats: unknown test '%s'%s\nRun 'noisefloor stats --help' for the list of tests.\n",
               name.c_str(), did_you_mean(name, names).c_str());
  return static_cast<int>(ExitCode::kUsage);
}

}  // namespace nf::cli
