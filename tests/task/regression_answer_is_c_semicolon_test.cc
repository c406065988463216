// Fault: "The answer is C; I checked" with letters A-J was read as I (the pronoun) or missed.
#include <gtest/gtest.h>

#include "task/mcq.h"

namespace nf {
namespace {

TEST(RegressionAnswerIsCSemicolon, ExplicitStatementBeatsPronoun) {
  const std::vector<std::string> letters = {"A", "B", "C", "D", "E", "F", "G", "H", "I", "J"};
  EXPECT_EQ(extract_choice("The answer is C; I checked", letters), "C");
  EXPECT_EQ(extract_choice("I checked: the answer is C; I am sure", letters), "C");
}

}  // namespace
}  // namespace nf
