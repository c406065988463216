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

// docs/judging.md rule 3: a JSON verdict and a final verdict line that contradict each
// other are a parse_error, not the JSON's vote; when they agree it is a vote.
TEST(RegressionJudgeTwoVerdicts, JsonContradictedByTheFinalLineIsAParseError) {
  for (const char* reply : {"{\"verdict\": \"met\"}\nVerdict: NOT_MET", "{\"verdict\": \"not_met\"}\n\nLabel: 1",
                            "```json\n{\"verdict\": \"met\", \"reason\": \"r\"}\n```\n**Verdict:** not met",
                            "{\"met\": true}\nNOT MET", "{\"verdict\": \"met\"}\nVerdict: maybe"}) {
    auto v = parse_verdict(reply);
    EXPECT_FALSE(v.ok()) << reply << " -> " << (v.ok() ? *v : -1);
  }
  auto c = parse_verdict("{\"verdict\": \"met\"}\nVerdict: NOT_MET");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("contradictory"), std::string::npos) << c.status().message();
  EXPECT_EQ(*parse_verdict("{\"verdict\": \"met\"}\nVerdict: MET"), 1);
  EXPECT_EQ(*parse_verdict("{\"verdict\": \"not_met\"}\n\n**Verdict:** Not met\n"), 0);
  EXPECT_EQ(*parse_verdict("{\"verdict\": \"met\"}\nThat is my answer."), 1);  // prose is no verdict line
}

}  // namespace
}  // namespace nf
