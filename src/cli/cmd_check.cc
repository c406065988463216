// noisefloor check: CI gates over a store's analyses (metrics/check.h). Exit 0 when
// every rule passes, 1 when one fails (naming the rule and the cell), 2 for bad rules.
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/common.h"
#include "metrics/analyze.h"
#include "metrics/check.h"
#include "store/store.h"
#include "metrics/coverage.h"
#include "util/exit_code.h"
#include "util/file.h"

namespace nf::cli {

int cmd_check(int argc, char** argv) {
  CLI::App app{"Gate a CI job on the noise floor: run the analyses over a store (or read a results.json) and check "
               "rules against them. Exit 0 when every rule passes, 1 when one fails (each failing cell is named) or "
               "the store's plan is partial (unless --allow-partial), 2 "
               "for a bad rule or input (a rule that matches no cell is a bad rule).\n\nExamples:\n"
               "  noisefloor check --store runs/s/store.sqlite --max-pooled-floor 0.05 --max-parse-error-rate 0.02\n"
               "  noisefloor check --store runs/s/store.sqlite --rules ci/noise-gates.yaml\n"
               "Rules file (docs/ci-gates.md):\n"
               "  rules:\n"
               "    - {rule: flip_rate_clears_floor, condition: race_black_man_private, action: admit}\n"
               "    - {rule: accuracy_difference_clears_floor, a: openai/gpt-5, b: google/gemini-2.5-pro}\n"
               "    - {rule: max_pooled_floor, max: 0.05, use: upper}\n"
               "    - {rule: max_parse_error_rate, max: 0.02}\n"
               "    - {rule: min_clusters, min: 30}",
               "noisefloor check"};
  std::string store_path, results_path, rules_path;
  bool flip = false, accuracy = false, verbose = false, allow_partial = false;
  double max_pooled = -1, max_parse = -1, min_clusters = -1;
  AnalyzeOptions o;
  o.tool_version = NOISEFLOOR_VERSION;
  app.add_option("--store", store_path, "the store to analyze: a SQLite file or a postgresql://... URL");
  app.add_option("--results", results_path, "check this results.json instead of analyzing a store");
  app.add_option("--rules", rules_path, "YAML rules file");
  app.add_flag("--flip-clears-floor", flip, "every non-control flip rate must exceed its action's floor upper bound");
  app.add_flag("--accuracy-difference-clears-floor", accuracy,
               "every paired subject difference must exceed the larger floor upper bound of the two");
  app.add_option("--max-pooled-floor", max_pooled, "every pooled floor must be <= X");
  app.add_option("--max-parse-error-rate,--max-parse-rate", max_parse,
                 "every cell's parse error rate (parse errors / answered draws) must be <= Y");
  app.add_option("--min-clusters", min_clusters, "every interval must rest on >= Z clusters");
  app.add_option("--resamples", o.bootstrap.resamples, "cluster-bootstrap resamples (default: the study's, else 2000)")
      ->check(at_least(1));
  app.add_flag("--verbose,-v", verbose, "also print the cells that pass");
  app.add_flag("--allow-partial", allow_partial,
               "do not fail when the store's plan is partial (planned draws or cells not drawn yet: the rules then "
               "check only what ran); without it such a store fails the check");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : static_cast<int>(ExitCode::kUsage);
  }
  if (store_path.empty() == results_path.empty())
    return fail("check", InvalidArgument("give exactly one of --store and --results"));
  std::vector<CheckRule> rules;
  if (!rules_path.empty()) {
    auto text = read_file(rules_path);
    if (!text.ok()) return fail("check", text.status());
    auto parsed = parse_check_rules(*text, rules_path);
    if (!parsed.ok()) return fail("check", parsed.status());
    rules = std::move(*parsed);
  }
  auto limit_rule = [&](const char* kind, double v, const char* flag) {
    CheckRule r;
    r.kind = kind;
    r.limit = v;
    r.origin = flag;
    rules.push_back(r);
  };
  if (flip) rules.push_back(CheckRule{"flip_rate_clears_floor", 0, "point", nlohmann::json::object(), false, "--flip-clears-floor"});
  if (accuracy)
    rules.push_back(CheckRule{"accuracy_difference_clears_floor", 0, "point", nlohmann::json::object(), false,
                              "--accuracy-difference-clears-floor"});
  for (auto [v, kind, flag] : {std::tuple{max_pooled, "max_pooled_floor", "--max-pooled-floor"},
                               std::tuple{max_parse, "max_parse_error_rate", "--max-parse-error-rate"},
                               std::tuple{min_clusters, "min_clusters", "--min-clusters"}}) {
    if (app.count(flag) == 0) continue;
    if (!(v >= 0)) return fail("check", InvalidArgument(fmt::format("{}: expected a number >= 0", flag)));
    limit_rule(kind, v, flag);
  }
  if (rules.empty())
    return fail("check", InvalidArgument("no rules: give --rules FILE or a rule flag (noisefloor check --help)"));

  nlohmann::json results;
  if (!results_path.empty()) {
    auto text = read_file(results_path);
    if (!text.ok()) return fail("check", text.status());
    try {
      results = nlohmann::json::parse(*text);
    } catch (const nlohmann::json::exception& ex) {
      return fail("check", InvalidArgument(fmt::format("{}: malformed JSON: {}", results_path, ex.what())));
    }
  } else {
    auto store = Store::open_for_reading(store_path);
    if (!store.ok()) return fail("check", store.status());
    o.bootstrap_from_study = app.count("--resamples") == 0;
    auto r = analyze_store(**store, o);
    if (!r.ok()) return fail("check", r.status());
    results = std::move(*r);
    // An analysis a rule reads that the store's defaults did not run.
    for (const auto& name : analyses_needed(rules)) {
      if (results["analyses"].contains(name)) continue;
      AnalyzeOptions extra = o;
      extra.analyses = {{name, nlohmann::json::object()}};
      auto more = analyze_store(**store, extra);
      if (!more.ok()) return fail("check", more.status());
      results["analyses"][name] = (*more)["analyses"][name];
    }
  }
  auto report = evaluate_checks(results, rules);
  if (!report.ok()) return fail("check", report.status());
  for (const auto& f : report->findings) {
    if (f.passed && !verbose) continue;
    std::printf("%s rule %zu %s: %s: %s\n", f.passed ? "pass" : "FAIL", f.rule + 1, rules[f.rule].kind.c_str(),
                f.cell.c_str(), f.detail.c_str());
  }
  const size_t failed = report->failed();
  // A partial plan (an interrupted, crashed or rate-limited run) checks only the cells that
  // ran: the ones that would fail may never have been drawn (tester s11 finding 18).
  const std::string partial = results.contains("plan") ? partial_plan_text(results["plan"]) : "";
  if (!partial.empty())
    std::printf("%s plan: %s: the rules checked only the draws that ran%s\n", allow_partial ? "note" : "FAIL",
                partial.c_str(), allow_partial ? " (--allow-partial)" : "; finish the run, or pass --allow-partial");
  const bool plan_failed = !partial.empty() && !allow_partial;
  std::printf("check: %zu rule(s), %zu cell(s) checked, %zu failed%s\n", rules.size(), report->findings.size(), failed,
              plan_failed ? ", plan partial" : "");
  return failed > 0 || plan_failed ? static_cast<int>(ExitCode::kProblems) : 0;
}

}  // namespace nf::cli
