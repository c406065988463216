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

// Tester finding (2026-12-01): a reply cut off by max_tokens in the middle of a list
// ("ANSWER: D and", finish_reason length) was scored as D, and "A and/or B" and two answer
// tags joined by "or" were scored as one of the two options.
namespace nf {
namespace {

TEST(RegressionMultipleLetters, AnUnfinishedListIsNotAnAnswer) {
  for (const char* reply : {"ANSWER: D and", "ANSWER: C and ", "ANSWER: A,", "The answer is B or", "Answer: B, \n",
                            "ANSWER: A and/or", "The answer is **C** and", "Answer: A /"}) {
    EXPECT_EQ(extract_choice(reply, kAD), std::nullopt) << reply;
  }
  // A finished statement followed by a word that merely starts like a joiner still parses.
  EXPECT_EQ(extract_choice("Answer: B, because of the rash", kAD), "B");
  EXPECT_EQ(extract_choice("The answer is D andrology-wise", kAD), "D");
  EXPECT_EQ(extract_choice("The answer is C; I checked", kAD), "C");
  EXPECT_EQ(extract_choice("The answer is C;", kAD), "C");  // ';' ends a clause, it does not open a list
}

TEST(RegressionMultipleLetters, AndOrAndJoinedAnswerTagsNameTwoOptions) {
  for (const char* reply : {"ANSWER: A and/or B", "The answer is A AND/OR C", "<answer>A</answer> or <answer>B</answer>",
                            "<answer>A</answer>, <answer>C</answer>", "<answer>A</answer><answer>D</answer>",
                            "\\boxed{A} or \\boxed{B}", "\\boxed{A}, \\boxed{C}"}) {
    EXPECT_EQ(extract_choice(reply, kAD), std::nullopt) << reply;
  }
  // Tags separated by prose are a revision: the last decides (the answer contract).
  EXPECT_EQ(extract_choice("<answer>A</answer> Wait, that is wrong. <answer>B</answer>", kAD), "B");
  EXPECT_EQ(extract_choice("<answer>B</answer> or <answer>B</answer>", kAD), "B");  // the same option twice
  EXPECT_EQ(extract_choice("\\boxed{A} is tempting, but \\boxed{C}", kAD), "C");
}

TEST(RegressionMultipleLetters, TruncatedUnfinishedListIsAParseErrorSayingSo) {
  RenderedMcq item;
  item.item_id = "q1";
  item.question = "Which?";
  for (const char* l : {"A", "B", "C", "D"}) item.options.push_back({l, std::string("option ") + l});
  item.answer = "D";
  item.source_index = {0, 1, 2, 3};
  ChatResponse r;
  r.kind = ResponseKind::kOk;
  r.content = "ANSWER: D and";
  r.finish_reason = "length";
  const McqScore s = score_mcq(item, r);
  EXPECT_EQ(s.status, DrawStatus::kParseError);
  EXPECT_TRUE(s.outcomes.empty());
  EXPECT_NE(s.error.find("truncated"), std::string::npos) << s.error;
  EXPECT_NE(s.error.find("single answer"), std::string::npos) << s.error;
}

}  // namespace
}  // namespace nf

namespace nf {
namespace {

TEST(RegressionMultipleLetters, JoinedAnswerTagsOfOptionTextAreNotAnAnswer) {
  RenderedMcq item;
  item.item_id = "q1";
  item.question = "Which?";
  for (const char* l : {"A", "B", "C", "D"}) item.options.push_back({l, std::string("option ") + l});
  item.answer = "B";
  item.source_index = {0, 1, 2, 3};
  ChatResponse r;
  r.kind = ResponseKind::kOk;
  r.content = "<answer>option A</answer> or <answer>option B</answer>";
  EXPECT_EQ(score_mcq(item, r).status, DrawStatus::kParseError);
  r.content = "<answer>option B</answer>";  // the fallback itself still works
  const McqScore s = score_mcq(item, r);
  ASSERT_EQ(s.status, DrawStatus::kOk);
  EXPECT_EQ(s.outcomes.at(0).value, 1.0);
}

}  // namespace
}  // namespace nf

// Tester s11 finding 1: an aside naming another option ("A (or maybe C)"), a hedged list
// member after a joiner ("A; also B"), and a second answer tag cut off by max_tokens
// ("<answer>A</answer> and also <ans") were scored as A.
namespace nf {
namespace {

TEST(RegressionMultipleLetters, HedgedAlternativesAndCutOffSecondTagsAreNotAnAnswer) {
  for (const char* reply :
       {"ANSWER: A (or maybe C)", "ANSWER: A; also B", "ANSWER: A [possibly B]", "The answer is A, or possibly C",
        "Answer: B, maybe D", "ANSWER: A or maybe C", "ANSWER: D and also B", "ANSWER: D and also", "ANSWER: A; also",
        "<answer>A</answer> and also <ans", "<answer>A</answer> or <answer>B", "<answer>A</answer>, <",
        "<answer>A</answer> and", "<answer>A</answer> or maybe"}) {
    EXPECT_EQ(extract_choice(reply, kAD), std::nullopt) << reply;
  }
  // Still one answer: prose after it, a parenthetical that names no other option, a new
  // sentence, hedge-like words that are not hedges, a complete tag followed by prose.
  EXPECT_EQ(extract_choice("ANSWER: A (the most likely)", kAD), "A");
  EXPECT_EQ(extract_choice("ANSWER: A (also called the first option)", kAD), "A");
  EXPECT_EQ(extract_choice("Answer: B, also known as the classic sign", kAD), "B");
  EXPECT_EQ(extract_choice("The answer is B. Also, C is wrong because ...", kAD), "B");
  EXPECT_EQ(extract_choice("The answer is C; order matters", kAD), "C");
  EXPECT_EQ(extract_choice("<answer>A</answer> because the rash fits.", kAD), "A");
  EXPECT_EQ(extract_choice("<answer>A</answer>", kAD), "A");
  EXPECT_EQ(extract_choice("<answer>A</answer> Wait, that is wrong. <answer>B</answer>", kAD), "B");
}

TEST(RegressionMultipleLetters, CutOffSecondTagUnderMaxTokensSaysTruncated) {
  RenderedMcq item;
  item.item_id = "q1";
  item.question = "Which?";
  for (const char* l : {"A", "B", "C", "D"}) item.options.push_back({l, std::string("option ") + l});
  item.answer = "A";
  item.source_index = {0, 1, 2, 3};
  ChatResponse r;
  r.kind = ResponseKind::kOk;
  r.content = "<answer>A</answer> and also <ans";
  r.finish_reason = "length";
  const McqScore s = score_mcq(item, r);
  EXPECT_EQ(s.status, DrawStatus::kParseError);
  EXPECT_TRUE(s.outcomes.empty());
  EXPECT_NE(s.error.find("truncated"), std::string::npos) << s.error;
}

}  // namespace
}  // namespace nf
