#include "util/clock.h"

#include <thread>

namespace nf {
namespace {
class RealClock final : public Clock {
 public:
  double now_s() const override {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  }
  int64_t unix_time_s() const override {
    return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
  void sleep_s(double seconds) override {
    if (seconds > 0) std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  }
};
}  // namespace

Clock& real_clock() {
  static RealClock clock;
  return clock;
}

}  // namespace nf
