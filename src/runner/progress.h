// The progress line of `run` and `judge` (stderr): done/planned, rate, ETA and the error
// counts, redrawn in place every 0.5 s on a terminal, one line every 5 s otherwise.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>

#include "util/clock.h"

namespace nf {

/// What the progress line shows at one moment.
struct ProgressCounts {
  int64_t executed = 0;     // committed by this run
  int64_t parse_error = 0;  // of those, parse errors
  int64_t api_error = 0;    // of those, API errors
};

/// Prints "<label>: <done>/<planned> <unit> (<pct>%) | <rate> <unit>/s | ETA m:ss |
/// parse_error N | api_error N" from a background thread (below one per second the rate is
/// written as seconds per unit, "20.5 s/draw"), where done = already_done +
/// executed and the rate and ETA are over this run's executed count (to_run left).
/// `counts` is called from that thread (it must be thread-safe); the clock gives elapsed
/// seconds (tests pass a fake one). Stops and prints a last line on stop() or destruction.
class ProgressLine {
 public:
  ProgressLine(std::string label, std::string unit, int64_t planned, int64_t already_done, int64_t to_run,
               Clock& clock, std::function<ProgressCounts()> counts);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  /// Prints the final line and joins the thread (idempotent).
  void stop();

 private:
  void print(double now);

  std::string label_, unit_;
  int64_t planned_, already_done_, to_run_;
  Clock& clock_;
  std::function<ProgressCounts()> counts_;
  double t0_;
  bool tty_;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

}  // namespace nf
