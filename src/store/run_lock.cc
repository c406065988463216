// hold_run_lock (store/run_lock.h; docs/store.md "Concurrency"). The PostgreSQL lock is
// PgStore::hold_run_lock (pg_store.cc); the SQLite one is here:
// flock(2) on the sidecar file PATH-lock. A separate file, so SQLite's own POSIX (fcntl)
// locks on PATH and its -wal/-shm files are never touched: a process that opened and
// closed a descriptor of PATH itself would drop every fcntl lock SQLite holds on it
// (POSIX close semantics; sqlite.org/howtocorrupt.html 2.2), and flock locks belong to
// the open file description, so a second open of the sidecar in the same process is
// refused like another process. The kernel releases the lock when the holder dies.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <string>

#include <fmt/format.h>

#include "store/pg_store.h"
#include "store/run_lock.h"
#include "store/sqlite_store.h"

namespace nf {

RunLock::~RunLock() = default;

namespace {

class FlockRunLock final : public RunLock {
 public:
  explicit FlockRunLock(int fd) : fd_(fd) {}
  ~FlockRunLock() override {
    // Empty the note first: a stale note must not name a process that let go.
    if (ftruncate(fd_, 0) != 0) {
      // Nothing to do: the lock itself goes with the descriptor.
    }
    close(fd_);  // drops the flock (the only descriptor of this open file description)
  }

 private:
  int fd_;
};

std::string host_name() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof buf - 1) != 0) return "?";
  return buf;
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// The holder's note ("pid 123 on host h: noisefloor run, since ...") or "" if none yet.
std::string read_note(int fd) {
  std::string text;
  char buf[512];
  ssize_t n = pread(fd, buf, sizeof buf, 0);
  if (n > 0) text.assign(buf, static_cast<size_t>(n));
  while (!text.empty() && (text.back() == '\n' || text.back() == '\0')) text.pop_back();
  return text;
}

Result<std::unique_ptr<RunLock>> hold_sqlite_run_lock(const Store& store, const std::string& holder, bool shared) {
  const std::string& path = store.path();
  const std::string lock_path = path + "-lock";
  const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    return DataLoss(fmt::format("store {}: cannot open its lock file {}: {} (run, audit and judge take it so that "
                                "two processes never call the API for the same draws)",
                                path, lock_path, std::strerror(errno)));
  if (flock(fd, (shared ? LOCK_SH : LOCK_EX) | LOCK_NB) != 0) {
    const int err = errno;
    const std::string note = err == EWOULDBLOCK ? read_note(fd) : "";
    close(fd);
    if (err != EWOULDBLOCK)
      return DataLoss(fmt::format("store {}: cannot lock {}: {}", path, lock_path, std::strerror(err)));
    return FailedPrecondition(fmt::format(
        "store {} is in use by another noisefloor process ({}): two processes on one store would both call the "
        "API for the same missing draws or votes. Wait for it to finish (or stop it: Ctrl-C / kill PID; a "
        "killed process holds no lock), then run this command again; it resumes where the other one stopped",
        path, note.empty() ? "its pid is not written yet; lock file " + lock_path : note));
  }
  if (!shared) {  // the note of the exclusive holder (a shared one leaves the file alone)
    const std::string note = fmt::format("pid {} on host {}: {}, since {}\n", getpid(), host_name(), holder, utc_now());
    if (ftruncate(fd, 0) != 0 || pwrite(fd, note.data(), note.size(), 0) != static_cast<ssize_t>(note.size())) {
      // The lock holds without the note; the other process's message then says so.
    }
  }
  return std::unique_ptr<RunLock>(std::make_unique<FlockRunLock>(fd));
}

}  // namespace

Result<std::unique_ptr<RunLock>> hold_run_lock(Store& store, const std::string& holder, bool shared) {
  if (auto* pg = dynamic_cast<PgStore*>(&store)) return pg->hold_run_lock(holder, shared);
  if (dynamic_cast<SqliteStore*>(&store) != nullptr) return hold_sqlite_run_lock(store, holder, shared);
  return Unimplemented(fmt::format("store {}: the {} has no run lock", store.path(), store.kind()));
}

}  // namespace nf
