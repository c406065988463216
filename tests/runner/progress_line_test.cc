// The progress line's rate (tester finding 22.3, session 9): a slow run printed "0.0 draws/s"
// for 20 s per draw; below one per second it prints seconds per draw.
#include "runner/progress.h"

#include <atomic>

#include <gtest/gtest.h>

namespace nf {
namespace {

class FakeClock final : public Clock {
 public:
  double now_s() const override { return now.load(); }
  int64_t unix_time_s() const override { return 1'796'040'000; }
  void sleep_s(double s) override { now = now.load() + s; }
  std::atomic<double> now{100.0};
};

std::string final_line(double elapsed_s, int64_t executed) {
  FakeClock clock;
  std::atomic<int64_t> done{0};
  ::testing::internal::CaptureStderr();
  {
    ProgressLine p("run", "draws", 20, 0, 20, clock, [&] { return ProgressCounts{done.load(), 0, 0}; });
    clock.now = 100.0 + elapsed_s;
    done = executed;
    p.stop();  // prints once more at the clock's time
  }
  const std::string err = ::testing::internal::GetCapturedStderr();
  const size_t start = err.rfind("run: ");
  return start == std::string::npos ? err : err.substr(start);
}

TEST(ProgressLine, SlowRatePrintsSecondsPerDraw) {
  // 2 draws in 41 s: 20.5 s per draw (0.049 draws/s, which printed as "0.0 draws/s").
  const std::string line = final_line(41.0, 2);
  EXPECT_NE(line.find("2/20 draws"), std::string::npos) << line;
  EXPECT_NE(line.find("20.5 s/draw"), std::string::npos) << line;
  EXPECT_EQ(line.find("0.0 draws/s"), std::string::npos) << line;
}

TEST(ProgressLine, FastRatePrintsDrawsPerSecond) {
  const std::string line = final_line(2.0, 19);  // 9.5 draws/s
  EXPECT_NE(line.find("9.5 draws/s"), std::string::npos) << line;
}

}  // namespace
}  // namespace nf
