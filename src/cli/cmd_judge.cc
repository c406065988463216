// noisefloor judge: re-score stored chat draws with the study's judge panel
// (runner/judge.h; seed 004 §2.5-2.6; docs/judging.md).
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/common.h"
#include "runner/judge.h"
#include "spec/study.h"
#include "store/run_lock.h"
#include "store/store.h"
#include "util/exit_code.h"

namespace nf::cli {

int run_judge_panel(const std::string& cmd, const Study& study, Store& store, bool refresh, bool progress) {
  JudgeOptions o;
  o.refresh = refresh;
  o.progress = progress;
  o.stop = &install_stop_handler();
  auto sum = run_judges(study, store, o);
  if (!sum.ok()) return fail(cmd, sum.status());
  for (const auto& c : sum->per_judge) {
    std::fprintf(stderr,
                 "%s: judge %s: %lld planned, %lld already judged, %lld judged now: %lld votes (%lld met), "
                 "%lld parse errors, %lld api errors%s\n",
                 cmd.c_str(), c.judge.c_str(), static_cast<long long>(c.planned),
                 static_cast<long long>(c.already_done), static_cast<long long>(c.executed),
                 static_cast<long long>(c.ok), static_cast<long long>(c.met), static_cast<long long>(c.parse_error),
                 static_cast<long long>(c.api_error),
                 c.first_api_error.empty() ? "" : fmt::format(" (first: {})", c.first_api_error).c_str());
  }
  std::fprintf(stderr, "%s: %lld judgments planned, %lld already in the store, %lld run now (ok %lld, parse_error "
               "%lld, api_error %lld) in %.1f s\n",
               cmd.c_str(), static_cast<long long>(sum->planned), static_cast<long long>(sum->already_done),
               static_cast<long long>(sum->executed), static_cast<long long>(sum->ok),
               static_cast<long long>(sum->parse_error), static_cast<long long>(sum->api_error), sum->seconds);
  if (o.stop->load()) {
    std::fprintf(stderr, "%s: interrupted; run the same command again to resume\n", cmd.c_str());
    return 130;
  }
  if (sum->parse_error > 0 && sum->ok == 0)
    std::fprintf(stderr, "%s: warning: none of the %lld verdicts of this run could be parsed: check the judges' "
                 "output format (docs/judging.md); parse errors are never votes and are not retried\n",
                 cmd.c_str(), static_cast<long long>(sum->parse_error));
  // The exit-code rule of `run` (cmd_study.cc): API failures are reported and retried on
  // the next run; only when every judgment of this run failed at the API is it exit 3.
  if (sum->api_error > 0 && refresh) {
    // A refreshed call that failed never replaced a stored verdict (runner/judge.cc).
    std::fprintf(stderr,
                 "%s: %lld refreshed judgments failed at the API (first: %s); no stored vote was replaced: %lld stored "
                 "judgments were kept as they were, %lld (none or an api_error stored) are stored as api_error, never "
                 "votes; when the judge is back, run the same command again\n",
                 cmd.c_str(), static_cast<long long>(sum->api_error), sum->first_api_error.c_str(),
                 static_cast<long long>(sum->refresh_kept), static_cast<long long>(sum->api_error - sum->refresh_kept));
  } else if (sum->api_error > 0) {
    std::fprintf(stderr, "%s: %lld judgments failed at the API (first: %s); they are not votes and are retried on "
                 "the next run\n", cmd.c_str(), static_cast<long long>(sum->api_error),
                 sum->first_api_error.c_str());
  }
  if (sum->api_error > 0) {
    if (sum->ok + sum->parse_error == 0 && sum->executed > 0) {
      std::fprintf(stderr, "%s: every judgment failed at the API: judge backend unavailable\n", cmd.c_str());
      return static_cast<int>(ExitCode::kBackendUnavailable);
    }
  }
  return 0;
}

int cmd_judge(int argc, char** argv) {
  CLI::App app{
      "Re-score the stored answers of a chat study with the study's judge panel (seed 004 §2.5-2.6).\n"
      "Every stored ok chat draw is shown to every judge of `judge.panel` with the binary criterion\n"
      "`judge.criterion` (default: seed 004 Appendix A) at the pinned settings (temperature, top_p, seed,\n"
      "max_tokens); the verdict is parsed from a JSON object {\"verdict\": \"met\"|\"not_met\"} or a final\n"
      "\"Verdict: MET\" line, and one judgment per (draw, judge) is stored with the judge's provider.\n\n"
      "What is a vote: only a parsed verdict (status ok; 1 = criterion met). A reply with no parsable\n"
      "verdict is a parse_error and a failed request (HTTP error, timeout, refusal) is an api_error:\n"
      "neither is ever a vote. api_errors are retried by the next run; everything else is kept, so\n"
      "re-running the same command after a crash or Ctrl-C judges only what is missing (--refresh\n"
      "re-judges everything). Then `noisefloor analyze` writes the judge_panel section.\n\n"
      "Exit codes: 0 done (judge API failures are reported and retried next time), 2 bad input (study\n"
      "file, no judge panel, no store or a store without chat draws, a store another `judge`, `run` or\n"
      "`audit` process is using), 3 every judgment of this run failed at the API (judge backend\n"
      "unavailable), 130 interrupted. --refresh: a call that fails at the API never replaces a stored vote.\n\n"
      "Example (docs/judging.md):\n"
      "  noisefloor serve-sim --port 8089 &\n"
      "  noisefloor import probe-sheet $NOISEFLOOR_DATA/missing-info-judges/annotation_sheet.md --store "
      "runs/probe/store.sqlite\n"
      "  SIM_URL=http://127.0.0.1:8089/v1 noisefloor judge examples/probe-judges.yaml\n"
      "  noisefloor analyze --store runs/probe/store.sqlite --out runs/probe",
      "noisefloor judge"};
  std::string study_path, store_path;
  bool refresh = false, no_progress = false;
  app.add_option("study", study_path, "study file (YAML) with a `judge:` block; see docs/judging.md")->required();
  app.add_option("--store", store_path,
                 "store holding the chat draws: a SQLite file or postgresql://... URL (default: the study's `store:`, else runs/<study name>/store.sqlite)");
  app.add_flag("--refresh", refresh, "re-judge every (draw, judge), replacing the stored judgments (a call that fails at the API keeps the stored one)");
  app.add_flag("--no-progress,--quiet", no_progress, "no progress line (--quiet as for run and audit)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : static_cast<int>(ExitCode::kUsage);
  }
  auto study = load_study(study_path);
  if (!study.ok()) return fail("judge", study.status());
  if (store_path.empty()) store_path = study->store.empty() ? "runs/" + study->name + "/store.sqlite" : study->store;
  auto store = Store::open_existing(store_path);
  if (!store.ok()) return fail("judge", store.status());
  auto run_lock = hold_run_lock(**store, "noisefloor judge");  // one judge or run per store (store/run_lock.h)
  if (!run_lock.ok()) return fail("judge", run_lock.status());
  return run_judge_panel("judge", *study, **store, refresh, !no_progress);
}

}  // namespace nf::cli
