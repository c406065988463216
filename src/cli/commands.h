// The subcommands of the noisefloor CLI. Each takes the arguments after its own name
// and returns a process exit code (util/exit_code.h). main.cc only dispatches.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace nf {
struct Study;
class Store;
}  // namespace nf

namespace nf::cli {

using CommandFn = std::function<int(int argc, char** argv)>;

int cmd_audit(int argc, char** argv);
int cmd_run(int argc, char** argv);
int cmd_worker(int argc, char** argv);  // cmd_worker.cc: one worker of a multi-machine study on PostgreSQL
int cmd_analyze(int argc, char** argv);
int cmd_import(int argc, char** argv);
int cmd_serve_sim(int argc, char** argv);
int cmd_serve_fhir(int argc, char** argv);  // cmd_serve_fhir.cc: the FHIR record server (seed 002)
int cmd_stats(int argc, char** argv);
int cmd_export(int argc, char** argv);
int cmd_plan(int argc, char** argv);  // cmd_plan.cc: signed McNemar power by simulation (seed 000 S12)
int cmd_judge(int argc, char** argv);  // cmd_judge.cc: re-score stored chat draws with a judge panel
int cmd_check(int argc, char** argv);  // cmd_check.cc: CI gates over a store's results (exit 1 on a failed rule)

/// Options of `import inspect | lm-eval` (cmd_import_harness.cc).
struct HarnessImportArgs {
  std::string format;  // "inspect" | "lm-eval"
  std::vector<std::string> files;
  std::string store_path, study_name, cluster_field, subject, task;
};
/// `import inspect LOG... | lm-eval SAMPLES.jsonl...`: reads every file, then writes all
/// their draws into the store in one transaction; warnings go to stderr. Returns 0, or
/// 2 for bad input (nothing is written then).
int import_harness(const HarnessImportArgs& args);

/// Runs the study's judge panel over the store (runner/judge.h run_judges), prints one
/// summary line per judge and returns the exit code of `noisefloor judge` (0; 2 bad input;
/// 3 every judgment failed at the API; 130 interrupted). Used by `judge` and `audit`.
int run_judge_panel(const std::string& cmd, const Study& study, Store& store, bool refresh, bool progress);

/// One `noisefloor stats TEST` entry (cmd_stats.cc dispatches over the registry).
struct StatsTest {
  std::string name;     // "wilson"
  std::string usage;    // "wilson X N [--level L]"
  std::string summary;  // one line
  /// args: the words after the test name; json: print JSON instead of text.
  std::function<int(const std::vector<std::string>& args, bool json)> run;
};

/// Proportions, paired, resampling, multiplicity, rank, planning (stats_tests_core.cc).
void register_core_stats_tests(std::vector<StatsTest>& out);
/// Agreement, ANOVA, logistic regression (stats_tests_models.cc).
void register_model_stats_tests(std::vector<StatsTest>& out);
/// The ratings-layout paragraph `stats TEST --help` prints for the agreement tests
/// (which columns are raters, the item-id column and the id-like-column refusal).
extern const char* const kRatingsLayoutHelp;

}  // namespace nf::cli
