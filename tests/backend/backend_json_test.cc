// ChatRequest <-> OpenAI request body.
#include <gtest/gtest.h>

#include "backend/backend.h"

namespace nf {
namespace {

ChatRequest sample() {
  ChatRequest r;
  r.model = "m-1";
  r.messages = {{"system", "be brief"}, {"user", "hello\nthere"}};
  r.temperature = 0.7;
  r.top_p = 0.9;
  r.seed = 42;
  r.max_tokens = 64;
  r.extra_body = {{"logprobs", true}, {"stop", {"</answer>"}}};
  return r;
}

TEST(ChatRequestJson, RoundTrips) {
  const ChatRequest r = sample();
  const nlohmann::json j = r.to_openai_json();
  EXPECT_EQ(j["model"], "m-1");
  EXPECT_EQ(j["messages"][1]["content"], "hello\nthere");
  EXPECT_EQ(j["seed"], 42);
  EXPECT_EQ(j["logprobs"], true);  // extra_body merged at top level
  auto back = ChatRequest::from_openai_json(j);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->model, r.model);
  ASSERT_EQ(back->messages.size(), 2u);
  EXPECT_EQ(back->messages[0].role, "system");
  EXPECT_EQ(back->messages[1].content, "hello\nthere");
  EXPECT_DOUBLE_EQ(back->temperature, 0.7);
  EXPECT_DOUBLE_EQ(back->top_p, 0.9);
  ASSERT_TRUE(back->seed.has_value());
  EXPECT_EQ(*back->seed, 42);
  EXPECT_EQ(back->max_tokens, 64);
  EXPECT_EQ(back->extra_body, r.extra_body);
  EXPECT_EQ(back->to_openai_json(), j);
}

TEST(ChatRequestJson, NoSeedMeansNoSeedField) {
  ChatRequest r = sample();
  r.seed.reset();
  EXPECT_FALSE(r.to_openai_json().contains("seed"));
  auto back = ChatRequest::from_openai_json(r.to_openai_json());
  ASSERT_TRUE(back.ok());
  EXPECT_FALSE(back->seed.has_value());
}

TEST(ChatRequestJson, ContentPartsAndNullAreAccepted) {
  nlohmann::json j = {{"model", "m"},
                      {"messages",
                       {{{"role", "user"}, {"content", {{{"type", "text"}, {"text", "ab"}}, {{"type", "text"}, {"text", "cd"}}}}},
                        {{"role", "assistant"}, {"content", nullptr}}}}};
  auto r = ChatRequest::from_openai_json(j);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->messages[0].content, "abcd");
  EXPECT_EQ(r->messages[1].content, "");
}

TEST(ChatRequestJson, RejectionsNameTheField) {
  struct Case {
    nlohmann::json body;
    std::string field;
  };
  const nlohmann::json msgs = {{{"role", "user"}, {"content", "x"}}};
  const std::vector<Case> cases = {
      {nlohmann::json::array(), "object"},
      {{{"messages", msgs}}, "'model'"},
      {{{"model", "m"}}, "'messages'"},
      {{{"model", 3}, {"messages", msgs}}, "'model'"},
      {{{"model", "m"}, {"messages", "hi"}}, "'messages'"},
      {{{"model", "m"}, {"messages", {{{"content", "x"}}}}}, "'messages[0].role'"},
      {{{"model", "m"}, {"messages", {{{"role", "user"}, {"content", 5}}}}}, "'messages[0].content'"},
      {{{"model", "m"}, {"messages", msgs}, {"temperature", "hot"}}, "'temperature'"},
      {{{"model", "m"}, {"messages", msgs}, {"temperature", -0.1}}, "'temperature'"},
      {{{"model", "m"}, {"messages", msgs}, {"top_p", 0.0}}, "'top_p'"},
      {{{"model", "m"}, {"messages", msgs}, {"top_p", 1.5}}, "'top_p'"},
      {{{"model", "m"}, {"messages", msgs}, {"seed", 1.5}}, "'seed'"},
      {{{"model", "m"}, {"messages", msgs}, {"max_tokens", 0}}, "'max_tokens'"},
  };
  for (const auto& c : cases) {
    auto r = ChatRequest::from_openai_json(c.body);
    ASSERT_FALSE(r.ok()) << c.body.dump();
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(c.field), std::string::npos) << r.status().message();
  }
}

}  // namespace
}  // namespace nf
