// Tests of answer-letter extraction (task/mcq.h extract_choice), one case per rule.
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "task/mcq.h"

namespace nf {
namespace {

const std::vector<std::string> kAD = {"A", "B", "C", "D"};
const std::vector<std::string> kAJ = {"A", "B", "C", "D", "E", "F", "G", "H", "I", "J"};

std::optional<std::string> x(std::string_view text, const std::vector<std::string>& letters = kAD) {
  return extract_choice(text, letters);
}

TEST(ExtractChoice, NeverTakesALetterOutOfAWord) {
  EXPECT_EQ(x("ANSWER: Cannot be determined"), std::nullopt);
  EXPECT_EQ(x("ANSWER: Cannot be determined", kAJ), std::nullopt);
  EXPECT_EQ(x("Error: upstream unavailable"), std::nullopt);
  EXPECT_EQ(x("The answer is X-ray guided biopsy", kAJ), std::nullopt);
  EXPECT_EQ(x("The answer is a tricky one."), std::nullopt);
  EXPECT_EQ(x("Answer: I think it is unclear", kAJ), std::nullopt);
  EXPECT_EQ(x("Answer: I'm not sure", kAJ), std::nullopt);
  EXPECT_EQ(x("Answer: I\xE2\x80\x99m not sure", kAJ), std::nullopt);
}

TEST(ExtractChoice, AnswerIsWithTrailingClause) { EXPECT_EQ(x("The answer is C; I checked", kAJ), "C"); }

TEST(ExtractChoice, AnswerTag) {
  EXPECT_EQ(x("Reasoning...\n<answer>C</answer>"), "C");
  EXPECT_EQ(x("<answer> c </answer>"), "C");
  EXPECT_EQ(x("<ANSWER>b</ANSWER>"), "B");
  EXPECT_EQ(x("<answer>(D)</answer>"), "D");
  EXPECT_EQ(x("<answer>C. Report the physician</answer>"), "C");
  EXPECT_EQ(x("<answer>**B**</answer>"), "B");
  EXPECT_EQ(x("<answer>Answer: b</answer>"), "B");
}

TEST(ExtractChoice, LastAnswerTagWins) {
  EXPECT_EQ(x("First <answer>A</answer>, on reflection <answer>D</answer>"), "D");
  // The instruction echoed with its placeholder, then the real answer.
  EXPECT_EQ(x("I must reply as <answer>X</answer>. So: <answer>B</answer>"), "B");
}

TEST(ExtractChoice, AnswerTagDecidesEvenWhenInvalid) {
  EXPECT_EQ(x("<answer>F</answer>"), std::nullopt);
  EXPECT_EQ(x("<answer>F</answer>", kAJ), "F");
  EXPECT_EQ(x("The answer is B. <answer>Cannot be determined</answer>"), std::nullopt);
  EXPECT_EQ(x("<answer>A or B</answer>"), std::nullopt);
}

TEST(ExtractChoice, UnclosedTagFallsThrough) { EXPECT_EQ(x("Answer: B <answer>"), "B"); }

TEST(ExtractChoice, Bold) {
  EXPECT_EQ(x("**D**"), "D");
  EXPECT_EQ(x("I pick **B.** because"), "B");
  EXPECT_EQ(x("**A** is wrong and **B** is right"), std::nullopt);  // ambiguous
}

TEST(ExtractChoice, Parenthesised) {
  EXPECT_EQ(x("(B)"), "B");
  EXPECT_EQ(x("It must be (b) given the findings"), "B");
  EXPECT_EQ(x("Not (A), rather (C)"), std::nullopt);  // ambiguous
}

TEST(ExtractChoice, DollarAndBoxed) {
  EXPECT_EQ(x("$C$"), "C");
  EXPECT_EQ(x("\\boxed{C}"), "C");
  EXPECT_EQ(x("Options (A) and (D) fail, so \\boxed{B}"), "B");
  EXPECT_EQ(x("\\boxed{\\text{d}}"), "D");
}

TEST(ExtractChoice, LoneLetter) {
  EXPECT_EQ(x("b"), "B");
  EXPECT_EQ(x("  b.\n"), "B");
  EXPECT_EQ(x("C"), "C");
  EXPECT_EQ(x("B. Tell the attending that he cannot fail to disclose this mistake"), "B");
  EXPECT_EQ(x("e"), std::nullopt);
}

TEST(ExtractChoice, ExplicitStatements) {
  EXPECT_EQ(x("Answer: D"), "D");
  EXPECT_EQ(x("The answer is: (d)"), "D");
  EXPECT_EQ(x("**Final answer:** A"), "A");
  EXPECT_EQ(x("Answer - (C)"), "C");
  EXPECT_EQ(x("The correct answer would be B."), "B");
  EXPECT_EQ(x("The answer is option C"), "C");
  EXPECT_EQ(x("The answer is D because of the murmur"), "D");
  EXPECT_EQ(x("Answer: **B**"), "B");
  EXPECT_EQ(x("My choice is 'c'"), "C");
  EXPECT_EQ(x("The choice is difficult; (A) and (B) both fit"), std::nullopt);
}

TEST(ExtractChoice, WrongThenBestOption) {
  // Documented rule: explicit statements decide; "A is wrong" is not one, "the best
  // option is B" is.
  EXPECT_EQ(x("I think A is wrong; the best option is B."), "B");
  // Without any explicit statement two bare letters are not guessed between.
  EXPECT_EQ(x("I think A is wrong; B is better."), std::nullopt);
}

TEST(ExtractChoice, LastExplicitStatementWins) {
  EXPECT_EQ(x("The answer is A. Wait, re-reading, the answer is C."), "C");
  EXPECT_EQ(x("Answer: B. Hmm, actually the answer is E."), std::nullopt);  // last is out of range
}

TEST(ExtractChoice, OutOfRangeLetter) {
  EXPECT_EQ(x("<answer>F</answer>"), std::nullopt);
  EXPECT_EQ(x("The answer is G"), std::nullopt);
  EXPECT_EQ(x("(F)"), std::nullopt);
  EXPECT_EQ(x("B", {}), std::nullopt);
}

TEST(ExtractChoice, EmptyAndAmbiguous) {
  EXPECT_EQ(x(""), std::nullopt);
  EXPECT_EQ(x("   \n"), std::nullopt);
  EXPECT_EQ(x("A or B"), std::nullopt);
  EXPECT_EQ(x("The answer is A or B"), std::nullopt);
  EXPECT_EQ(x("The answer is A/B"), std::nullopt);
  EXPECT_EQ(x("The answer is A or B. Final answer: B"), "B");
}

TEST(ExtractChoice, LongReplyFinishes) {
  // Functional check that a 1 MB reply is handled (no timing assertion): adversarial
  // repetitions of partial patterns, then the answer at the end.
  std::string big;
  while (big.size() < (1u << 20)) big += "<answer> answer is ** ( $ \\boxed{ option: choice = ";
  EXPECT_EQ(x(big), std::nullopt);
  std::string tail = big + "<answer>B</answer>";
  EXPECT_EQ(x(tail), "B");
  std::string opens(1u << 20, '<');
  EXPECT_EQ(x(opens + "answer>C</answer>"), "C");
  std::string stars(1u << 20, '*');
  EXPECT_EQ(x(stars), std::nullopt);
}

TEST(ExtractChoice, ArbitraryBytesDoNotCrash) {
  std::mt19937_64 gen(12345);
  const std::string alphabet = "<>/answerAaBbCc*()$\\{}: \n.-isoptn\x80\xE2\x99";
  for (int i = 0; i < 2000; ++i) {
    std::string s(static_cast<size_t>(gen() % 64), ' ');
    for (char& c : s) c = (gen() % 4 == 0) ? static_cast<char>(gen() % 256) : alphabet[gen() % alphabet.size()];
    const auto r = x(s);
    if (r) {
      ASSERT_EQ(r->size(), 1u);
      EXPECT_TRUE((*r)[0] >= 'A' && (*r)[0] <= 'D') << s;
    }
  }
}

}  // namespace
}  // namespace nf
