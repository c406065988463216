// Adaptive back-off after 429s (issue 6 item 2): the AIMD in-flight limit and the shared
// Retry-After pause of RateLimiter, on a fake clock (no real sleeping), with and without
// rpm budgets.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "backend/rate_limit.h"

namespace nf {
namespace {

class FakeClock final : public Clock {
 public:
  double now_s() const override { return now_; }
  int64_t unix_time_s() const override { return static_cast<int64_t>(now_); }
  void sleep_s(double s) override {
    slept += s;
    now_ += s;
  }
  double slept = 0;
  double now_ = 100;
};

AdaptiveOptions up_to(double max_in_flight) {
  AdaptiveOptions a;
  a.max_in_flight = max_in_flight;
  return a;
}

// Admits as many attempts as try_admit allows (at most `cap`).
std::vector<RateLimiter::Permit> admit_all(RateLimiter& limiter, int cap = 1000) {
  std::vector<RateLimiter::Permit> out;
  RateLimiter::Permit p;
  while (static_cast<int>(out.size()) < cap && limiter.try_admit(p)) out.push_back(p);
  return out;
}

TEST(AdaptiveLimit, ABurstOf429sHalvesTheInFlightLimitOncePerWindow) {
  FakeClock clock;
  RateLimiter limiter(0, 0, clock, up_to(16));
  auto permits = admit_all(limiter);
  ASSERT_EQ(permits.size(), 16u);  // the starting limit
  // Every request of the window comes back 429: one congestion event, one cut.
  for (const auto& p : permits) limiter.release(p, RateLimiter::Outcome::kThrottled);
  EXPECT_EQ(limiter.throttled(), 16);
  EXPECT_EQ(limiter.in_flight_limit(), 8.0);
  EXPECT_EQ(limiter.in_flight(), 0);
  permits = admit_all(limiter);
  EXPECT_EQ(permits.size(), 8u);
  for (const auto& p : permits) limiter.release(p, RateLimiter::Outcome::kThrottled);
  EXPECT_EQ(limiter.in_flight_limit(), 4.0);
  // Down to the floor of 1, never 0.
  for (int i = 0; i < 5; ++i) {
    permits = admit_all(limiter);
    for (const auto& p : permits) limiter.release(p, RateLimiter::Outcome::kThrottled);
  }
  EXPECT_EQ(limiter.in_flight_limit(), 1.0);
  EXPECT_EQ(admit_all(limiter).size(), 1u);
  EXPECT_EQ(clock.slept, 0.0);  // no Retry-After: nobody was paused
}

TEST(AdaptiveLimit, TheCutStartsFromTheRequestsActuallyInFlight) {
  FakeClock clock;
  RateLimiter limiter(0, 0, clock, up_to(256));
  auto permits = admit_all(limiter, 6);  // a worker pool of 6 under a ceiling of 256
  limiter.release(permits[0], RateLimiter::Outcome::kThrottled);
  EXPECT_EQ(limiter.in_flight_limit(), 3.0);  // half of 6, not half of 256
  // The 5 still in flight do not fit under the new limit until two come back.
  RateLimiter::Permit p;
  EXPECT_FALSE(limiter.try_admit(p));
  for (size_t i = 1; i < permits.size(); ++i) limiter.release(permits[i], RateLimiter::Outcome::kOther);
  EXPECT_EQ(limiter.in_flight_limit(), 3.0);  // a 5xx or reset neither cuts nor raises
  EXPECT_EQ(admit_all(limiter).size(), 3u);
}

TEST(AdaptiveLimit, SuccessesRestoreTheLimitAdditively) {
  FakeClock clock;
  RateLimiter limiter(0, 0, clock, up_to(8));
  auto permits = admit_all(limiter);
  for (const auto& p : permits) limiter.release(p, RateLimiter::Outcome::kThrottled);
  ASSERT_EQ(limiter.in_flight_limit(), 4.0);
  // One success adds 1/limit: +1 per window of `limit` successes.
  RateLimiter::Permit p;
  ASSERT_TRUE(limiter.try_admit(p));
  limiter.release(p, RateLimiter::Outcome::kSuccess);
  EXPECT_DOUBLE_EQ(limiter.in_flight_limit(), 4.25);
  int successes = 1;
  while (limiter.in_flight_limit() < 8.0 && successes < 1000) {
    ASSERT_TRUE(limiter.try_admit(p));
    limiter.release(p, RateLimiter::Outcome::kSuccess);
    ++successes;
  }
  EXPECT_EQ(limiter.in_flight_limit(), 8.0);  // capped at the ceiling
  EXPECT_GE(successes, 4 + 5 + 6 + 7 - 4);    // about sum of the limits crossed, not 1
  EXPECT_LE(successes, 4 + 5 + 6 + 7 + 3);    // (+1 per step where 1/limit rounds short)
  EXPECT_EQ(admit_all(limiter).size(), 8u);
}

TEST(AdaptiveLimit, ARetryAfterRestartsFromOneAndSlowStartsBackToTheThreshold) {
  FakeClock clock;
  RateLimiter limiter(0, 0, clock, up_to(16));
  auto permits = admit_all(limiter);
  ASSERT_EQ(permits.size(), 16u);
  limiter.release(permits[0], RateLimiter::Outcome::kThrottledPause);
  EXPECT_EQ(limiter.in_flight_limit(), 1.0);  // like TCP after a retransmission timeout
  for (size_t i = 1; i < permits.size(); ++i) limiter.release(permits[i], RateLimiter::Outcome::kThrottledPause);
  EXPECT_EQ(limiter.in_flight_limit(), 1.0);  // same window: no further change
  // Slow start: +1 per success up to the threshold (half of the 16 in flight), so the
  // limit doubles per round of successes...
  std::vector<double> after_round;
  for (int round = 0; round < 3; ++round) {
    permits = admit_all(limiter);
    for (const auto& p : permits) limiter.release(p, RateLimiter::Outcome::kSuccess);
    after_round.push_back(limiter.in_flight_limit());
  }
  EXPECT_EQ(after_round, (std::vector<double>{2.0, 4.0, 8.0}));
  // ... then additively: one round of 8 successes adds 8 * 1/limit, about 1.
  permits = admit_all(limiter);
  ASSERT_EQ(permits.size(), 8u);
  for (const auto& p : permits) limiter.release(p, RateLimiter::Outcome::kSuccess);
  EXPECT_GT(limiter.in_flight_limit(), 8.9);
  EXPECT_LT(limiter.in_flight_limit(), 9.0);
}

TEST(AdaptiveLimit, RetryAfterBlocksEveryWorkerUntilTheTimePasses) {
  FakeClock clock;
  RateLimiter limiter(0, 0, clock, up_to(16));
  RateLimiter::Permit b;
  auto four = admit_all(limiter, 4);
  limiter.release(four[0], RateLimiter::Outcome::kThrottled);  // limit 4 in flight -> 2
  for (size_t i = 1; i < four.size(); ++i) limiter.release(four[i], RateLimiter::Outcome::kOther);
  ASSERT_EQ(limiter.in_flight_limit(), 2.0);
  limiter.pause_for(30);  // the 429 said Retry-After: 30
  EXPECT_NEAR(limiter.paused_for_s(), 30.0, 1e-9);
  // Neither this worker nor any other may send now.
  EXPECT_FALSE(limiter.try_admit(b));
  clock.now_ += 29.5;
  EXPECT_FALSE(limiter.try_admit(b));
  // A blocking admit sleeps (on the clock) exactly until the pause ends.
  const double before = clock.slept;
  const RateLimiter::Permit c = limiter.admit();
  EXPECT_NEAR(clock.slept - before, 0.5, 1e-9);
  EXPECT_GT(c.seq, 0u);
  EXPECT_TRUE(limiter.try_admit(b));  // a second worker goes too
  EXPECT_EQ(limiter.in_flight(), 2);
}

TEST(AdaptiveLimit, BudgetsStillPaceAndComposeWithTheInFlightLimit) {
  FakeClock clock;
  RateLimiter limiter(120, 0, clock, up_to(4));  // 2 requests/s, burst 2
  auto permits = admit_all(limiter);
  EXPECT_EQ(permits.size(), 2u);  // the budget binds before the in-flight limit of 4
  clock.now_ += 1.0;
  auto more = admit_all(limiter);
  EXPECT_EQ(more.size(), 2u);     // refilled: 4 in flight, the in-flight limit binds now
  clock.now_ += 10.0;
  EXPECT_EQ(admit_all(limiter).size(), 0u);
  for (const auto& p : permits) limiter.release(p, RateLimiter::Outcome::kThrottled);
  for (const auto& p : more) limiter.release(p, RateLimiter::Outcome::kThrottled);
  EXPECT_EQ(limiter.in_flight_limit(), 2.0);
  EXPECT_EQ(admit_all(limiter).size(), 2u);  // budget refilled, limit 2
  // The blocking path still paces by the budget: 2 more at 0.5 s each after the burst.
  RateLimiter paced(120, 0, clock, up_to(4));
  const double before = clock.slept;
  for (int i = 0; i < 4; ++i) paced.release(paced.admit(), RateLimiter::Outcome::kSuccess);
  EXPECT_NEAR(clock.slept - before, 1.0, 1e-9);
}

TEST(AdaptiveLimit, DisabledAdaptationIgnores429s) {
  FakeClock clock;
  AdaptiveOptions off = up_to(4);
  off.enabled = false;
  RateLimiter limiter(0, 0, clock, off);
  auto permits = admit_all(limiter, 50);
  EXPECT_EQ(permits.size(), 50u);  // no in-flight limit
  for (const auto& p : permits) limiter.release(p, RateLimiter::Outcome::kThrottled);
  limiter.pause_for(30);
  EXPECT_EQ(limiter.throttled(), 50);  // still counted
  EXPECT_EQ(limiter.paused_for_s(), 0.0);
  EXPECT_EQ(admit_all(limiter, 50).size(), 50u);
}

TEST(AdaptiveLimit, ConcurrentWorkersNeverExceedTheCutLimit) {
  // Real threads, real clock, no sleeping on it: the slot wait is a condition variable.
  RateLimiter limiter(0, 0, real_clock(), up_to(8));
  auto permits = admit_all(limiter);
  ASSERT_EQ(permits.size(), 8u);
  for (const auto& p : permits) limiter.release(p, RateLimiter::Outcome::kThrottled);
  for (const auto& p : admit_all(limiter)) limiter.release(p, RateLimiter::Outcome::kThrottled);
  ASSERT_EQ(limiter.in_flight_limit(), 2.0);
  std::atomic<int> now{0}, peak{0};
  std::vector<std::thread> workers;
  for (int w = 0; w < 6; ++w) {
    workers.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        const RateLimiter::Permit p = limiter.admit();
        const int n = ++now;
        int prev = peak.load();
        while (n > prev && !peak.compare_exchange_weak(prev, n)) {
        }
        std::this_thread::yield();
        --now;
        limiter.release(p, RateLimiter::Outcome::kOther);  // keeps the limit at 2
      }
    });
  }
  for (auto& t : workers) t.join();
  EXPECT_LE(peak.load(), 2);
  EXPECT_GE(peak.load(), 1);
  EXPECT_EQ(limiter.in_flight(), 0);
}

}  // namespace
}  // namespace nf
