// Tests of prompt rendering and scoring (task/mcq.h render_mcq_prompt, score_mcq).
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "task/mcq.h"

namespace nf {
namespace {

McqItem make_item() {
  McqItem item;
  item.id = "q7";
  item.cluster = "q7";
  item.question = "A 30-year-old woman has a temperature of 38.5°C. Which of the following is the diagnosis?";
  item.options = {{"A", "Influenza"}, {"B", "Sepsis"}, {"C", "Malaria"}, {"D", "Dengue"}};
  item.answer = "B";
  return item;
}

RenderedMcq rendered(std::string_view condition, uint64_t seed = 1618) {
  auto r = apply_mcq_condition(make_item(), condition, seed);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return *r;
}

ChatResponse ok_reply(std::string content, std::string finish = "stop") {
  ChatResponse r;
  r.kind = ResponseKind::kOk;
  r.content = std::move(content);
  r.finish_reason = std::move(finish);
  return r;
}

const Outcome* find_outcome(const McqScore& s, std::string_view name) {
  for (const auto& o : s.outcomes) {
    if (o.name == name) return &o;
  }
  return nullptr;
}

TEST(RenderMcqPrompt, DefaultTemplateLayout) {
  const RenderedMcq item = rendered("none");
  auto msgs = render_mcq_prompt(item, "default");
  ASSERT_TRUE(msgs.ok());
  ASSERT_EQ(msgs->size(), 1u);
  EXPECT_EQ((*msgs)[0].role, "user");
  EXPECT_EQ((*msgs)[0].content,
            item.question +
                "\n\nA. Influenza\nB. Sepsis\nC. Malaria\nD. Dengue\n\n"
                "Think through the question briefly, then give your final answer as <answer>X</answer>, "
                "where X is the letter of one option.");
}

TEST(RenderMcqPrompt, DirectTemplateAndShownOrder) {
  const RenderedMcq item = rendered("remove_answer");
  auto msgs = render_mcq_prompt(item, "direct");
  ASSERT_TRUE(msgs.ok());
  ASSERT_EQ(msgs->size(), 1u);
  const std::string expect = item.question + "\n\nA. Influenza\nB. Malaria\nC. Dengue\nD. " +
                             std::string(kNoneCorrectText) +
                             "\n\nReply with only <answer>X</answer>, where X is the letter of the best option.";
  EXPECT_EQ((*msgs)[0].content, expect);
}

TEST(RenderMcqPrompt, UnknownTemplate) {
  auto msgs = render_mcq_prompt(rendered("none"), "defualt");
  ASSERT_FALSE(msgs.ok());
  EXPECT_EQ(msgs.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(msgs.status().message().find("did you mean 'default'"), std::string::npos);
  EXPECT_EQ(known_mcq_templates(), (std::vector<std::string>{"default", "direct", "minimal", "role-framed", "detailed",
                                                              "step-by-step"}));
}

// The template axis of seed 003 §3: every named template keeps the answer contract, and
// role-framed puts the role in a system message before the question.
TEST(RenderMcqPrompt, EveryTemplateKeepsTheAnswerContract) {
  for (const auto& t : known_mcq_templates()) {
    auto msgs = render_mcq_prompt(rendered("none"), t);
    ASSERT_TRUE(msgs.ok()) << t;
    EXPECT_NE(msgs->back().content.find("<answer>X</answer>"), std::string::npos) << t;
    EXPECT_EQ(msgs->back().role, "user");
    EXPECT_EQ(msgs->size(), t == "role-framed" ? 2u : 1u) << t;
  }
  auto role = render_mcq_prompt(rendered("none"), "role-framed");
  EXPECT_EQ((*role)[0].role, "system");
  EXPECT_NE((*role)[0].content.find("physician"), std::string::npos);
}

TEST(ScoreMcq, CorrectAndWrong) {
  const RenderedMcq item = rendered("none");
  McqScore s = score_mcq(item, ok_reply("Sepsis fits. <answer>B</answer>"));
  EXPECT_EQ(s.status, DrawStatus::kOk);
  ASSERT_EQ(s.outcomes.size(), 2u);
  EXPECT_EQ(find_outcome(s, "correct")->value, 1.0);
  EXPECT_EQ(find_outcome(s, "correct")->label, "1");
  EXPECT_EQ(find_outcome(s, "choice")->value, 1.0);
  EXPECT_EQ(find_outcome(s, "choice")->label, "B");
  EXPECT_TRUE(s.error.empty());

  s = score_mcq(item, ok_reply("<answer>d</answer>"));
  EXPECT_EQ(s.status, DrawStatus::kOk);
  EXPECT_EQ(find_outcome(s, "correct")->value, 0.0);
  EXPECT_EQ(find_outcome(s, "correct")->label, "0");
  EXPECT_EQ(find_outcome(s, "choice")->value, 3.0);
  EXPECT_EQ(find_outcome(s, "choice")->label, "D");
}

TEST(ScoreMcq, ApiErrorIsNeverScored) {
  ChatResponse r;
  r.kind = ResponseKind::kApiError;
  r.error = "HTTP 503 after 3 attempts";
  r.content = "<answer>B</answer>";  // must be ignored
  const McqScore s = score_mcq(rendered("none"), r);
  EXPECT_EQ(s.status, DrawStatus::kApiError);
  EXPECT_EQ(s.error, "HTTP 503 after 3 attempts");
  EXPECT_TRUE(s.outcomes.empty());
}

TEST(ScoreMcq, RefusedPassesThrough) {
  ChatResponse r;
  r.kind = ResponseKind::kRefused;
  r.error = "content_filter";
  const McqScore s = score_mcq(rendered("none"), r);
  EXPECT_EQ(s.status, DrawStatus::kRefused);
  EXPECT_EQ(s.error, "content_filter");
  EXPECT_TRUE(s.outcomes.empty());
}

TEST(ScoreMcq, ParseError) {
  const std::string reply = "I cannot determine this from the information given, and " + std::string(100, 'z');
  const McqScore s = score_mcq(rendered("none"), ok_reply(reply));
  EXPECT_EQ(s.status, DrawStatus::kParseError);
  EXPECT_TRUE(s.outcomes.empty());
  EXPECT_EQ(s.error, "no single answer in reply (no option letter, or several options named): " + reply.substr(0, 80));
}

TEST(ScoreMcq, TruncatedReplyIsParseErrorMentioningTruncation) {
  const McqScore s = score_mcq(rendered("none"), ok_reply("Let me think step by step about the fever", "length"));
  EXPECT_EQ(s.status, DrawStatus::kParseError);
  EXPECT_NE(s.error.find("truncated"), std::string::npos) << s.error;
  // A truncated reply that did give a letter is still scored.
  const McqScore s2 = score_mcq(rendered("none"), ok_reply("<answer>B</answer> and more", "length"));
  EXPECT_EQ(s2.status, DrawStatus::kOk);
}

TEST(ScoreMcq, ParseErrorPrefixDoesNotSplitUtf8) {
  std::string reply(79, 'x');
  reply += "\xC2\xB0 tail";  // a 2-byte '°' straddling byte 80
  const McqScore s = score_mcq(rendered("none"), ok_reply(reply));
  ASSERT_EQ(s.status, DrawStatus::kParseError);
  EXPECT_EQ(s.error, "no single answer in reply (no option letter, or several options named): " + std::string(79, 'x'));
}

TEST(ScoreMcq, ShuffleChoiceMapsBackToOriginalOption) {
  // Find a seed whose permutation moves every option, so the mapping is exercised.
  for (uint64_t seed = 1; seed < 200; ++seed) {
    const RenderedMcq item = rendered("shuffle", seed);
    for (size_t shown = 0; shown < item.options.size(); ++shown) {
      const std::string letter = item.options[shown].letter;
      const McqScore s = score_mcq(item, ok_reply("<answer>" + letter + "</answer>"));
      ASSERT_EQ(s.status, DrawStatus::kOk);
      const int src = item.source_index[shown];
      EXPECT_EQ(find_outcome(s, "choice")->value, static_cast<double>(src));
      // The label is the original letter, whose original text is the text shown.
      const std::string original = find_outcome(s, "choice")->label;
      const McqItem base = make_item();
      ASSERT_EQ(original.size(), 1u);
      EXPECT_EQ(base.options[static_cast<size_t>(original[0] - 'A')].text, item.options[shown].text);
      EXPECT_EQ(find_outcome(s, "correct")->value, original == base.answer ? 1.0 : 0.0);
    }
  }
}

TEST(ScoreMcq, AppendedOptionIsCorrectUnderRemovals) {
  for (std::string_view cond : {"remove_answer", "remove_context"}) {
    const RenderedMcq item = rendered(cond);
    const std::string last = item.options.back().letter;
    McqScore s = score_mcq(item, ok_reply("<answer>" + last + "</answer>"));
    ASSERT_EQ(s.status, DrawStatus::kOk) << cond;
    EXPECT_EQ(find_outcome(s, "correct")->value, 1.0) << cond;
    EXPECT_EQ(find_outcome(s, "choice")->value, -1.0) << cond;
    EXPECT_EQ(find_outcome(s, "choice")->label, "appended") << cond;
    // A concrete option is an inappropriate-confident answer: wrong.
    s = score_mcq(item, ok_reply("<answer>A</answer>"));
    EXPECT_EQ(find_outcome(s, "correct")->value, 0.0) << cond;
    EXPECT_EQ(find_outcome(s, "choice")->label, "A") << cond;
  }
  // Under remove_answer the gold B is gone: shown C is original D.
  const McqScore s = score_mcq(rendered("remove_answer"), ok_reply("C"));
  EXPECT_EQ(find_outcome(s, "choice")->value, 3.0);
  EXPECT_EQ(find_outcome(s, "choice")->label, "D");
}

TEST(ScoreMcq, AnswerTextFallback) {
  // seed 004 §2.5: exact option-letter matching with answer-text fallback.
  const RenderedMcq item = rendered("none");
  McqScore s = score_mcq(item, ok_reply("  sepsis.\n"));
  ASSERT_EQ(s.status, DrawStatus::kOk);
  EXPECT_EQ(find_outcome(s, "correct")->value, 1.0);
  const RenderedMcq ctx = rendered("remove_context");
  s = score_mcq(ctx, ok_reply("<answer>" + std::string(kNotEnoughInfoText) + "</answer>"));
  ASSERT_EQ(s.status, DrawStatus::kOk);
  EXPECT_EQ(find_outcome(s, "choice")->label, "appended");
  // Text that merely contains an option is not matched.
  s = score_mcq(item, ok_reply("Probably sepsis or malaria"));
  EXPECT_EQ(s.status, DrawStatus::kParseError);
}

TEST(ScoreMcq, HandBuiltItemWithoutSourceLetters) {
  RenderedMcq item;
  item.item_id = "h";
  item.condition = "none";
  item.question = "Q?";
  item.options = {{"A", "x"}, {"B", "y"}};
  item.answer = "B";
  item.source_index = {1, 0};
  const McqScore s = score_mcq(item, ok_reply("A"));
  ASSERT_EQ(s.status, DrawStatus::kOk);
  EXPECT_EQ(find_outcome(s, "choice")->value, 1.0);
  EXPECT_EQ(find_outcome(s, "choice")->label, "B");
  EXPECT_EQ(find_outcome(s, "correct")->value, 0.0);
}

}  // namespace
}  // namespace nf
