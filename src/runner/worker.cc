#include "runner/worker.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "util/clock.h"

namespace nf {

namespace {

std::string default_worker_id() {
  char host[256] = {0};
  if (gethostname(host, sizeof(host) - 1) != 0) std::snprintf(host, sizeof(host), "unknown-host");
  const auto ns = std::chrono::steady_clock::now().time_since_epoch().count();
  return fmt::format("{}:{}:{:04x}", host, static_cast<long>(getpid()), static_cast<unsigned>(ns) & 0xffffu);
}

/// Renews `worker`'s leases every `period_s` until destroyed.
class LeaseKeeper {
 public:
  LeaseKeeper(Store& store, std::string worker, double lease_s)
      : store_(store), worker_(std::move(worker)), lease_s_(lease_s), thread_([this] { loop(); }) {}
  ~LeaseKeeper() {
    {
      std::lock_guard lock(m_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  void loop() {
    std::unique_lock lock(m_);
    const auto period = std::chrono::duration<double>(lease_s_ / 3.0);
    while (!cv_.wait_for(lock, period, [this] { return done_; })) {
      Status st = store_.renew_leases(worker_, lease_s_);
      if (!st.ok()) std::fprintf(stderr, "worker %s: renewing leases failed: %s\n", worker_.c_str(), st.message().c_str());
    }
  }
  Store& store_;
  std::string worker_;
  double lease_s_;
  std::mutex m_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace

Result<WorkerSummary> run_worker(const Study& study, Store& store, const WorkerOptions& options) {
  if (options.lease_s <= 0) return InvalidArgument(fmt::format("worker: lease must be > 0 s, got {}", options.lease_s));
  Clock& clock = real_clock();
  const double t0 = clock.now_s();
  WorkerSummary sum;
  sum.worker_id = options.worker_id.empty() ? default_worker_id() : options.worker_id;
  if (study.subjects.empty() || study.dataset.path.empty())
    return FailedPrecondition(fmt::format("{}: the study has no subjects or no dataset: there are no draws to run",
                                          study.source_path));
  {
    NF_ASSIGN_OR_RETURN(auto task, make_task(study));
    const auto configs = expand_configs(study.axes);
    const auto plan = plan_draws(study, task->items(), configs);
    std::vector<DrawKey> keys;
    keys.reserve(plan.size());
    for (const auto& p : plan) keys.push_back(p.key);
    NF_RETURN_IF_ERROR(store.plan_draw_keys(keys));
  }
  // A worker id names one running process. Leases still held under this id belong to an
  // earlier process of the same id (SIGKILLed, or its machine lost), which will never
  // finish or renew them; this worker would otherwise renew them itself (same owner) and
  // then wait for them forever (tester s11 finding 8). End them so they return to the pool.
  if (Status released = store.renew_leases(sum.worker_id, 0); !released.ok())
    return released.with_context(fmt::format("worker {}: releasing the leases an earlier process of this worker id "
                                             "left", sum.worker_id));
  int threads = options.threads;
  if (threads <= 0) {
    threads = 1;
    for (const auto& s : study.subjects) threads = std::max(threads, s.concurrency);
  }
  const int batch = options.batch > 0 ? options.batch : 8 * threads;
  double last_print = -1e9, last_wait_print = -1e9;
  // One run_study for the whole worker: the dataset, task, backends and plan are prepared
  // once, and run_study pulls claimed batches through next_keys whenever its draws are
  // handed out (the other threads keep running meanwhile).
  RunOptions ro;
  ro.use_cache = options.use_cache;
  ro.progress = false;
  ro.threads = threads;
  ro.stop = options.stop;
  ro.record_study = true;
  // The run's committing thread writes whatever draws finished since its last commit in
  // one transaction, marking their planned rows done (group commit; a draw is counted
  // only once committed, a SIGKILL loses only uncommitted draws, whose leases expire).
  ro.commit_group = [&store](const std::vector<std::pair<const Draw*, const std::vector<Store::CacheEntry>*>>& group,
                             std::vector<Status>* statuses) { return store.put_claimed_draw_group(group, statuses); };
  bool plan_done = false;
  ro.next_keys = [&]() -> Result<std::vector<DrawKey>> {
    for (;;) {
      if (options.stop && options.stop->load()) return std::vector<DrawKey>();
      NF_ASSIGN_OR_RETURN(std::vector<DrawKey> claimed, store.claim_draws(sum.worker_id, batch, options.lease_s));
      if (!claimed.empty()) {
        ++sum.batches;
        if (options.progress && clock.now_s() - last_print >= 2.0) {
          last_print = clock.now_s();
          auto counts = store.plan_counts();
          if (counts.ok())
            std::fprintf(stderr, "worker %s: %lld of %lld planned draws done\n", sum.worker_id.c_str(),
                         static_cast<long long>(counts->done), static_cast<long long>(counts->planned));
        }
        return claimed;
      }
      NF_ASSIGN_OR_RETURN(Store::PlanCounts counts, store.plan_counts());
      sum.planned = counts.planned;
      if (counts.done >= counts.planned) {
        plan_done = true;
        return claimed;  // empty: every planned draw is done
      }
      // Open draws are leased by other workers: wait for them to finish or expire, and say so.
      if (options.progress && clock.now_s() - last_wait_print >= 10.0) {
        last_wait_print = clock.now_s();
        std::fprintf(stderr,
                     "worker %s: %lld of %lld planned draws done; waiting for %lld leased by other workers (a lease "
                     "ends %.0f s after its worker last renewed it)\n",
                     sum.worker_id.c_str(), static_cast<long long>(counts.done), static_cast<long long>(counts.planned),
                     static_cast<long long>(counts.leased), options.lease_s);
      }
      std::this_thread::sleep_for(std::chrono::duration<double>(std::min(1.0, options.lease_s / 4.0)));
    }
  };
  Result<RunSummary> rs = [&] {
    LeaseKeeper keeper(store, sum.worker_id, options.lease_s);
    return run_study(study, store, ro);
  }();
  // Every draw that finished is committed now; the leases still held are of draws this
  // worker claimed but never finished (it stopped: a down server, SIGINT/SIGTERM, an
  // error). End them now (a lease renewed to 0 s) so that a worker started next takes
  // them at once instead of waiting out the lease (tester finding, 2026-12-01).
  if (Status released = store.renew_leases(sum.worker_id, 0); !released.ok())
    std::fprintf(stderr, "worker %s: releasing its unfinished leases failed (they return to the pool when they expire): "
                 "%s\n", sum.worker_id.c_str(), released.message().c_str());
  if (!rs.ok()) return rs.status();
  sum.executed = rs->executed;
  sum.ok = rs->ok;
  sum.parse_error = rs->parse_error;
  sum.api_error = rs->api_error;
  sum.refused = rs->refused;
  sum.abandoned = rs->abandoned;
  sum.interrupted = !plan_done;
  if (!rs->breaker.empty()) {  // the server is down: claiming stopped (exit 3 in the CLI)
    sum.breaker = rs->breaker;
    sum.interrupted = true;
  }
  sum.seconds = clock.now_s() - t0;
  return sum;
}

}  // namespace nf
