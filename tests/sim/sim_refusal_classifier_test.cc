// The sim refusal subject (sim/sim_refusal.h) against the string-match classifier
// (task/refusal.h): plain refusals are caught, hidden refusals and compliance are not —
// the property that makes the XSTest chat study's two scoring paths disagree by design.
#include <gtest/gtest.h>

#include "sim/sim_refusal.h"
#include "task/refusal.h"

namespace nf {
namespace {

TEST(SimRefusalVsStringMatch, OnlyPlainRefusalsOpenWithAStringMatchPhrase) {
  for (uint64_t t = 0; t < 8; ++t) {
    EXPECT_TRUE(is_string_match_refusal(sim_refusal_reply(SimReplyKind::kRefusal, t)));
    EXPECT_FALSE(is_string_match_refusal(sim_refusal_reply(SimReplyKind::kHiddenRefusal, t)));
    EXPECT_FALSE(is_string_match_refusal(sim_refusal_reply(SimReplyKind::kComply, t)));
  }
}

}  // namespace
}  // namespace nf
