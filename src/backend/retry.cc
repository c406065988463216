#include "backend/retry.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include <curl/curl.h>
#include <fmt/format.h>

namespace nf {

bool is_retryable_http(long http) { return http == 408 || http == 409 || http == 429 || http >= 500; }

std::optional<double> parse_retry_after(const std::string& value, const std::string& date_header,
                                        int64_t now_unix_s) {
  size_t b = 0, e = value.size();
  while (b < e && std::isspace(static_cast<unsigned char>(value[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(value[e - 1]))) --e;
  const std::string v = value.substr(b, e - b);
  if (v.empty()) return std::nullopt;
  if (std::all_of(v.begin(), v.end(), [](unsigned char c) { return std::isdigit(c) != 0; })) {
    if (v.size() > 9) return 1e9;  // absurdly long: above any cap
    return static_cast<double>(std::stoll(v));
  }
  // An HTTP-date. curl_getdate returns -1 for anything it cannot read.
  const time_t at = curl_getdate(v.c_str(), nullptr);
  if (at == static_cast<time_t>(-1)) return std::nullopt;
  int64_t reference = now_unix_s;
  if (!date_header.empty()) {
    const time_t d = curl_getdate(date_header.c_str(), nullptr);
    if (d != static_cast<time_t>(-1)) reference = static_cast<int64_t>(d);
  }
  return std::max(0.0, static_cast<double>(static_cast<int64_t>(at) - reference));
}

double backoff_delay_s(const RetryPolicy& policy, int retry, double uniform01) {
  const double exp = policy.base_delay_s * std::pow(2.0, std::max(0, retry - 1));
  return std::min(policy.max_delay_s, exp) * (0.5 + 0.5 * uniform01);
}

RetryDecision decide_retry(const RetryPolicy& policy, int attempt, const AttemptResult& r, int64_t now_unix_s,
                           double uniform01) {
  RetryDecision d;
  const bool ok_http = !r.transport_error && r.http >= 200 && r.http < 300;
  if (ok_http && !r.malformed_body) return d;  // done
  const bool retryable = r.transport_error || (ok_http && r.malformed_body) || is_retryable_http(r.http);
  if (!retryable) return d;  // final 4xx: reported by the caller
  if (r.no_retry) {
    d.action = RetryDecision::Action::kGiveUp;
    d.reason = "not retried";
    return d;
  }
  if (attempt > policy.max_retries) {
    d.action = RetryDecision::Action::kGiveUp;
    d.reason = fmt::format("gave up after {} attempts", attempt);
    return d;
  }
  if (!r.retry_after.empty()) {
    if (auto wait = parse_retry_after(r.retry_after, r.date, now_unix_s)) {
      if (*wait > policy.retry_after_cap_s) {
        d.action = RetryDecision::Action::kGiveUp;
        d.reason = fmt::format("server asked to retry after {} s, beyond the cap of {} s (retry_after_cap_s)",
                               *wait, policy.retry_after_cap_s);
        return d;
      }
      d.action = RetryDecision::Action::kRetry;
      d.wait_s = *wait;
      return d;
    }
  }
  d.action = RetryDecision::Action::kRetry;
  d.wait_s = backoff_delay_s(policy, attempt, uniform01);
  return d;
}

RetryDecision run_with_retries(const RetryPolicy& policy, Clock& clock, Rng& rng,
                               const std::function<AttemptResult(int)>& attempt_fn, int* attempts,
                               const std::function<void(const AttemptResult&, double)>& on_wait) {
  for (int attempt = 1;; ++attempt) {
    const AttemptResult r = attempt_fn(attempt);
    const RetryDecision d = decide_retry(policy, attempt, r, clock.unix_time_s(), rng.uniform());
    if (d.action != RetryDecision::Action::kRetry) {
      if (attempts) *attempts = attempt;
      return d;
    }
    if (on_wait) on_wait(r, d.wait_s);
    clock.sleep_s(d.wait_s);
  }
}

}  // namespace nf
