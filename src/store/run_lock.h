// One process at a time calls the API for a store (issue 31; docs/store.md "Concurrency").
// Two `noisefloor run` (or `audit`, `judge`) processes on one store both read the same
// missing draws or votes at start and both paid for every call; the second commit was
// refused, so the store stayed honest but the API was billed twice. `run`, `audit` and
// `judge` hold the store's run lock; a second one is refused at once.
#pragma once

#include <memory>
#include <string>

#include "store/store.h"
#include "util/status.h"

namespace nf {

/// A held run lock (hold_run_lock): released when destroyed, or by the kernel / the
/// PostgreSQL server when the holding process dies (SIGKILL included). Destroy it before
/// the Store it came from.
class RunLock {
 public:
  virtual ~RunLock();
};

/// Takes the run lock of `store` for the calling process, so that two `run` / `audit` /
/// `judge` processes never both call the API for the same draws or votes. `holder` names
/// the command for the message another process gets (e.g. "noisefloor run"). `shared`:
/// any number of shared holders at once (PostgreSQL `worker`s, which divide the plan
/// through leases), but none while an exclusive one holds it and vice versa. Does not wait.
///  - SQLite: flock(2) on the sidecar file PATH-lock (created if absent, left in place,
///    emptied at release), never SQLite's own POSIX locks on PATH, which closing any other
///    descriptor of PATH in this process would drop (sqlite.org/howtocorrupt.html 2.2);
///    the exclusive holder writes "pid N on host H: HOLDER, since UTC-TIME" into it for
///    the message. flock locks belong to the open file description: a second Store on the
///    same path in one process is refused like another process.
///  - PostgreSQL: a session advisory lock (pg_try_advisory_lock[_shared](4711, hash of the
///    store's schema)) on the store's connection; the holder's application_name "HOLDER
///    pid N on HOST" names it.
/// Errors: FailedPrecondition "store PATH is in use by another noisefloor process (WHO):
/// ..." (exit 2) naming the other process when it can; DataLoss if the sidecar cannot be
/// created or locked; the server's errors (PostgreSQL).
Result<std::unique_ptr<RunLock>> hold_run_lock(Store& store, const std::string& holder, bool shared = false);

}  // namespace nf
