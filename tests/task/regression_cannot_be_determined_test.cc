// Fault: "ANSWER: Cannot be determined" was scored as option C (the 'C' of "Cannot").
#include <gtest/gtest.h>

#include "task/mcq.h"

namespace nf {
namespace {

TEST(RegressionCannotBeDetermined, NoLetterTakenFromWord) {
  const std::vector<std::string> letters = {"A", "B", "C", "D"};
  EXPECT_EQ(extract_choice("ANSWER: Cannot be determined", letters), std::nullopt);
  EXPECT_EQ(extract_choice("Answer: cannot be determined.", letters), std::nullopt);
  // The same reply scored through score_mcq is a parse_error, not a wrong answer C.
  RenderedMcq item;
  item.options = {{"A", "a"}, {"B", "b"}, {"C", "c"}, {"D", "d"}};
  item.answer = "A";
  item.source_index = {0, 1, 2, 3};
  ChatResponse r;
  r.content = "ANSWER: Cannot be determined";
  EXPECT_EQ(score_mcq(item, r).status, DrawStatus::kParseError);
}

}  // namespace
}  // namespace nf
