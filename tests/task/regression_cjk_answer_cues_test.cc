// Fault (issue 13 item 3): full-width letters and the answer cues of Chinese, Japanese and
// Korean replies were parse errors (lost data, never scored wrong). Full-width ASCII
// (U+FF01-FF5E) is folded before matching, and a CJK cue word beats earlier mentions of
// other letters.
#include <gtest/gtest.h>

#include "task/mcq.h"

namespace nf {
namespace {

const std::vector<std::string> kAD = {"A", "B", "C", "D"};

TEST(RegressionCjkAnswerCues, TheIssueCases) {
  EXPECT_EQ(extract_choice("答案：Ｃ", kAD), "C");
  EXPECT_EQ(extract_choice("我選擇 D", kAD), "D");
  EXPECT_EQ(extract_choice("正確答案為（Ｂ）", kAD), "B");
  EXPECT_EQ(extract_choice("정답은 A입니다.", kAD), "A");
}

TEST(RegressionCjkAnswerCues, MoreForms) {
  EXPECT_EQ(extract_choice("正确答案是C。", kAD), "C");
  EXPECT_EQ(extract_choice("答案應該是 B", kAD), "B");
  EXPECT_EQ(extract_choice("正解は B です。", kAD), "B");
  EXPECT_EQ(extract_choice("答え：Ｄ", kAD), "D");
  EXPECT_EQ(extract_choice("정답: C", kAD), "C");
  EXPECT_EQ(extract_choice("答案是【A】", kAD), "A");
  EXPECT_EQ(extract_choice("Ａｎｓｗｅｒ： Ｂ", kAD), "B");          // full-width English
  EXPECT_EQ(extract_choice("<answer>Ｃ</answer>", kAD), "C");         // full-width in the tag
  EXPECT_EQ(extract_choice("**Ｄ**", kAD), "D");
}

TEST(RegressionCjkAnswerCues, ACueWordBeatsEarlierLetters) {
  EXPECT_EQ(extract_choice("選項A和B都不對，(C)也不完整。答案：D", kAD), "D");
  EXPECT_EQ(extract_choice("A看起來合理，但正確答案為（Ｂ）", kAD), "B");
  EXPECT_EQ(extract_choice("The answer is A... 不對，答案是C", kAD), "C");  // the later statement
}

TEST(RegressionCjkAnswerCues, ListsAndOutOfRangeLettersAreNotAnswers) {
  EXPECT_EQ(extract_choice("答案：A和C", kAD), std::nullopt);
  EXPECT_EQ(extract_choice("答案：A、C", kAD), std::nullopt);
  EXPECT_EQ(extract_choice("정답은 A 또는 B", kAD), std::nullopt);
  EXPECT_EQ(extract_choice("答案：Ｅ", kAD), std::nullopt);
  EXPECT_EQ(extract_choice("答案不確定", kAD), std::nullopt);
}

}  // namespace
}  // namespace nf
