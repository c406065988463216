// Group commit for the run's hot path (Store::put_draw_grouped; issue 14 item 5).
//
// Leader/follower, no timer: a thread with a draw queues it; if no commit is under way it
// becomes the leader, takes everything queued, writes it in one transaction, marks each
// queued draw done with its own status and wakes the others. Draws that arrive while a
// commit runs form the next group, so the group size follows the load (one draw per
// transaction for a single thread; many at high concurrency) and no draw waits for a
// timer. Every caller returns only after its draw's transaction committed.
#include <condition_variable>
#include <mutex>
#include <utility>
#include <vector>

#include "store/group_commit.h"

namespace nf {

Status SqliteStore::put_draw_grouped(const Draw& draw, const std::vector<CacheEntry>& cache) {
  {
    std::lock_guard lock(mu_);
    if (!group_) group_ = std::make_unique<GroupCommit>();
  }
  GroupCommit& g = *group_;
  GroupCommit::Pending me{&draw, &cache, Status::Ok()};
  std::unique_lock lock(g.m);
  g.queue.push_back(&me);
  while (!me.done) {
    if (g.committing) {
      g.cv.wait(lock);
      continue;
    }
    g.committing = true;
    std::vector<GroupCommit::Pending*> batch;
    batch.swap(g.queue);
    lock.unlock();
    std::vector<std::pair<const Draw*, const std::vector<CacheEntry>*>> group;
    group.reserve(batch.size());
    for (auto* p : batch) group.emplace_back(p->draw, p->cache);
    std::vector<Status> statuses;
    Status txn;
    {
      std::lock_guard store_lock(mu_);
      txn = put_draw_group_locked(group, &statuses);
    }
    lock.lock();
    for (size_t i = 0; i < batch.size(); ++i) {
      batch[i]->status = txn.ok() ? statuses[i] : txn;
      batch[i]->done = true;
    }
    g.committing = false;
    g.cv.notify_all();
  }
  return me.status;
}

Status SqliteStore::put_draw_group(const std::vector<std::pair<const Draw*, const std::vector<CacheEntry>*>>& group,
                                   std::vector<Status>* statuses) {
  statuses->clear();
  if (group.empty()) return Status::Ok();
  std::lock_guard store_lock(mu_);
  return put_draw_group_locked(group, statuses);
}

}  // namespace nf
