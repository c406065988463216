// The open-ended chat task (task/chat_task.h; seed 004 §2.3).
#include "task/chat_task.h"

#include <gtest/gtest.h>

namespace nf {
namespace {

std::vector<ChatItem> sample_items() {
  ChatItem a;
  a.id = "c1";
  a.cluster = "k";
  a.messages = {{"system", "Be careful."}, {"user", "I have a rash. It itches. It is spreading. What cream?"}};
  a.meta = {{"theme", "derm"}};
  ChatItem b;
  b.id = "c2";
  b.messages = {{"user", "Is ibuprofen safe with my tablets?"}};
  b.response = "released answer";
  return {a, b};
}

DrawContext context() {
  DrawContext ctx;
  ctx.key = {"subj", "c1", "truncate_last_turn", "default", 2};
  ctx.config.temperature = 0.7;
  ctx.config.top_p = 0.9;
  ctx.config.max_tokens = 64;
  ctx.model = "sim-chat";
  ctx.seed = 12345;
  ctx.extra_body = {{"vendor_flag", true}};
  return ctx;
}

TEST(ChatTask, ItemsCarryMessagesMetaAndClusters) {
  ChatTask task(sample_items());
  EXPECT_EQ(task.name(), "chat");
  ASSERT_EQ(task.items().size(), 2u);
  const TaskItem& a = task.items()[0];
  EXPECT_EQ(a.id, "c1");
  EXPECT_EQ(a.cluster, "k");
  ASSERT_EQ(a.data["messages"].size(), 2u);
  EXPECT_EQ(a.data["messages"][1]["role"], "user");
  EXPECT_EQ(a.data["meta"]["theme"], "derm");
  EXPECT_FALSE(a.data.contains("released_response"));
  EXPECT_EQ(task.items()[1].cluster, "c2");  // default: the id
  EXPECT_EQ(task.items()[1].data["released_response"], "released answer");
}

TEST(ChatTask, RunSendsTheTruncatedConversationWithTheConfig) {
  ChatTask task(sample_items());
  ASSERT_TRUE(task.prepare({"none", "truncate_last_turn"}, 1).ok());
  ChatRequest seen;
  int calls = 0;
  auto call = [&](const ChatRequest& r) {
    seen = r;
    ++calls;
    ChatResponse resp;
    resp.content = "Could you tell me more about the rash?";
    resp.finish_reason = "stop";
    return resp;
  };
  const auto res = task.run(0, "truncate_last_turn", context(), call);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(res.calls, 1);
  EXPECT_EQ(res.status, DrawStatus::kOk);
  EXPECT_TRUE(res.outcomes.empty());  // judges score chat draws later
  ASSERT_EQ(seen.messages.size(), 2u);
  EXPECT_EQ(seen.messages[0].content, "Be careful.");
  EXPECT_EQ(seen.messages[1].content, "I have a rash. It itches.");  // 4 sentences -> keep 2
  EXPECT_EQ(seen.model, "sim-chat");
  EXPECT_DOUBLE_EQ(seen.temperature, 0.7);
  EXPECT_DOUBLE_EQ(seen.top_p, 0.9);
  EXPECT_EQ(seen.max_tokens, 64);
  ASSERT_TRUE(seen.seed.has_value());
  EXPECT_EQ(*seen.seed, 12345);
  // The stored request holds the messages actually sent (judges read them).
  ASSERT_TRUE(res.request.contains("messages"));
  EXPECT_EQ(res.request["messages"][1]["content"], "I have a rash. It itches.");
  EXPECT_EQ(res.request["vendor_flag"], true);
  EXPECT_EQ(res.detail["condition"], "truncate_last_turn");
  EXPECT_EQ(res.detail["cut"], "sentence_boundary");
  EXPECT_EQ(res.detail["trunc_form"], "complete");
  EXPECT_EQ(res.detail["sentences_total"], 4);
  EXPECT_EQ(res.detail["sentences_kept"], 2);
  EXPECT_EQ(res.detail["removed_chars"], 28);  // "It is spreading. What cream?"
  EXPECT_EQ(res.response.content, "Could you tell me more about the rash?");

  const auto plain = task.run(0, "none", context(), call);
  EXPECT_EQ(seen.messages[1].content, "I have a rash. It itches. It is spreading. What cream?");
  EXPECT_EQ(plain.detail["condition"], "none");
  EXPECT_EQ(plain.status, DrawStatus::kOk);
}

TEST(ChatTask, StatusFollowsTheResponseNeverAnOutcome) {
  ChatTask task(sample_items());
  ASSERT_TRUE(task.prepare({"none"}, 1).ok());
  auto with = [&](ChatResponse resp) {
    return task.run(1, "none", context(), [&](const ChatRequest&) { return resp; });
  };
  ChatResponse api;
  api.kind = ResponseKind::kApiError;
  api.error = "HTTP 500";
  auto r = with(api);
  EXPECT_EQ(r.status, DrawStatus::kApiError);
  EXPECT_EQ(r.error, "HTTP 500");
  EXPECT_TRUE(r.outcomes.empty());

  ChatResponse refused;
  refused.kind = ResponseKind::kRefused;
  r = with(refused);
  EXPECT_EQ(r.status, DrawStatus::kRefused);
  EXPECT_EQ(r.error, "refused");

  ChatResponse empty;
  empty.content = "  \n";
  r = with(empty);
  EXPECT_EQ(r.status, DrawStatus::kParseError);
  EXPECT_EQ(r.error, "empty reply");

  ChatResponse cut;
  cut.content = "Take two tablets and";
  cut.finish_reason = "length";
  r = with(cut);
  EXPECT_EQ(r.status, DrawStatus::kOk);  // a reply cut by max_tokens is still an answer
  EXPECT_EQ(r.response.finish_reason, "length");
}

TEST(ChatTask, PrepareRejectsItemsTheConditionCannotTruncateBeforeAnyCall) {
  auto items = sample_items();
  ChatItem blank;
  blank.id = "c3";
  blank.messages = {{"user", "   "}};
  items.push_back(blank);
  ChatTask task(items);
  auto st = task.prepare({"none", "truncate_last_turn"}, 1);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("item c3, condition truncate_last_turn"), std::string::npos) << st.message();
  // The same item is fine under none only.
  EXPECT_TRUE(task.prepare({"none"}, 1).ok());

  auto unknown = task.prepare({"truncate_last_trun"}, 1);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.message().find("did you mean 'truncate_last_turn'"), std::string::npos) << unknown.message();
}

TEST(ChatTask, UnpreparedConditionIsNeverAnOutcome) {
  ChatTask task(sample_items());
  ASSERT_TRUE(task.prepare({"none"}, 1).ok());
  int calls = 0;
  auto r = task.run(0, "truncate_last_turn", context(), [&](const ChatRequest&) {
    ++calls;
    return ChatResponse{};
  });
  EXPECT_EQ(calls, 0);
  EXPECT_NE(r.status, DrawStatus::kOk);
  EXPECT_TRUE(r.outcomes.empty());
}

}  // namespace
}  // namespace nf
