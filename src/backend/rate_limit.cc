#include "backend/rate_limit.h"

#include <algorithm>

namespace nf {

TokenBucket::TokenBucket(double rate_per_s, double capacity, Clock& clock)
    : rate_(rate_per_s), capacity_(std::max(1.0, capacity)), level_(std::max(1.0, capacity)), last_(clock.now_s()),
      clock_(clock) {}

void TokenBucket::refill_locked() {
  const double now = clock_.now_s();
  level_ = std::min(capacity_, level_ + (now - last_) * rate_);
  last_ = now;
}

double TokenBucket::wait_s(double n) {
  if (unlimited()) return 0.0;
  std::lock_guard<std::mutex> lock(mu_);
  refill_locked();
  const double need = std::min(n, capacity_) - level_;
  return need <= 0 ? 0.0 : need / rate_;
}

void TokenBucket::take(double n) {
  if (unlimited()) return;
  std::lock_guard<std::mutex> lock(mu_);
  refill_locked();
  level_ -= n;
}

void TokenBucket::acquire(double n) {
  if (unlimited()) return;
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      refill_locked();
      const double want = std::min(n, capacity_);
      if (level_ >= want) {
        level_ -= n;
        return;
      }
    }
    clock_.sleep_s(std::max(1e-3, wait_s(n)));
  }
}

RateLimiter::RateLimiter(double rpm, double tpm, Clock& clock)
    : clock_(clock),
      // Burst of one second's worth (at least 1): smooth pacing rather than a minute's burst.
      requests_(rpm / 60.0, std::max(1.0, rpm / 60.0), clock),
      tokens_(tpm / 60.0, std::max(1.0, tpm / 60.0), clock) {}

void RateLimiter::before_request() {
  for (;;) {
    double pause;
    {
      std::lock_guard<std::mutex> lock(mu_);
      pause = paused_until_ - clock_.now_s();
    }
    if (pause > 0) {
      clock_.sleep_s(pause);
      continue;
    }
    const double debt = tokens_.wait_s(0.0);
    if (debt > 0) {
      clock_.sleep_s(debt);
      continue;
    }
    break;
  }
  requests_.acquire(1.0);
}

void RateLimiter::after_reply(double tokens) { tokens_.take(tokens); }

void RateLimiter::pause_for(double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  paused_until_ = std::max(paused_until_, clock_.now_s() + seconds);
}

}  // namespace nf
