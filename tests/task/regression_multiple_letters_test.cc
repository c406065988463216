// Fault (issue 13 item 2): for a single-answer MCQ, "ANSWER: A, B." and "ANSWER: A, C and D"
// were read as A. A reply that commits to more than one option is a parse_error
// (ambiguous), never its first letter; a new sentence after the answer is not a list.
#include <gtest/gtest.h>

#include "backend/backend.h"
#include "task/mcq.h"

namespace nf {
namespace {

const std::vector<std::string> kAD = {"A", "B", "C", "D"};

TEST(RegressionMultipleLetters, ListedLettersAreAmbiguous) {
  for (const char* reply : {"ANSWER: A, B.", "ANSWER: A, C and D", "The answer is A, B", "Answer: (A), (C)",
                            "Answer: A & B", "answer: A/B", "Answer: A + C", "Answer: A; C", "Answer: A or B",
                            "The answer is **A** and **C**", "Final answer: A, B, C", "<answer>A, B</answer>",
                            "<answer>Answer: A, C</answer>", "\\boxed{A, B}", "A. B.", "A) C)"}) {
    EXPECT_EQ(extract_choice(reply, kAD), std::nullopt) << reply;
  }
}

TEST(RegressionMultipleLetters, OneLetterWithProseStillParses) {
  EXPECT_EQ(extract_choice("ANSWER: A.", kAD), "A");
  EXPECT_EQ(extract_choice("Answer: B, because the others are contraindicated.", kAD), "B");
  EXPECT_EQ(extract_choice("Answer: B, a bacterial cause.", kAD), "B");
  EXPECT_EQ(extract_choice("The answer is B. C is wrong because ...", kAD), "B");
  EXPECT_EQ(extract_choice("The answer is C; I checked", kAD), "C");
  EXPECT_EQ(extract_choice("B. Tell the attending physician.", kAD), "B");
}

TEST(RegressionMultipleLetters, ScoreMcqMakesItAParseError) {
  RenderedMcq item;
  item.item_id = "q1";
  item.question = "Which?";
  for (const char* l : {"A", "B", "C", "D"}) item.options.push_back({l, std::string("option ") + l});
  item.answer = "A";
  item.source_index = {0, 1, 2, 3};
  ChatResponse r;
  r.kind = ResponseKind::kOk;
  r.content = "ANSWER: A, C and D";
  const McqScore s = score_mcq(item, r);
  EXPECT_EQ(s.status, DrawStatus::kParseError);
  EXPECT_TRUE(s.outcomes.empty());
}

}  // namespace
}  // namespace nf
