// The clock behind an interface, so retry/back-off and progress/ETA logic is testable
// with a fake clock (leveldb Env, abseil Clock).
#pragma once

#include <chrono>
#include <cstdint>

namespace nf {

class Clock {
 public:
  virtual ~Clock() = default;
  /// Monotonic time in seconds since an arbitrary epoch.
  virtual double now_s() const = 0;
  /// Wall-clock Unix time in seconds (for timestamps in the store).
  virtual int64_t unix_time_s() const = 0;
  virtual void sleep_s(double seconds) = 0;
};

/// The process's real clock (std::chrono::steady_clock / system_clock).
Clock& real_clock();

}  // namespace nf
