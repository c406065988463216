// Internal to stats/: runs resample bodies over a few threads (used by the bootstrap and
// the studentized cluster interval). Each resample draws from its own RNG stream, so the
// results do not depend on the thread count.
#pragma once

#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

namespace nf::stats {

/// Runs body(r) for r in [0, resamples) over min(threads, resamples) threads (at least 1),
/// each taking a contiguous block of r. `body` must be safe to call concurrently for
/// distinct r.
template <typename Body>
void parallel_for(int resamples, int threads, const Body& body) {
  const int t = std::max(1, std::min(threads, resamples));
  if (t == 1) {
    for (int r = 0; r < resamples; ++r) body(r);
    return;
  }
  std::vector<std::thread> pool;
  pool.reserve(static_cast<size_t>(t));
  for (int w = 0; w < t; ++w) {
    const int begin = static_cast<int>(static_cast<int64_t>(resamples) * w / t);
    const int end = static_cast<int>(static_cast<int64_t>(resamples) * (w + 1) / t);
    pool.emplace_back([begin, end, &body] {
      for (int r = begin; r < end; ++r) body(r);
    });
  }
  for (auto& th : pool) th.join();
}

}  // namespace nf::stats
