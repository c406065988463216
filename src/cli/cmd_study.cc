// noisefloor audit | run | analyze
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/common.h"
#include "metrics/analyze.h"
#include "metrics/coverage.h"
#include "metrics/registry.h"
#include "report/markdown.h"
#include "runner/runner.h"
#include "spec/study.h"
#include "store/run_lock.h"
#include "store/store.h"
#include "util/exit_code.h"
#include "util/strings.h"

namespace nf::cli {

namespace {

struct StudyArgs {
  std::string study_path;
  std::string out_dir;
  std::string store_path;
  bool no_cache = false;
  bool refresh = false;
  bool quiet = false;
  int threads = 0;
  int64_t max_draws = -1;
  int max_consecutive_api_errors = 16;
  bool no_event_loop = false;
};

void add_study_args(CLI::App& app, StudyArgs& a, bool writes_report) {
  app.add_option("study", a.study_path, "study file (YAML); see docs/study.md")->required();
  app.add_option("--out", a.out_dir,
                 writes_report ? "output directory for report.md, report.html and results.json (default: runs/<study name>)"
                               : "directory of the default store <out>/store.sqlite and of noise_control.json "
                                 "(default: runs/<study name>); run writes no report: use analyze or audit");
  app.add_option("--store", a.store_path,
                 "SQLite store file or postgresql:// URL (default: the study's `store:`, else <out>/store.sqlite)");
  app.add_flag("--no-cache", a.no_cache, "do not look up the response cache (every draw calls the backend)");
  app.add_flag("--refresh", a.refresh,
               "re-run every planned draw, replacing the stored ones (and ignoring the response cache)");
  app.add_flag("--quiet", a.quiet, "no progress line");
  app.add_option("--threads", a.threads, "worker threads (default 0: the largest subject concurrency)")
      ->check(at_least(0));
  app.add_option("--max-draws", a.max_draws, "stop after this many new draws (for rehearsals; resume later)")
      ->check(at_least(0));
  app.add_option("--max-consecutive-api-errors", a.max_consecutive_api_errors,
                 "stop the run (exit 3, resumable) once this many draws of one subject in a row failed because its "
                 "server could not be reached or answered 5xx, after retries, or at once when it sent no reply to any "
                 "call for its timeout_s (it hangs); 0 = never stop (docs/backends.md)")
      ->capture_default_str()
      ->check(at_least(0));
  app.add_flag("--no-event-loop", a.no_event_loop,
               "MCQ studies on HTTP backends: one blocking worker thread per call in flight instead of the event loop "
               "(same draws; for comparison or as a fallback; docs/scale.md)");
}

std::string resolve_out(const StudyArgs& a, const Study& s) {
  return a.out_dir.empty() ? "runs/" + s.name : a.out_dir;
}

std::string resolve_store(const StudyArgs& a, const Study& s, const std::string& out) {
  if (!a.store_path.empty()) return a.store_path;
  if (!s.store.empty()) return s.store;
  return out + "/store.sqlite";
}

// Runs the study; returns an exit code (0 to continue).
int do_run(const std::string& cmd, const StudyArgs& a, const Study& study, Store& store) {
  RunOptions ro;
  ro.use_cache = !a.no_cache;
  ro.refresh = a.refresh;
  ro.progress = !a.quiet;
  ro.threads = a.threads;
  ro.max_draws = a.max_draws;
  ro.max_consecutive_api_errors = a.max_consecutive_api_errors;
  ro.event_loop = !a.no_event_loop;
  ro.stop = &install_stop_handler();
  auto sum = run_study(study, store, ro);
  if (!sum.ok()) return fail(cmd, sum.status());
  // --refresh re-runs every planned draw, stored or not: "0 already in the store" would
  // read as if the store were empty (tester finding 22.8, session 9).
  std::string found = ro.refresh ? std::string("--refresh: every planned draw re-run, stored ones replaced")
                                 : fmt::format("{} already in the store", sum->already_done);
  if (ro.refresh && sum->refresh && sum->refresh->resumed)  // an interrupted refresh, resumed (runner.h)
    found = fmt::format("--refresh resumed: {} already refreshed, the rest re-run", sum->already_done);
  if (ro.refresh && sum->refresh && sum->refresh->restarted)
    std::fprintf(stderr, "%s: the study file changed since an unfinished --refresh started: this one re-runs every "
                 "planned draw\n", cmd.c_str());
  std::fprintf(stderr,
               "%s: %lld planned, %s, %lld run now (ok %lld, parse_error %lld, api_error %lld, "
               "refused %lld%s) in %.1f s\n",
               cmd.c_str(), static_cast<long long>(sum->planned), found.c_str(),
               static_cast<long long>(sum->executed), static_cast<long long>(sum->ok),
               static_cast<long long>(sum->parse_error), static_cast<long long>(sum->api_error),
               static_cast<long long>(sum->refused),
               sum->cached ? fmt::format(", {} from cache", sum->cached).c_str() : "", sum->seconds);
  if (sum->refresh)
    if (const std::string note = refresh_note(*sum->refresh, study.source_path); !note.empty())
      std::fprintf(stderr, "%s: %s\n", cmd.c_str(), note.c_str());
  if (sum->abandoned > 0)
    std::fprintf(stderr, "%s: %lld draw%s in flight abandoned at the stop (not stored; a resume runs %s)\n",
                 cmd.c_str(), static_cast<long long>(sum->abandoned), sum->abandoned == 1 ? "" : "s",
                 sum->abandoned == 1 ? "it" : "them");
  if (ro.stop->load()) {
    std::fprintf(stderr, "%s: interrupted; run the same command again to resume\n", cmd.c_str());
    return 130;
  }
  if (!sum->breaker.empty()) {  // the circuit breaker stopped the run (runner.h RunOptions)
    const long long left = static_cast<long long>(sum->planned - sum->already_done - sum->executed);
    if (ro.refresh) {  // a refreshed call that failed never replaced a stored draw (runner.cc deliver)
      std::fprintf(stderr,
                   "%s: stopped: %s\n%s: backend unavailable; %lld draws not refreshed and %lld refreshed calls failed "
                   "at the API, replacing no stored answer: when the server is back, run the same command again\n",
                   cmd.c_str(), sum->breaker.c_str(), cmd.c_str(), left, static_cast<long long>(sum->api_error));
      return static_cast<int>(ExitCode::kBackendUnavailable);
    }
    std::fprintf(stderr,
                 "%s: stopped: %s\n%s: backend unavailable; %lld draws not run and %lld api_error draws are kept for a "
                 "resume: when the server is back, run the same command again\n",
                 cmd.c_str(), sum->breaker.c_str(), cmd.c_str(), left, static_cast<long long>(sum->api_error));
    return static_cast<int>(ExitCode::kBackendUnavailable);
  }
  if (sum->api_error > 0) {
    std::fprintf(stderr, "%s: %lld draws failed at the API (first: %s); they are not scored and are retried on resume\n",
                 cmd.c_str(), static_cast<long long>(sum->api_error), sum->first_api_error.c_str());
    if (sum->ok + sum->parse_error + sum->refused == 0 && sum->executed > 0) {
      if (sum->api_error_refused_request == sum->api_error) {
        // The server is up and answered every call by refusing the request (tester finding
        // 22.1, session 9: every prompt longer than the server's context): bad input.
        std::fprintf(stderr,
                     "%s: the server refused every request (first: %s): the requests do not fit this server "
                     "(context size, model name, parameters), it is not down\n",
                     cmd.c_str(), sum->first_api_error.c_str());
        return static_cast<int>(ExitCode::kUsage);
      }
      std::fprintf(stderr, "%s: every draw failed at the API: backend unavailable\n", cmd.c_str());
      return static_cast<int>(ExitCode::kBackendUnavailable);
    }
  }
  return 0;
}

// Serving-stack noise control (study key noise_control): prints one line per subject,
// writes <out>/noise_control.json and records the result in the study record.
int do_noise_control(const std::string& cmd, const Study& study, Store& store, const std::string& out_dir) {
  auto nc = run_noise_control(study);
  if (!nc.ok()) return fail(cmd, nc.status());
  for (const auto& s : (*nc)["subjects"]) {
    std::fprintf(stderr,
                 "%s: noise control %s: greedy requests x%d over %lld items: distinct completions per item max %lld "
                 "serially, %lld under load (%lld / %lld items nondeterministic; %lld api errors)\n",
                 cmd.c_str(), s["subject"].get<std::string>().c_str(), study.noise_control.requests,
                 static_cast<long long>((*nc)["items"].get<int64_t>()),
                 static_cast<long long>(s["serial_distinct_max"].get<int64_t>()),
                 static_cast<long long>(s["concurrent_distinct_max"].get<int64_t>()),
                 static_cast<long long>(s["serial_nondeterministic_items"].get<int64_t>()),
                 static_cast<long long>(s["concurrent_nondeterministic_items"].get<int64_t>()),
                 static_cast<long long>(s["api_errors"].get<int64_t>()));
  }
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  {
    FILE* f = std::fopen((out_dir + "/noise_control.json").c_str(), "w");
    if (f == nullptr) return fail(cmd, DataLoss("cannot write " + out_dir + "/noise_control.json"));
    const std::string text = nc->dump(2) + "\n";
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
  }
  auto rec = store.get_study();
  if (rec.ok()) {
    rec->spec["noise_control"] = *nc;
    auto put = store.put_study(*rec);
    if (!put.ok()) return fail(cmd, put.status());
  }
  std::fprintf(stderr, "%s: wrote %s/noise_control.json\n", cmd.c_str(), out_dir.c_str());
  return 0;
}

/// Whether analyze's results count any draw (a row of "draws").
bool results_hold_draws(const nlohmann::json& results) {
  const auto draws = results.find("draws");
  if (draws == results.end() || !draws->is_object()) return false;
  const auto rows = draws->find("rows");
  return rows != draws->end() && rows->is_array() && !rows->empty();
}

/// Analyzes `store` and writes the report. `require` (analyze): the check that the store
/// holds something to analyze (require_results), made when the analysis failed or found no
/// draws, before either is reported; a store with draws needs no check (issue 14:
/// require_results counts every draw, ~15 ms of a 1M-value analyze, and the analysis
/// reads them anyway).
int do_analyze(const std::string& cmd, Store& store, const std::string& out_dir, const AnalyzeOptions& opts,
               bool require = false) {
  auto results = analyze_store(store, opts);
  if (require && (!results.ok() || !results_hold_draws(*results)))
    if (Status st = require_results(store); !st.ok()) return fail(cmd, st);
  if (!results.ok()) return fail(cmd, results.status());
  // A partial plan and the warnings the report shows are said once on stderr too
  // (docs/results.md "plan", "warnings").
  if (const std::string partial = partial_plan_text(results->value("plan", nlohmann::json())); !partial.empty())
    std::fprintf(stderr, "%s: warning: %s: the report rests on the draws stored\n", cmd.c_str(), partial.c_str());
  for (const auto& w : results->value("warnings", nlohmann::json::array()))
    if (w.is_string()) std::fprintf(stderr, "%s: warning: %s\n", cmd.c_str(), w.get<std::string>().c_str());
  if (results->contains("analyses") && (*results)["analyses"].is_object())
    for (const auto& [name, section] : (*results)["analyses"].items())
      if (section.is_object())
        for (const auto& w : section.value("warnings", nlohmann::json::array()))
          if (w.is_string())
            std::fprintf(stderr, "%s: warning: %s: %s\n", cmd.c_str(), name.c_str(), w.get<std::string>().c_str());
  std::vector<std::string> written;
  Status st = write_report(out_dir, *results, &written);
  if (!st.ok()) return fail(cmd, st);
  std::string list;
  for (size_t i = 0; i < written.size(); ++i)
    list += (i == 0 ? "" : i + 1 == written.size() ? " and " : ", ") + out_dir + "/" + written[i];
  std::fprintf(stderr, "%s: wrote %s\n", cmd.c_str(), list.c_str());
  return 0;
}

AnalyzeOptions analyze_options_for(const Study& s) {
  AnalyzeOptions o;
  o.analyses = s.analyses;
  o.bootstrap = {s.bootstrap.resamples, s.bootstrap.seed, s.bootstrap.level};
  o.tool_version = NOISEFLOOR_VERSION;
  return o;
}

int study_command(const std::string& cmd, int argc, char** argv, bool run, bool analyze) {
  CLI::App app{cmd == "audit"
                   ? "Plan, run (resumable), analyze and report a study: the whole job in one command.\n"
                     "Re-running the same command after a crash or Ctrl-C continues where it stopped and never repeats "
                     "or loses a completed draw.\n\nExample:\n  noisefloor audit examples/sample-floor.yaml --out runs/sample"
                   : "Run the study's missing draws into its store (resumable; Ctrl-C stops cleanly).\n\nExample:\n"
                     "  noisefloor run examples/sample-floor.yaml --out runs/sample",
               "noisefloor " + cmd};
  StudyArgs a;
  add_study_args(app, a, analyze);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : static_cast<int>(ExitCode::kUsage);
  }
  auto study = load_study(a.study_path);
  if (!study.ok()) return fail(cmd, study.status());
  for (const auto& w : study->warnings) std::fprintf(stderr, "noisefloor %s: warning: %s\n", cmd.c_str(), w.c_str());
  const std::string out = resolve_out(a, *study);
  const std::string store_path = resolve_store(a, *study, out);
  if (cmd == "run" && study->subjects.empty())  // before opening (creating) the store
    return fail(cmd, FailedPrecondition(fmt::format(
                         "{}: the study has no subjects (a judging-only study): there are no draws to run; score the "
                         "stored draws with `noisefloor judge {}`",
                         a.study_path, a.study_path)));
  auto store = Store::open(store_path);
  if (!store.ok()) return fail(cmd, store.status());
  // One process at a time calls the API for this store: a second run would read the same
  // missing draws and pay for every one of them again (store/run_lock.h). Released
  // at exit, or by the kernel / server if this process dies. Declared after `store`, so
  // it is released before the store closes.
  auto run_lock = hold_run_lock(**store, "noisefloor " + cmd);
  if (!run_lock.ok()) return fail(cmd, run_lock.status());
  // A judging-only study (a `judge:` block, no subjects) has nothing to run: audit judges.
  const bool judging_only = cmd == "audit" && study->judge.enabled && study->subjects.empty();
  if (run && !judging_only) {
    const int rc = do_run(cmd, a, *study, **store);
    if (rc != 0) return rc;
    if (study->noise_control.enabled) {
      const int nrc = do_noise_control(cmd, *study, **store, out);
      if (nrc != 0) return nrc;
    }
  }
  // audit: the judge panel re-scores the stored chat draws before analyze (cmd_judge.cc).
  if (cmd == "audit" && study->judge.enabled) {
    const int jrc = run_judge_panel(cmd, *study, **store, a.refresh, !a.quiet);
    // Every judge failed at the API: the draws are fine, so still write the report (its
    // judge section says why there are no votes), then exit 3.
    if (jrc == static_cast<int>(ExitCode::kBackendUnavailable) && analyze) {
      const int arc = do_analyze(cmd, **store, out, analyze_options_for(*study));
      return arc != 0 ? arc : jrc;
    }
    if (jrc != 0) return jrc;
  }
  if (analyze) return do_analyze(cmd, **store, out, analyze_options_for(*study));
  return 0;
}

}  // namespace

int cmd_audit(int argc, char** argv) { return study_command("audit", argc, argv, true, true); }
int cmd_run(int argc, char** argv) { return study_command("run", argc, argv, true, false); }

namespace {

/// Parses one `--analysis NAME[=JSON]` argument. Errors: InvalidArgument naming the
/// argument for an unknown analysis (with a suggestion) or options that are not a JSON object.
Result<AnalysisSpec> parse_analysis_arg(const std::string& arg) {
  const auto eq = arg.find('=');
  AnalysisSpec spec;
  spec.name = arg.substr(0, eq);
  if (find_analysis(spec.name) == nullptr)
    return InvalidArgument(fmt::format("--analysis {}: unknown analysis '{}' (known: {}){}", arg, spec.name,
                                       fmt::join(analysis_names(), ", "), did_you_mean(spec.name, analysis_names())));
  if (eq == std::string::npos) return spec;
  const std::string text = arg.substr(eq + 1);
  spec.options = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (spec.options.is_discarded())
    return InvalidArgument(fmt::format("--analysis {}: options are not valid JSON: {}", spec.name, text));
  if (!spec.options.is_object())
    return InvalidArgument(
        fmt::format("--analysis {}: options must be a JSON object such as {{\"vote_sizes\": [3, 5]}}, got {}",
                    spec.name, text));
  return spec;
}

std::string analyses_help() {
  std::string out = "\n\nAnalyses (--analysis NAME or NAME='{JSON options}', repeatable):";
  for (const auto& e : analysis_registry()) out += fmt::format("\n  {:<15} {}", e.name, e.summary);
  return out;
}

}  // namespace

int cmd_analyze(int argc, char** argv) {
  CLI::App app{"Analyze whatever a store holds and write report.md and results.json (docs/results.md).\n"
               "Uses the analyses recorded with the study; for imported draws: floor, majority_floor and (MCQ) "
               "mcq_robustness; --analysis runs exactly the analyses named.\n\nExamples:\n"
               "  noisefloor analyze --store runs/sample/store.sqlite --out runs/sample --vote-sizes 3,5\n"
               "  noisefloor analyze --store runs/fma.sqlite --out runs/fma \\\n"
               "      --analysis floor --analysis 'fairness={\"pooled_exclude\":[\"cs_caution\"]}'" +
                   analyses_help(),
               "noisefloor analyze"};
  std::string store_path, out_dir;
  std::vector<int> vote_sizes;
  AnalyzeOptions o;
  o.tool_version = NOISEFLOOR_VERSION;
  bool include_cached = false;
  std::vector<std::string> analysis_args;
  app.add_option("--store", store_path, "the store to analyze: a SQLite file or a postgresql:// URL")->required();
  app.add_option("--analysis", analysis_args,
                 "run this analysis (repeatable): NAME or NAME='{JSON options}', e.g. "
                 "'majority_floor={\"vote_sizes\":[3,5]}'; the analyses are listed above")
      ->take_all();
  app.add_option("--out", out_dir, "output directory")->required();
  app.add_option("--vote-sizes", vote_sizes, "majority-vote sizes R' (comma-separated); implies floor + majority_floor")
      ->delimiter(',')
      ->check(at_least(1));
  app.add_option("--resamples", o.bootstrap.resamples,
                 "cluster-bootstrap resamples (default: the study's bootstrap recorded in the store, else 2000)")
      ->check(at_least(1));
  app.add_option("--bootstrap-seed", o.bootstrap.seed, "bootstrap seed (default: the study's, else 1)");
  app.add_option("--level", o.bootstrap.level, "confidence level (default: the study's, else 0.95)")
      ->check(CLI::Range(0.5, 0.999999));
  app.add_flag("--include-cached", include_cached, "count draws served from the response cache in stability statistics");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : static_cast<int>(ExitCode::kUsage);
  }
  o.include_cached = include_cached;
  o.bootstrap_from_study =
      app.count("--resamples") == 0 && app.count("--bootstrap-seed") == 0 && app.count("--level") == 0;
  for (const auto& arg : analysis_args) {
    auto spec = parse_analysis_arg(arg);
    if (!spec.ok()) return fail("analyze", spec.status());
    o.analyses.push_back(std::move(*spec));
  }
  if (!vote_sizes.empty()) {
    auto has = [&](const char* n) {
      return std::any_of(o.analyses.begin(), o.analyses.end(), [&](const AnalysisSpec& a) { return a.name == n; });
    };
    if (!has("floor")) o.analyses.insert(o.analyses.begin(), {"floor", nlohmann::json::object()});
    if (has("majority_floor"))
      return fail("analyze", InvalidArgument("--vote-sizes and --analysis majority_floor=...: give the vote sizes once"));
    o.analyses.push_back({"majority_floor", {{"vote_sizes", vote_sizes}}});
  }
  auto store = Store::open_for_reading(store_path);
  if (!store.ok()) return fail("analyze", store.status());
  if (!vote_sizes.empty())  // the study's own majority_floor vote sizes must agree (metrics/analyze.h)
    if (auto study = (*store)->get_study(); study.ok())
      if (Status st = check_vote_sizes_flag(*study, vote_sizes); !st.ok()) {
        if (Status held = require_results(**store); !held.ok()) return fail("analyze", held);  // reported first
        return fail("analyze", st);
      }
  return do_analyze("analyze", **store, out_dir, o, /*require=*/true);
}

}  // namespace nf::cli
