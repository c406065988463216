#include "util/status.h"

#include <gtest/gtest.h>

#include "util/exit_code.h"
#include "util/rng.h"
#include "util/strings.h"

namespace nf {
namespace {

Result<int> half(int x) {
  if (x % 2) return InvalidArgument("odd");
  return x / 2;
}

Result<int> quarter(int x) {
  NF_ASSIGN_OR_RETURN(int h, half(x));
  NF_ASSIGN_OR_RETURN(int q, half(h));
  return q;
}

TEST(Status, PropagatesThroughMacros) {
  EXPECT_EQ(*quarter(8), 2);
  Result<int> r = quarter(6);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().with_context("study.yaml:7").message(), "study.yaml:7: odd");
}

TEST(ExitCode, MapsStatusCodes) {
  EXPECT_EQ(exit_code_for(InvalidArgument("x")), ExitCode::kUsage);
  EXPECT_EQ(exit_code_for(NotFound("x")), ExitCode::kUsage);
  EXPECT_EQ(exit_code_for(Unavailable("x")), ExitCode::kBackendUnavailable);
}

TEST(Strings, DidYouMean) {
  EXPECT_EQ(closest_match("replicats", {"replicates", "subjects", "seed"}), "replicates");
  EXPECT_EQ(closest_match("zzzzzzzz", {"replicates", "seed"}), "");
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
}

TEST(Rng, StreamsArePinnedAndIndependentOfOrder) {
  Rng a = Rng::stream(42, {1, 2});
  Rng b = Rng::stream(42, {1, 2});
  Rng c = Rng::stream(42, {2, 1});
  const uint64_t x = a.next_u64();
  EXPECT_EQ(x, b.next_u64());
  EXPECT_NE(x, c.next_u64());
  Rng d(7);
  for (int i = 0; i < 1000; ++i) {
    const double u = d.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    ASSERT_LT(d.uniform_int(3), 3u);
  }
}

}  // namespace
}  // namespace nf
