// Requests-per-minute and tokens-per-minute budgets per endpoint (issue 6 item 2): token
// buckets over a Clock, shared by every worker thread that calls the endpoint, with an
// adaptive pause when the server answers 429.
#pragma once

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

/// The budgets of one endpoint (study keys subjects[].rpm and subjects[].tpm; 0 = no
/// limit). Tokens are charged after each reply as prompt + completion tokens reported by
/// the server (or the request's max_tokens when it reports none); a request waits while
/// the token budget is in debt.
class RateLimiter {
 public:
  RateLimiter(double rpm, double tpm, Clock& clock);
  /// Waits (on the clock) for one request slot, any 429 pause, and a non-negative token level.
  void before_request();
  /// Charges `tokens` against the tokens-per-minute budget.
  void after_reply(double tokens);
  /// The server answered 429: nobody on this endpoint sends before `seconds` from now
  /// (adaptive back-off shared by every worker).
  void pause_for(double seconds);

 private:
  Clock& clock_;
  TokenBucket requests_, tokens_;
  std::mutex mu_;
  double paused_until_ = 0.0;
};

}  // namespace nf
