// noisefloor worker STUDY.yaml --store postgresql://...
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/common.h"
#include "runner/worker.h"
#include "spec/study.h"
#include "store/run_lock.h"
#include "store/store.h"
#include "util/exit_code.h"

namespace nf::cli {

int cmd_worker(int argc, char** argv) {
  CLI::App app{"Run a study's draws from a shared PostgreSQL store: start any number of workers, on any number of "
               "machines, with the same study file and store. The first writes the plan; each claims batches of "
               "planned draws under a lease (a killed worker's draws return to the pool when its lease expires), "
               "commits each draw once and exits when no planned draw remains. Then `noisefloor analyze --store URL`.\n"
               "See docs/store.md (PostgreSQL).\n\nExample:\n"
               "  noisefloor worker study.yaml --store 'postgresql://nf@dbhost/mystudy'",
               "noisefloor worker"};
  std::string study_path, store_url;
  WorkerOptions o;
  bool quiet = false, no_cache = false;
  app.add_option("study", study_path, "study file (YAML); see docs/study.md")->required();
  app.add_option("--store", store_url, "PostgreSQL store URL (default: the study's `store:`), e.g. postgresql://user@host/db");
  app.add_option("--threads", o.threads, "draws in flight in this process (default: the largest subject concurrency)")
      ->check(at_least(0));
  app.add_option("--batch", o.batch, "draws claimed at a time (default: 8 x threads)")->check(at_least(0));
  app.add_option("--lease-seconds", o.lease_s,
                 "lease of claimed draws, renewed every third of it while they run; a dead worker's draws are "
                 "claimable again this long after its last renewal")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--worker-id", o.worker_id,
                 "name of this worker in the leases (default: hostname:pid:random); one running process per id: a "
                 "worker started with an id releases the leases an earlier process of that id left");
  app.add_flag("--no-cache", no_cache, "do not look up the response cache");
  app.add_flag("--quiet", quiet, "no progress lines");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : static_cast<int>(ExitCode::kUsage);
  }
  auto study = load_study(study_path);
  if (!study.ok()) return fail("worker", study.status());
  for (const auto& w : study->warnings) std::fprintf(stderr, "noisefloor worker: warning: %s\n", w.c_str());
  const std::string url = store_url.empty() ? study->store : store_url;
  if (!Store::is_postgresql_url(url))
    return fail("worker", InvalidArgument(fmt::format(
                              "{}: a worker needs a shared PostgreSQL store (--store postgresql://... or `store: "
                              "postgresql://...` in the study), got '{}'; for one machine use `noisefloor run`",
                              study_path, url.empty() ? "(none)" : url)));
  auto store = Store::open(url);
  if (!store.ok()) return fail("worker", store.status());
  // Workers share the store through leases (a shared hold); a `run` or `judge` on it,
  // which does not lease, holds it alone (store/run_lock.h).
  auto run_lock = hold_run_lock(**store, "noisefloor worker", /*shared=*/true);
  if (!run_lock.ok()) return fail("worker", run_lock.status());
  o.use_cache = !no_cache;
  o.progress = !quiet;
  o.stop = &install_stop_handler();
  auto sum = run_worker(*study, **store, o);
  if (!sum.ok()) return fail("worker", sum.status());
  std::fprintf(stderr,
               "worker %s: ran %lld draws in %lld batches (ok %lld, parse_error %lld, api_error %lld, refused %lld) "
               "in %.1f s; %s\n",
               sum->worker_id.c_str(), static_cast<long long>(sum->executed), static_cast<long long>(sum->batches),
               static_cast<long long>(sum->ok), static_cast<long long>(sum->parse_error),
               static_cast<long long>(sum->api_error), static_cast<long long>(sum->refused), sum->seconds,
               !sum->interrupted ? fmt::format("all {} planned draws are done", sum->planned).c_str()
               : sum->breaker.empty() ? "interrupted: start it again to continue"
                                      : "stopped early (below): start it again to continue");
  if (sum->abandoned > 0)
    std::fprintf(stderr, "worker %s: %lld draw%s in flight abandoned at the stop (not stored; their leases were "
                 "released, so any worker takes them next)\n",
                 sum->worker_id.c_str(), static_cast<long long>(sum->abandoned), sum->abandoned == 1 ? "" : "s");
  if (!sum->breaker.empty()) {
    std::fprintf(stderr, "worker %s: stopped: %s; backend unavailable: start the worker again when the server is back\n",
                 sum->worker_id.c_str(), sum->breaker.c_str());
    return static_cast<int>(ExitCode::kBackendUnavailable);
  }
  return sum->interrupted ? 130 : 0;
}

}  // namespace nf::cli
