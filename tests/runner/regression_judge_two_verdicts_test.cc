// Issue 13 item 2, the judge's side: a verdict that commits to both values is not a vote
// (parse_error), never its first word.
#include <gtest/gtest.h>

#include "runner/judge.h"

namespace nf {
namespace {

TEST(RegressionJudgeTwoVerdicts, BothValuesAreAParseError) {
  for (const char* reply : {"Verdict: met, not met", "Verdict: met or not met", "Verdict: met/not_met",
                            "{\"verdict\": \"met, not_met\"}", "{\"verdict\": [\"met\", \"not_met\"]}",
                            "{\"verdict\": \"met\", \"met\": false}"}) {
    EXPECT_FALSE(parse_verdict(reply).ok()) << reply;
  }
  EXPECT_EQ(*parse_verdict("Verdict: not met"), 0);
  EXPECT_EQ(*parse_verdict("{\"verdict\": \"met\"}"), 1);
}

}  // namespace
}  // namespace nf
