// `noisefloor worker`: one of any number of processes, on any number of machines, that
// share a study's PostgreSQL store (docs/store.md "PostgreSQL"). Each writes the plan once
// (idempotently), claims batches of planned draws under a lease, runs them through one
// prepared run_study (RunOptions::next_keys pulls the next claimed batch) and commits each
// draw together with marking its planned row done, until no planned draw remains.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "runner/runner.h"

namespace nf {

struct WorkerOptions {
  int threads = 0;           // draws in flight in this process; 0 = the largest subject concurrency
  int batch = 0;             // draws claimed at a time; 0 = 8 x threads
  double lease_s = 60.0;     // a claim expires this long after its last renewal (renewed every lease_s / 3
                             //   while the batch runs), so a dead worker's draws return to the pool
  bool use_cache = true;     // look up the response cache before calling a backend
  bool progress = true;      // a progress line on stderr (at most every 2 s)
  std::string worker_id;     // "" = hostname:pid:random
  const std::atomic<bool>* stop = nullptr;  // set by a signal handler to stop after the draws in flight
};

struct WorkerSummary {
  std::string worker_id;
  int64_t planned = 0;           // draws in the shared plan
  int64_t executed = 0;          // draws this worker ran and committed
  int64_t ok = 0, parse_error = 0, api_error = 0, refused = 0;
  int64_t batches = 0;           // claims that returned draws
  int64_t abandoned = 0;         // draws in flight cut at a stop (RunSummary::abandoned)
  bool interrupted = false;      // stopped by `stop` before the plan was done
  // Non-empty when run_study's circuit breaker stopped this worker (RunSummary::breaker);
  // the draws of its batch it did not run return to the pool when their leases expire.
  std::string breaker;
  double seconds = 0.0;
};

/// Runs draws of `study` from the shared plan in `store` until every planned draw is done.
/// The plan (every key of plan_draws) is inserted with Store::plan_draw_keys, which also
/// re-opens planned draws stored as api_error (retried, as `run` retries them on resume).
/// While other workers hold leases on the last open draws, waits (polling every
/// min(1 s, lease_s / 4)) until they finish or their leases expire. A draw committed by
/// another worker after this one's lease expired is not stored twice (AlreadyExists,
/// not an error). Errors: Unimplemented for a store without shared plans (SQLite); the
/// errors of run_study; the store's errors.
Result<WorkerSummary> run_worker(const Study& study, Store& store, const WorkerOptions& options);

}  // namespace nf
