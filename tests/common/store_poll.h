// Waits, from a test, until another process has committed some draws to a store.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <thread>

#include "store/store.h"

namespace nf::testing {

/// Polls `store_path` every 5 ms (at most `max_polls` times) until it holds at least
/// `at_least` draws; returns the last count seen (0 if the store never appeared).
/// Opens the store read-only: a read-write open migrates, and migrating a store that the
/// other process is still creating made one of the two fail at once with "database is
/// locked" (both held a shared lock and wanted to write; SQLite does not wait there).
inline int64_t wait_for_draws(const std::string& store_path, int64_t at_least, int max_polls = 4000) {
  int64_t seen = 0;
  for (int i = 0; i < max_polls && seen < at_least; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (!std::filesystem::exists(store_path)) continue;
    auto s = Store::open_read_only(store_path);
    if (s.ok()) {
      auto n = (*s)->draw_count();
      if (n.ok()) seen = *n;
    }
  }
  return seen;
}

}  // namespace nf::testing
