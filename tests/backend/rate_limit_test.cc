// Token buckets and the endpoint rate limiter on a fake clock.
#include "backend/rate_limit.h"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

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

TEST(RateLimit, RequestsPerMinuteArePacedAfterTheBurst) {
  FakeClock clock;
  RateLimiter limiter(120, 0, clock);  // 2 per second, burst 2
  for (int i = 0; i < 12; ++i) limiter.before_request();
  // 2 free, then 10 more at 0.5 s each.
  EXPECT_NEAR(clock.slept, 5.0, 1e-6);
}

TEST(RateLimit, UnlimitedNeverWaits) {
  FakeClock clock;
  RateLimiter limiter(0, 0, clock);
  for (int i = 0; i < 1000; ++i) {
    limiter.before_request();
    limiter.after_reply(1e6);
  }
  EXPECT_EQ(clock.slept, 0.0);
}

TEST(RateLimit, TokenDebtDelaysTheNextRequest) {
  FakeClock clock;
  RateLimiter limiter(0, 600, clock);  // 10 tokens/s, bucket of 10
  limiter.before_request();
  EXPECT_EQ(clock.slept, 0.0);
  limiter.after_reply(60);  // 10 in the bucket - 60 = 50 in debt: 5 s to repay
  limiter.before_request();
  EXPECT_NEAR(clock.slept, 5.0, 1e-6);
}

TEST(RateLimit, A429PausesTheWholeEndpoint) {
  FakeClock clock;
  RateLimiter limiter(0, 0, clock);
  limiter.pause_for(7.5);
  limiter.pause_for(2.0);  // a shorter pause does not shorten the longer one
  limiter.before_request();
  EXPECT_NEAR(clock.slept, 7.5, 1e-9);
  limiter.before_request();
  EXPECT_NEAR(clock.slept, 7.5, 1e-9);
}

TEST(RateLimit, TokenBucketRefillsAtItsRateUpToCapacity) {
  FakeClock clock;
  TokenBucket b(1.0, 3.0, clock);
  b.take(3);
  EXPECT_NEAR(b.wait_s(1), 1.0, 1e-9);
  clock.sleep_s(100);
  EXPECT_EQ(b.wait_s(3), 0.0);
  EXPECT_NEAR(b.wait_s(4), 0.0, 1e-9);  // asks above capacity are clamped to it
  b.take(3);
  EXPECT_NEAR(b.wait_s(2), 2.0, 1e-9);
}

}  // namespace
}  // namespace nf
