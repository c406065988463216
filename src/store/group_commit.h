// Internal to src/store: the queue behind Store::put_draw_grouped (group_commit.cc).
#pragma once

#include <condition_variable>
#include <mutex>
#include <vector>

#include "store/sqlite_store.h"

namespace nf {

struct SqliteStore::GroupCommit {
  struct Pending {
    const Draw* draw;
    const std::vector<CacheEntry>* cache;
    Status status;
    bool done = false;
  };
  std::mutex m;
  std::condition_variable cv;
  std::vector<Pending*> queue;
  bool committing = false;
};

}  // namespace nf
