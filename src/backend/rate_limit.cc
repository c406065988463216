#include "backend/rate_limit.h"

#include <algorithm>
#include <cmath>

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

RateLimiter::RateLimiter(double rpm, double tpm, Clock& clock, AdaptiveOptions adaptive)
    : clock_(clock),
      // Burst of one second's worth (at least 1): smooth pacing rather than a minute's burst.
      requests_(rpm / 60.0, std::max(1.0, rpm / 60.0), clock),
      tokens_(tpm / 60.0, std::max(1.0, tpm / 60.0), clock),
      adaptive_(adaptive) {
  adaptive_.min_in_flight = std::max(1.0, adaptive_.min_in_flight);
  adaptive_.max_in_flight = std::max(adaptive_.min_in_flight, adaptive_.max_in_flight);
  limit_ = adaptive_.max_in_flight;
  threshold_ = adaptive_.max_in_flight;
}

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

bool RateLimiter::slot_free_locked() const {
  return !adaptive_.enabled || in_flight_ < static_cast<int>(limit_);
}

RateLimiter::Permit RateLimiter::admit() {
  for (;;) {
    {
      // A free slot first, so that a worker woken by release() still honours a pause
      // set meanwhile (checked below).
      std::unique_lock<std::mutex> lock(mu_);
      slot_cv_.wait(lock, [this] { return slot_free_locked(); });
      ++in_flight_;
    }
    before_request();
    std::lock_guard<std::mutex> lock(mu_);
    if (paused_until_ > clock_.now_s() || (adaptive_.enabled && in_flight_ > static_cast<int>(limit_))) {
      // A 429 arrived while this worker waited on the budgets: start over.
      --in_flight_;
      slot_cv_.notify_one();
      continue;
    }
    return Permit{++admitted_};
  }
}

bool RateLimiter::try_admit(Permit& permit) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (paused_until_ > clock_.now_s() || !slot_free_locked()) return false;
  }
  if (tokens_.wait_s(0.0) > 0 || requests_.wait_s(1.0) > 0) return false;
  requests_.take(1.0);
  std::lock_guard<std::mutex> lock(mu_);
  ++in_flight_;
  permit.seq = ++admitted_;
  return true;
}

void RateLimiter::release(const Permit& permit, Outcome outcome, double pause_s) {
  if (permit.seq == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (adaptive_.enabled && pause_s > 0) paused_until_ = std::max(paused_until_, clock_.now_s() + pause_s);
  const bool throttled = outcome == Outcome::kThrottled || outcome == Outcome::kThrottledPause;
  if (throttled) ++throttled_;
  if (adaptive_.enabled) {
    if (throttled && permit.seq > cut_at_seq_) {
      // Multiplicative decrease from the requests actually in flight (this one included).
      const double flight = std::min(limit_, static_cast<double>(in_flight_));
      threshold_ = std::max(adaptive_.min_in_flight, std::floor(flight / 2.0));
      limit_ = outcome == Outcome::kThrottledPause ? adaptive_.min_in_flight : threshold_;
      cut_at_seq_ = admitted_;
    } else if (outcome == Outcome::kSuccess && permit.seq > cut_at_seq_) {
      // (A success admitted before the last cut says nothing about the new limit.)
      const double step = limit_ < threshold_ ? 1.0 : adaptive_.increase / limit_;
      limit_ = std::min(adaptive_.max_in_flight, limit_ + step);
    }
  }
  --in_flight_;
  slot_cv_.notify_all();
}

double RateLimiter::in_flight_limit() const {
  std::lock_guard<std::mutex> lock(mu_);
  return limit_;
}

int RateLimiter::in_flight() const {
  std::lock_guard<std::mutex> lock(mu_);
  return in_flight_;
}

int64_t RateLimiter::throttled() const {
  std::lock_guard<std::mutex> lock(mu_);
  return throttled_;
}

double RateLimiter::paused_for_s() const {
  std::lock_guard<std::mutex> lock(mu_);
  return std::max(0.0, paused_until_ - clock_.now_s());
}

void RateLimiter::after_reply(double tokens) { tokens_.take(tokens); }

void RateLimiter::pause_for(double seconds) {
  if (!adaptive_.enabled) return;
  std::lock_guard<std::mutex> lock(mu_);
  paused_until_ = std::max(paused_until_, clock_.now_s() + seconds);
}

}  // namespace nf
