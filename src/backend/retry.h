// The retry policy of the HTTP backends (issue 6 item 3; DESIGN.md "Backends"): which
// failures are retried, how long to wait (exponential back-off with jitter, or the
// server's Retry-After), and when to give up. Pure logic over a Clock and a seeded Rng,
// so it is unit-tested against a fake clock with no real sleeping.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "util/clock.h"
#include "util/rng.h"

namespace nf {

/// Retry settings of one endpoint (study keys subjects[].max_retries and
/// subjects[].retry_after_cap_s; docs/backends.md).
struct RetryPolicy {
  int max_retries = 4;             // extra attempts after the first (>= 0)
  double base_delay_s = 0.5;       // back-off before retry k (k = 1, 2, ...) is
  double max_delay_s = 30.0;       //   min(max_delay_s, base_delay_s * 2^(k-1)) * U(0.5, 1]
  double retry_after_cap_s = 120;  // a Retry-After longer than this gives up (api_error)
};

/// What one attempt ended with, as the retry policy needs to know it.
struct AttemptResult {
  bool transport_error = false;   // connect failure, reset, timeout (curl error)
  long http = 0;                  // HTTP status (0 on transport error)
  bool malformed_body = false;    // 2xx whose body is not a well-formed reply (cut-off JSON)
  bool no_retry = false;          // a failure not worth retrying (a silent endpoint, http.h
                                  //   EndpointHealth): kGiveUp whatever attempts are left
  std::string retry_after;        // the Retry-After header value ("" = absent)
  std::string date;               // the Date header value ("" = absent)
};

/// True for the HTTP statuses that are retried: 408, 409, 429 and every 5xx. Every other
/// 4xx (400, 401, 403, 404, 422, ...) is final.
bool is_retryable_http(long http);

/// Seconds to wait according to a Retry-After value: delta-seconds ("30" -> 30) or an
/// HTTP-date (RFC 9110 §10.2.3), measured from the response's Date header when it has one
/// (so server/client clock skew cancels) and from `now_unix_s` otherwise; a date in the
/// past gives 0. nullopt when the value is neither (e.g. "soon"): the caller falls back to
/// the back-off. Dates are parsed with libcurl's curl_getdate (RFC 822/850/asctime forms).
std::optional<double> parse_retry_after(const std::string& value, const std::string& date_header,
                                        int64_t now_unix_s);

/// The back-off before retry `retry` (1-based): min(max_delay_s, base_delay_s *
/// 2^(retry-1)) scaled by a jitter factor 0.5 + 0.5 * u, u = `uniform01` in [0, 1).
double backoff_delay_s(const RetryPolicy& policy, int retry, double uniform01);

/// The decision after an attempt.
struct RetryDecision {
  enum class Action { kDone, kRetry, kGiveUp };
  Action action = Action::kDone;
  double wait_s = 0.0;   // kRetry: seconds to wait before the next attempt
  std::string reason;    // kGiveUp: why ("Retry-After 3600 s exceeds the cap of 120 s", ...)
};

/// Decides what follows attempt number `attempt` (1-based) that ended with `r`:
///   success (2xx, well-formed)                     -> kDone
///   final failure (4xx other than 408/409/429)     -> kDone (the caller reports it)
///   retryable but r.no_retry                       -> kGiveUp
///   retryable, attempts exhausted (attempt > max_retries) -> kGiveUp
///   retryable with a parseable Retry-After > cap   -> kGiveUp (never sleeps for an hour)
///   retryable with a parseable Retry-After         -> kRetry after exactly that many seconds
///   retryable otherwise (incl. unparseable Retry-After) -> kRetry after backoff_delay_s
/// Retryable = transport error, retryable HTTP status, or a malformed 2xx body.
/// `uniform01` is the jitter draw for this decision. Source: issue 6 item 3; RFC 9110 §10.2.3.
RetryDecision decide_retry(const RetryPolicy& policy, int attempt, const AttemptResult& r, int64_t now_unix_s,
                           double uniform01);

/// Runs `attempt_fn` (called with the 1-based attempt number) until decide_retry says done
/// or give up, sleeping on `clock` between attempts; jitter comes from `rng`. Returns the
/// last attempt's decision (kDone or kGiveUp) and sets *attempts to the number of attempts
/// made. `on_wait`, if set, is called with each wait (seconds) before sleeping (for
/// adaptive rate limiting after 429s).
RetryDecision run_with_retries(const RetryPolicy& policy, Clock& clock, Rng& rng,
                               const std::function<AttemptResult(int)>& attempt_fn, int* attempts,
                               const std::function<void(const AttemptResult&, double)>& on_wait = {});

}  // namespace nf
