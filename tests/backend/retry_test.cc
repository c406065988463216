// The retry policy against a fake clock (issue 6 "Must show": Retry-After forms, the cap,
// no retry on 400), with no real sleeping.
#include "backend/retry.h"

#include <gtest/gtest.h>

#include <vector>

namespace nf {
namespace {

class FakeClock final : public Clock {
 public:
  double now_s() const override { return now_; }
  int64_t unix_time_s() const override { return unix_ + static_cast<int64_t>(now_); }
  void sleep_s(double s) override {
    sleeps.push_back(s);
    now_ += s;
  }
  std::vector<double> sleeps;
  int64_t unix_ = 1'796'040'000;  // 2026-11-30 12:00:00 UTC
  double now_ = 0;
};

AttemptResult http(long code, std::string retry_after = "", std::string date = "") {
  AttemptResult a;
  a.http = code;
  a.retry_after = std::move(retry_after);
  a.date = std::move(date);
  return a;
}

// Runs attempts that return `first` once, then 200.
struct RetryRun {
  RetryDecision decision;
  int attempts = 0;
  std::vector<double> sleeps;
};
RetryRun once_then_ok(const AttemptResult& first, RetryPolicy policy = {}, uint64_t seed = 7) {
  FakeClock clock;
  Rng rng(seed);
  RetryRun run;
  run.decision = run_with_retries(policy, clock, rng, [&](int n) { return n == 1 ? first : http(200); }, &run.attempts);
  run.sleeps = clock.sleeps;
  return run;
}

TEST(Retry, RetryAfterSecondsWaitsExactlyThatLong) {
  const RetryRun r = once_then_ok(http(429, "30"));
  EXPECT_EQ(r.decision.action, RetryDecision::Action::kDone);
  EXPECT_EQ(r.attempts, 2);
  ASSERT_EQ(r.sleeps.size(), 1u);
  EXPECT_DOUBLE_EQ(r.sleeps[0], 30.0);
}

TEST(Retry, RetryAfterHttpDateIsMeasuredFromTheDateHeader) {
  // The server's clock is far from ours: the wait comes from Date, not our clock.
  const RetryRun r = once_then_ok(http(503, "Wed, 21 Oct 2015 07:28:15 GMT", "Wed, 21 Oct 2015 07:28:00 GMT"));
  EXPECT_EQ(r.attempts, 2);
  ASSERT_EQ(r.sleeps.size(), 1u);
  EXPECT_DOUBLE_EQ(r.sleeps[0], 15.0);
  // Without a Date header the date is measured from our clock (2026-11-30 12:00:00 UTC).
  EXPECT_DOUBLE_EQ(*parse_retry_after("Mon, 30 Nov 2026 12:00:20 GMT", "", 1'796'040'000), 20.0);
  // A date in the past means now.
  EXPECT_DOUBLE_EQ(*parse_retry_after("Mon, 30 Nov 2026 11:00:00 GMT", "", 1'796'040'000), 0.0);
}

TEST(Retry, UnparseableRetryAfterFallsBackToTheBackoff) {
  RetryPolicy p;
  p.base_delay_s = 2.0;
  const RetryRun r = once_then_ok(http(429, "soon"), p, 11);
  EXPECT_FALSE(parse_retry_after("soon", "", 0).has_value());
  ASSERT_EQ(r.sleeps.size(), 1u);
  Rng same(11);
  EXPECT_DOUBLE_EQ(r.sleeps[0], backoff_delay_s(p, 1, same.uniform()));
  EXPECT_GE(r.sleeps[0], 1.0);
  EXPECT_LE(r.sleeps[0], 2.0);
}

TEST(Retry, RetryAfterZeroRetriesPromptly) {
  const RetryRun r = once_then_ok(http(429, "0"));
  EXPECT_EQ(r.attempts, 2);
  ASSERT_EQ(r.sleeps.size(), 1u);
  EXPECT_DOUBLE_EQ(r.sleeps[0], 0.0);
}

TEST(Retry, RetryAfterBeyondTheCapGivesUpWithoutSleeping) {
  RetryPolicy p;
  p.retry_after_cap_s = 120;
  const RetryRun r = once_then_ok(http(429, "3600"), p);
  EXPECT_EQ(r.decision.action, RetryDecision::Action::kGiveUp);
  EXPECT_NE(r.decision.reason.find("3600"), std::string::npos) << r.decision.reason;
  EXPECT_NE(r.decision.reason.find("120"), std::string::npos) << r.decision.reason;
  EXPECT_EQ(r.attempts, 1);
  EXPECT_TRUE(r.sleeps.empty());
  // At the cap exactly it still waits.
  const RetryRun at = once_then_ok(http(429, "120"), p);
  EXPECT_EQ(at.attempts, 2);
  EXPECT_DOUBLE_EQ(at.sleeps.at(0), 120.0);
}

TEST(Retry, BadRequestIsNotRetried) {
  const RetryRun r = once_then_ok(http(400));
  EXPECT_EQ(r.decision.action, RetryDecision::Action::kDone);
  EXPECT_EQ(r.attempts, 1);
  EXPECT_TRUE(r.sleeps.empty());
}

TEST(Retry, OnlyTheTransientStatusesAreRetried) {
  for (long code : {400L, 401L, 403L, 404L, 413L, 422L}) {
    EXPECT_FALSE(is_retryable_http(code)) << code;
    EXPECT_EQ(once_then_ok(http(code, "1")).attempts, 1) << code;
  }
  for (long code : {408L, 409L, 429L, 500L, 502L, 503L, 504L}) {
    EXPECT_TRUE(is_retryable_http(code)) << code;
    EXPECT_EQ(once_then_ok(http(code)).attempts, 2) << code;
  }
  AttemptResult reset;
  reset.transport_error = true;
  EXPECT_EQ(once_then_ok(reset).attempts, 2);
  AttemptResult cut = http(200);
  cut.malformed_body = true;
  EXPECT_EQ(once_then_ok(cut).attempts, 2);
}

TEST(Retry, ExponentialBackoffWithJitterThenGiveUp) {
  RetryPolicy p;
  p.max_retries = 6;
  p.base_delay_s = 1.0;
  p.max_delay_s = 16.0;
  FakeClock clock;
  Rng rng(3);
  int attempts = 0;
  const RetryDecision d = run_with_retries(p, clock, rng, [](int) { return http(503); }, &attempts);
  EXPECT_EQ(d.action, RetryDecision::Action::kGiveUp);
  EXPECT_EQ(attempts, 7);
  ASSERT_EQ(clock.sleeps.size(), 6u);
  const double nominal[] = {1, 2, 4, 8, 16, 16};
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_GE(clock.sleeps[i], 0.5 * nominal[i]) << i;
    EXPECT_LE(clock.sleeps[i], nominal[i]) << i;
  }
  // Jitter: not all waits sit on the same fraction of their nominal value...
  EXPECT_NE(clock.sleeps[0] / nominal[0], clock.sleeps[1] / nominal[1]);
  // ...and a seed gives the same waits again; another seed different ones.
  FakeClock again, other;
  Rng rng_again(3), rng_other(4);
  run_with_retries(p, again, rng_again, [](int) { return http(503); }, &attempts);
  run_with_retries(p, other, rng_other, [](int) { return http(503); }, &attempts);
  EXPECT_EQ(again.sleeps, clock.sleeps);
  EXPECT_NE(other.sleeps, clock.sleeps);
}

TEST(Retry, ZeroRetriesMeansOneAttempt) {
  RetryPolicy p;
  p.max_retries = 0;
  const RetryRun r = once_then_ok(http(500), p);
  EXPECT_EQ(r.decision.action, RetryDecision::Action::kGiveUp);
  EXPECT_EQ(r.attempts, 1);
}

}  // namespace
}  // namespace nf
