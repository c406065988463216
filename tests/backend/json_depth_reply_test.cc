// JSON nesting depth on HTTP bodies (issue 32 item 6): files were checked against
// util/json_depth.h's limit, but a model server's reply and a serve-sim request body were
// parsed without it, so a hostile server or client could crash the process by recursion
// (copying or dumping a value nested ~100,000 deep). A reply nested too deep is now a
// malformed body (an api_error naming the limit, never an answer); a request too deep gets
// HTTP 400.
#include <gtest/gtest.h>
#include <httplib.h>

#include <string>
#include <thread>

#include "backend/anthropic.h"
#include "backend/openai.h"
#include "sim/sim.h"
#include "sim/sim_server.h"
#include "sim/sim_test_util.h"
#include "util/json_depth.h"

namespace nf {
namespace {

std::string nested(size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

// A well-formed chat.completion whose ignored field `x` holds `depth` nested arrays.
std::string openai_reply(size_t depth) {
  return R"({"model":"m","x":)" + nested(depth) +
         R"(,"choices":[{"message":{"role":"assistant","content":"B"},"finish_reason":"stop"}]})";
}

TEST(ReplyDepth, OpenAiReplyNestedTooDeepIsMalformedNamingTheLimit) {
  ChatResponse ok;
  ASSERT_TRUE(parse_openai_body(openai_reply(kMaxJsonDepth - 1), ok));  // the top object is level 1
  EXPECT_EQ(ok.content, "B");
  for (size_t depth : {kMaxJsonDepth, size_t{5000}}) {
    SCOPED_TRACE(depth);
    ChatResponse r;
    EXPECT_FALSE(parse_openai_body(openai_reply(depth), r));  // the SAX path stops, the DOM path refuses
    EXPECT_NE(r.error.find("reply: JSON nested deeper than 512 levels"), std::string::npos) << r.error;
    ChatResponse d;
    EXPECT_FALSE(parse_openai_body_dom(openai_reply(depth), d));
    EXPECT_EQ(parse_openai_body_sax(openai_reply(depth), d), std::nullopt);
  }
}

TEST(ReplyDepth, AnthropicReplyNestedTooDeepIsMalformed) {
  ChatResponse ok;
  ASSERT_TRUE(parse_anthropic_body(R"({"content":[{"type":"text","text":"A"}],"x":)" + nested(10) + "}", ok));
  ChatResponse r;
  EXPECT_FALSE(parse_anthropic_body(R"({"content":[{"type":"text","text":"A"}],"x":)" + nested(5000) + "}", r));
  EXPECT_NE(r.error.find("nested deeper than 512 levels"), std::string::npos) << r.error;
}

// End to end: a server whose every reply is nested too deep gives an api_error draw that says
// why, with no content (never scored).
TEST(ReplyDepth, AServerReplyingTooDeepGivesAnApiErrorNotAnAnswer) {
  httplib::Server server;
  server.Post("/v1/chat/completions", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(openai_reply(100000), "application/json");
  });
  const int port = server.bind_to_any_port("127.0.0.1");
  std::thread t([&] { server.listen_after_bind(); });
  while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  OpenAiOptions o;
  o.base_url = "http://127.0.0.1:" + std::to_string(port) + "/v1";
  o.max_retries = 0;
  ChatResponse r;
  {
    OpenAiBackend b(o);
    r = b.complete(testing::mcq_request(testing::item_bank()[0].first, testing::item_bank()[0].second, 0.0, 1));
  }
  server.stop();
  t.join();
  EXPECT_EQ(r.kind, ResponseKind::kApiError);
  EXPECT_EQ(r.content, "");
  EXPECT_NE(r.error.find("malformed response body: reply: JSON nested deeper than 512 levels"), std::string::npos)
      << r.error;
}

TEST(RequestDepth, ServeSimAnswersARequestNestedTooDeepWith400) {
  auto server = SimServer::start(SimParams{}, 0);
  ASSERT_TRUE(server.ok()) << server.status().to_string();
  httplib::Client c("127.0.0.1", (*server)->port());
  const std::string body = R"({"model":"sim","messages":[{"role":"user","content":"hi"}],"x":)" + nested(100000) + "}";
  auto res = c.Post("/v1/chat/completions", body, "application/json");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 400);
  EXPECT_NE(res->body.find("request body: JSON nested deeper than 512 levels"), std::string::npos) << res->body;
  // The server still answers a normal request afterwards.
  auto ok = c.Post("/v1/chat/completions", R"({"model":"sim","messages":[{"role":"user","content":"hi"}]})",
                   "application/json");
  ASSERT_TRUE(ok);
  EXPECT_NE(ok->status, 0);
  (*server)->stop();
}

}  // namespace
}  // namespace nf
