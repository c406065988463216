// Requests-per-minute and tokens-per-minute budgets per endpoint (issue 6 item 2): token
// buckets over a Clock, shared by every worker thread that calls the endpoint, with an
// adaptive pause when the server answers 429.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>

#include "util/clock.h"

namespace nf {

/// A token bucket holding at most `capacity` tokens, refilled at `rate_per_s`. Starts full.
/// take() may drive the level negative (a debt, e.g. tokens charged after a reply), which
/// delays later takers. Thread-safe. Source: the classic token bucket (Turner 1986).
class TokenBucket {
 public:
  /// rate_per_s <= 0 makes an unlimited bucket (take never waits).
  TokenBucket(double rate_per_s, double capacity, Clock& clock);
  /// Seconds until `n` tokens would be available (0 if now), without taking them.
  double wait_s(double n);
  /// Removes `n` tokens now (the level may go negative).
  void take(double n);
  /// Blocks on the clock until `n` tokens are available, then takes them.
  void acquire(double n);
  bool unlimited() const { return rate_ <= 0; }

 private:
  void refill_locked();
  double rate_, capacity_, level_, last_;
  Clock& clock_;
  std::mutex mu_;
};

/// Adaptive back-off after 429s (issue 6 item 2), shared by every worker of an endpoint
/// whether or not it has budgets. An AIMD limit on the requests in flight (the congestion
/// control of TCP, Jacobson 1988 / RFC 5681 §3.1): it starts at `max_in_flight`; a 429 sets
/// the threshold to half the requests then in flight (at least `min_in_flight`) and cuts
/// the limit to it, at most once per window (429s to requests admitted before the last cut
/// are the same congestion event and do not cut again). A 429 with a Retry-After is the
/// analogue of TCP's retransmission timeout: the limit restarts from `min_in_flight`, so
/// that the requests sent when the pause ends do not all run into the server's throttle
/// again. Each success adds 1 while the limit is below the threshold (slow start: doubling
/// per round trip) and increase / limit above it (about +increase per round trip). The
/// Retry-After also sets a "not before" time that blocks every worker (pause_for).
struct AdaptiveOptions {
  bool enabled = true;         // false = 429s change nothing (no cut, no shared pause)
  double max_in_flight = 256;  // ceiling and starting limit (the subject's concurrency)
  double min_in_flight = 1;    // floor of the limit (>= 1)
  double increase = 1.0;       // additive increase per window of successes
};

/// The budgets of one endpoint (study keys subjects[].rpm and subjects[].tpm; 0 = no
/// limit) and its adaptive back-off after 429s (AdaptiveOptions). Tokens are charged after
/// each reply as prompt + completion tokens reported by the server (or the request's
/// max_tokens when it reports none); a request waits while the token budget is in debt.
/// Thread-safe; every wait is on the Clock except the wait for a free in-flight slot,
/// which only another worker's release() can end (a condition variable).
class RateLimiter {
 public:
  RateLimiter(double rpm, double tpm, Clock& clock, AdaptiveOptions adaptive = {});
  /// Waits (on the clock) for one request slot, any 429 pause, and a non-negative token level.
  /// Takes no in-flight slot (see admit()).
  void before_request();
  /// Charges `tokens` against the tokens-per-minute budget.
  void after_reply(double tokens);
  /// The server answered 429 with a Retry-After of `seconds`: nobody on this endpoint
  /// sends before `seconds` from now (a "not before" time shared by every worker; a
  /// shorter pause never shortens a longer one).
  void pause_for(double seconds);

  /// One admitted attempt: pass it back to release().
  struct Permit {
    uint64_t seq = 0;   // admission number (1-based); 0 = not admitted
  };
  /// What an attempt ended with, as the adaptive limit sees it.
  /// kThrottled = a 429 without a usable Retry-After; kThrottledPause = a 429 whose
  /// Retry-After pauses the endpoint.
  enum class Outcome { kSuccess, kThrottled, kThrottledPause, kOther };
  /// before_request() plus a free slot under the adaptive in-flight limit (when enabled):
  /// blocks until in_flight() < floor(in_flight_limit()).
  Permit admit();
  /// As admit() but never waits: false (nothing taken) when the shared pause, token debt,
  /// request budget or in-flight limit would make admit() wait.
  bool try_admit(Permit& permit);
  /// Ends an admitted attempt: frees its slot; kThrottled halves the limit and
  /// kThrottledPause restarts it from min_in_flight (once per window); kSuccess raises it
  /// (slow start below the threshold, additively above); kOther (5xx, transport error...)
  /// leaves it. `pause_s` > 0 also pauses the endpoint for that long (as pause_for), in
  /// the same step, so that no worker slips into the freed slot before the pause is set.
  void release(const Permit& permit, Outcome outcome, double pause_s = 0.0);

  /// The current adaptive limit on requests in flight (max_in_flight when disabled).
  double in_flight_limit() const;
  /// Attempts admitted and not yet released.
  int in_flight() const;
  /// 429s reported through release() since construction.
  int64_t throttled() const;
  /// Seconds until the shared "not before" time (0 when not paused).
  double paused_for_s() const;
  bool adaptive() const { return adaptive_.enabled; }

 private:
  bool slot_free_locked() const;
  Clock& clock_;
  TokenBucket requests_, tokens_;
  AdaptiveOptions adaptive_;
  mutable std::mutex mu_;
  std::condition_variable slot_cv_;
  double paused_until_ = 0.0;
  double limit_;
  double threshold_;         // slow-start threshold (max_in_flight until the first cut)
  int in_flight_ = 0;
  uint64_t admitted_ = 0;
  uint64_t cut_at_seq_ = 0;  // admissions up to this number predate the last cut
  int64_t throttled_ = 0;
};

}  // namespace nf
