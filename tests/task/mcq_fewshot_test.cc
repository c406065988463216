// The few-shot axis (issue 11; seed 003 §3): k exemplars drawn by the study seed from a pool
// disjoint from the test items come before the question as user / assistant turns; each k
// is a prefix of a larger k, and the draw depends only on the seed.
#include <gtest/gtest.h>

#include "task/mcq_task.h"

namespace nf {
namespace {

McqItem mk(const std::string& id, const std::string& gold) {
  McqItem it;
  it.id = id;
  it.question = "Question " + id + "?";
  it.options = {{"A", "alpha " + id}, {"B", "beta " + id}, {"C", "gamma " + id}};
  it.answer = gold;
  return it;
}

std::vector<ChatMessage> sent(const McqTask& task, int k, const std::string& tpl = "default") {
  DrawContext ctx;
  ctx.key = {"s", "t0", "none", "default", 0};
  ctx.config.fewshot = k;
  ctx.config.template_name = tpl;
  std::vector<ChatMessage> got;
  task.run(0, "none", ctx, [&](const ChatRequest& r) {
    got = r.messages;
    ChatResponse resp;
    resp.kind = ResponseKind::kOk;
    resp.content = "<answer>A</answer>";
    return resp;
  });
  return got;
}

TEST(McqFewshot, ExemplarsPrecedeTheQuestionWithTheirGoldAnswers) {
  std::vector<McqItem> pool;
  for (int i = 0; i < 6; ++i) pool.push_back(mk("p" + std::to_string(i), i % 2 ? "B" : "C"));
  McqTask task({mk("t0", "A")}, pool);
  ASSERT_TRUE(task.prepare({"none"}, 42).ok());
  EXPECT_EQ(sent(task, 0).size(), 1u);
  const auto three = sent(task, 3);
  ASSERT_EQ(three.size(), 7u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(three[2 * i].role, "user");
    EXPECT_NE(three[2 * i].content.find("Question p"), std::string::npos);  // from the pool, never a test item
    EXPECT_EQ(three[2 * i + 1].role, "assistant");
    // The assistant turn answers with the exemplar's gold letter.
    const std::string q = three[2 * i].content;
    const std::string id = q.substr(q.find("Question ") + 9, 2);
    const std::string gold = id[1] % 2 ? "B" : "C";
    EXPECT_EQ(three[2 * i + 1].content, "<answer>" + gold + "</answer>");
  }
  EXPECT_NE(three.back().content.find("Question t0"), std::string::npos);
  // k = 2 is a prefix of k = 3; the same seed gives the same exemplars.
  const auto two = sent(task, 2);
  ASSERT_EQ(two.size(), 5u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(two[i].content, three[i].content);
  McqTask again({mk("t0", "A")}, pool);
  ASSERT_TRUE(again.prepare({"none"}, 42).ok());
  EXPECT_EQ(sent(again, 3)[0].content, three[0].content);
  // Role-framed keeps its system message first, once.
  const auto role = sent(task, 2, "role-framed");
  ASSERT_EQ(role.size(), 6u);
  EXPECT_EQ(role[0].role, "system");
  EXPECT_EQ(role[1].role, "user");
}

}  // namespace
}  // namespace nf
