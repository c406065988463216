// Answer classification (issue 6 item 4), logprobs per option (item 7), the Anthropic
// Messages API mapping (item 6), and serve-sim fault injection (item 10).
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <map>
#include <string>
#include <thread>

#include "backend/anthropic.h"
#include "backend/openai.h"
#include "sim/sim.h"
#include "sim/sim_server.h"
#include "sim/sim_test_util.h"

namespace nf {
namespace {

using testing::item_bank;
using testing::mcq_request;

ChatRequest simple_request() { return mcq_request(item_bank()[1].first, item_bank()[1].second, 0.0, 1); }

std::string reply(const nlohmann::json& message, const nlohmann::json& finish) {
  return nlohmann::json({{"model", "m"}, {"choices", {{{"message", message}, {"finish_reason", finish}}}}}).dump();
}

TEST(Classify, NullContentCutAtLengthIsATruncatedOkReply) {
  ChatResponse r;
  ASSERT_TRUE(parse_openai_body(reply({{"role", "assistant"}, {"content", nullptr}}, "length"), r));
  EXPECT_EQ(r.kind, ResponseKind::kOk);
  EXPECT_EQ(r.content, "");
  EXPECT_EQ(r.finish_reason, "length");
}

TEST(Classify, ContentFilterAndRefusalFieldAreRefused) {
  ChatResponse a, b;
  ASSERT_TRUE(parse_openai_body(reply({{"role", "assistant"}, {"content", "x"}}, "content_filter"), a));
  EXPECT_EQ(a.kind, ResponseKind::kRefused);
  ASSERT_TRUE(parse_openai_body(
      reply({{"role", "assistant"}, {"content", nullptr}, {"refusal", "I can't help with that."}}, "stop"), b));
  EXPECT_EQ(b.kind, ResponseKind::kRefused);
  EXPECT_NE(b.error.find("can't help"), std::string::npos);
  ChatResponse c;  // refusal: null is no refusal
  ASSERT_TRUE(parse_openai_body(reply({{"role", "assistant"}, {"content", "B"}, {"refusal", nullptr}}, "stop"), c));
  EXPECT_EQ(c.kind, ResponseKind::kOk);
  EXPECT_EQ(c.content, "B");
}

TEST(Classify, ToolCallsOnlyAndNullFinishReasonAreClassifiedNotCrashes) {
  ChatResponse a, b, c;
  const nlohmann::json tool = {{"role", "assistant"},
                               {"content", nullptr},
                               {"tool_calls", {{{"id", "c1"}, {"type", "function"}, {"function", {{"name", "f"}, {"arguments", "{}"}}}}}}};
  ASSERT_TRUE(parse_openai_body(reply(tool, "tool_calls"), a));
  EXPECT_EQ(a.kind, ResponseKind::kOk);
  EXPECT_EQ(a.content, "");
  EXPECT_EQ(a.finish_reason, "tool_calls");
  ASSERT_TRUE(parse_openai_body(reply({{"role", "assistant"}, {"content", "C"}}, nullptr), b));
  EXPECT_EQ(b.kind, ResponseKind::kOk);
  EXPECT_EQ(b.finish_reason, "");
  const nlohmann::json parts = {{"role", "assistant"},
                                {"content", {{{"type", "text"}, {"text", "Answer: "}}, {{"type", "text"}, {"text", "D"}}}}};
  ASSERT_TRUE(parse_openai_body(reply(parts, "stop"), c));
  EXPECT_EQ(c.content, "Answer: D");
}

// Tester finding (2026-12-01): a generation that ended with finish_reason "error" or
// "abort" (vLLM / SGLang abort a request so) was scored as the model's answer.
TEST(Classify, AnAbortedOrUnknownFinishIsAnApiErrorNeverAnAnswer) {
  for (const char* finish : {"error", "abort", "cancelled", "banana"}) {
    const std::string body = reply({{"role", "assistant"}, {"content", "<answer>B</answer>"}}, finish);
    ChatResponse dom;
    ASSERT_TRUE(parse_openai_body(body, dom));
    EXPECT_EQ(dom.kind, ResponseKind::kApiError) << finish;
    EXPECT_NE(dom.error.find(std::string("finish_reason '") + finish + "'"), std::string::npos) << dom.error;
    ChatResponse sax;
    ASSERT_TRUE(parse_openai_body_sax(body, sax).value_or(false));
    EXPECT_EQ(sax.kind, ResponseKind::kApiError) << finish;
    EXPECT_EQ(sax.error, dom.error);
  }
  for (const char* finish : {"stop", "length", "eos_token", "stop_sequence"}) {
    ChatResponse r;
    ASSERT_TRUE(parse_openai_body(reply({{"role", "assistant"}, {"content", "B"}}, finish), r));
    EXPECT_EQ(r.kind, ResponseKind::kOk) << finish;
  }
  ChatResponse a;
  ASSERT_TRUE(parse_anthropic_body(R"({"content":[{"type":"text","text":"<answer>A</answer>"}],"stop_reason":"overloaded"})", a));
  EXPECT_EQ(a.kind, ResponseKind::kApiError);
  EXPECT_NE(a.error.find("'overloaded'"), std::string::npos) << a.error;
}

TEST(Classify, CutOffBodiesAreMalformed) {
  const std::string full = reply({{"role", "assistant"}, {"content", "B"}}, "stop");
  for (size_t cut : {size_t{0}, size_t{1}, full.size() / 2, full.size() - 1}) {
    ChatResponse r;
    EXPECT_FALSE(parse_openai_body(full.substr(0, cut), r)) << cut;
  }
  ChatResponse r;
  EXPECT_TRUE(parse_openai_body(full, r));
}

TEST(Logprobs, SpaceVariantsMergeAndAbsentOptionsAreUnknown) {
  const nlohmann::json lp = {
      {"content",
       {{{"token", "B"},
         {"logprob", std::log(0.5)},
         {"top_logprobs",
          {{{"token", "B"}, {"logprob", std::log(0.5)}},
           {{"token", " B"}, {"logprob", std::log(0.2)}},
           {{"token", "A"}, {"logprob", std::log(0.1)}},
           {{"token", "The"}, {"logprob", std::log(0.05)}}}}}}}};
  const auto p = option_probabilities(lp, {"A", "B", "C", "D"});
  ASSERT_EQ(p.size(), 4u);
  EXPECT_NEAR(*p.at("B"), 0.7, 1e-12);
  EXPECT_NEAR(*p.at("A"), 0.1, 1e-12);
  EXPECT_FALSE(p.at("C").has_value());
  EXPECT_FALSE(p.at("D").has_value());
  EXPECT_TRUE(option_probabilities(nullptr, {"A"}).empty());
  EXPECT_TRUE(option_probabilities({{"content", nlohmann::json::array()}}, {"A"}).empty());
}

TEST(Anthropic, RequestAndReplyMapping) {
  ChatRequest req;
  req.model = "claude-x";
  req.messages = {{"system", "Be brief."}, {"user", "Q?"}};
  req.temperature = 0.0;
  req.seed = 5;
  req.max_tokens = 64;
  req.extra_body = {{"top_k", 1}};
  const nlohmann::json body = to_anthropic_json(req);
  EXPECT_EQ(body["system"], "Be brief.");
  ASSERT_EQ(body["messages"].size(), 1u);
  EXPECT_EQ(body["messages"][0]["role"], "user");
  EXPECT_EQ(body["max_tokens"], 64);
  EXPECT_FALSE(body.contains("seed"));
  EXPECT_FALSE(body.contains("top_p"));
  EXPECT_EQ(body["top_k"], 1);

  ChatResponse r;
  ASSERT_TRUE(parse_anthropic_body(
      R"({"type":"message","model":"claude-x-2025","content":[{"type":"text","text":"Answer: "},{"type":"text","text":"B"}],
          "stop_reason":"end_turn","usage":{"input_tokens":10,"output_tokens":3}})",
      r));
  EXPECT_EQ(r.kind, ResponseKind::kOk);
  EXPECT_EQ(r.content, "Answer: B");
  EXPECT_EQ(r.finish_reason, "stop");
  EXPECT_EQ(r.served_model, "claude-x-2025");
  EXPECT_EQ(r.prompt_tokens, 10);
  EXPECT_EQ(r.completion_tokens, 3);
  ChatResponse cut, refused;
  ASSERT_TRUE(parse_anthropic_body(R"({"content":[],"stop_reason":"max_tokens"})", cut));
  EXPECT_EQ(cut.finish_reason, "length");
  ASSERT_TRUE(parse_anthropic_body(R"({"content":[],"stop_reason":"refusal"})", refused));
  EXPECT_EQ(refused.kind, ResponseKind::kRefused);
  ChatResponse bad;
  EXPECT_FALSE(parse_anthropic_body(R"({"content":[{"type":"text","te)", bad));
}

TEST(Anthropic, EndToEndHeadersAndPath) {
  std::string seen_key, seen_version, seen_path;
  httplib::Server server;
  server.Post("/v1/messages", [&](const httplib::Request& req, httplib::Response& res) {
    seen_key = req.get_header_value("x-api-key");
    seen_version = req.get_header_value("anthropic-version");
    seen_path = req.path;
    res.set_header("request-id", "req_123");
    res.set_content(R"({"model":"c","content":[{"type":"text","text":"A"}],"stop_reason":"end_turn"})",
                    "application/json");
  });
  const int port = server.bind_to_any_port("127.0.0.1");
  std::thread t([&] { server.listen_after_bind(); });
  while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  OpenAiOptions o;
  o.base_url = "http://127.0.0.1:" + std::to_string(port) + "/v1/";
  o.api_key = "ak-test-key";
  ChatResponse r;
  std::string identity;
  {
    AnthropicBackend b(o);  // destroyed (connections closed) before the server stops
    r = b.complete(simple_request());
    identity = b.identity();
  }
  server.stop();
  t.join();
  EXPECT_EQ(r.kind, ResponseKind::kOk) << r.error;
  EXPECT_EQ(r.content, "A");
  EXPECT_EQ(seen_key, "ak-test-key");
  EXPECT_EQ(seen_version, "2023-06-01");
  EXPECT_EQ(seen_path, "/v1/messages");
  EXPECT_EQ(r.headers.at("request-id"), "req_123");
  EXPECT_EQ(identity, "anthropic:http://127.0.0.1:" + std::to_string(port) + "/v1");
}

OpenAiOptions fast(const std::string& url, int retries) {
  OpenAiOptions o;
  o.base_url = url;
  o.max_retries = retries;
  o.timeout_s = 10;
  o.base_delay_s = 0.001;
  return o;
}

TEST(Faults, EachKindIsClassifiedAndRetried) {
  SimParams params;
  SimBackend sim(params);
  const ChatResponse truth = sim.complete(simple_request());
  for (const std::string kind : {"429", "500", "reset", "truncate"}) {
    FaultOptions f;
    f.fail_rate = 1.0;
    f.kinds = {kind};
    f.retry_after = "0";
    auto server = SimServer::start(params, 0, f);
    ASSERT_TRUE(server.ok()) << server.status().message();
    const ChatResponse r = OpenAiBackend(fast((*server)->base_url(), 2)).complete(simple_request());
    EXPECT_EQ(r.kind, ResponseKind::kApiError) << kind;
    EXPECT_EQ(r.attempts, 3) << kind << ": " << r.error;
    if (kind == "reset") {
      EXPECT_EQ(r.error.rfind("connect: ", 0), 0u) << r.error;
    }
    if (kind == "truncate") {
      EXPECT_EQ(r.error.rfind("malformed response body", 0), 0u) << r.error;
    }
    if (kind == "429") {
      EXPECT_EQ(r.http_status, 429);
      EXPECT_EQ(r.headers.at("retry-after"), "0");
    }
  }
  // slow: the right answer, late; with a short timeout it is a transport error.
  FaultOptions slow;
  slow.fail_rate = 1.0;
  slow.kinds = {"slow"};
  slow.slow_ms = 300;
  auto server = SimServer::start(params, 0, slow);
  ASSERT_TRUE(server.ok());
  const ChatResponse late = OpenAiBackend(fast((*server)->base_url(), 0)).complete(simple_request());
  EXPECT_EQ(late.kind, ResponseKind::kOk) << late.error;
  EXPECT_EQ(late.content, truth.content);
  EXPECT_GE(late.latency_ms, 300.0);
  OpenAiOptions tight = fast((*server)->base_url(), 0);
  tight.timeout_s = 0.1;
  const ChatResponse timed_out = OpenAiBackend(tight).complete(simple_request());
  EXPECT_EQ(timed_out.kind, ResponseKind::kApiError);
  // A reply that did not come in time is a timeout, not a connect failure (tester 22.2).
  EXPECT_EQ(timed_out.error.rfind("timeout: ", 0), 0u) << timed_out.error;
}

TEST(Faults, DrawsAreReproducibleAndSucceedingRepliesAreExact) {
  SimParams params;
  SimBackend sim(params);
  FaultOptions f;
  f.fail_rate = 0.5;
  f.retry_after = "0";
  f.slow_ms = 1;
  auto run = [&] {
    auto server = SimServer::start(params, 0, f);
    EXPECT_TRUE(server.ok());
    OpenAiBackend client(fast((*server)->base_url(), 0));
    std::vector<int> kinds;
    const auto& bank = item_bank();
    for (size_t i = 0; i < bank.size(); ++i) {
      for (int seed = 0; seed < 4; ++seed) {
        const ChatRequest req = mcq_request(bank[i].first, bank[i].second, 0.7, seed);
        const ChatResponse r = client.complete(req);
        kinds.push_back(static_cast<int>(r.kind));
        if (r.kind == ResponseKind::kOk) {
          EXPECT_EQ(r.content, sim.complete(req).content);
        }
      }
    }
    return kinds;
  };
  const auto a = run();
  const auto b = run();
  EXPECT_EQ(a, b);
  const auto failures = std::count(a.begin(), a.end(), static_cast<int>(ResponseKind::kApiError));
  EXPECT_GT(failures, 0);
  EXPECT_LT(failures, static_cast<long>(a.size()));
}

TEST(Faults, OptionsAreValidated) {
  EXPECT_FALSE(FaultOptions::parse_kinds("429,50O").ok());
  EXPECT_NE(FaultOptions::parse_kinds("429,rest").status().message().find("reset"), std::string::npos);
  auto k = FaultOptions::parse_kinds(" 429 ,slow,429");
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(*k, (std::vector<std::string>{"429", "slow"}));
  FaultOptions f;
  f.fail_rate = 1.5;
  EXPECT_FALSE(f.validate().ok());
  f.fail_rate = 0.2;
  f.latency_ms = -1;
  EXPECT_FALSE(f.validate().ok());
}

}  // namespace
}  // namespace nf

namespace nf {
namespace {

// Tester finding 11 (session 9): a server that sent its status line and headers, then
// trickled its body past timeout_s, was declared hung ("no HTTP response ... not retried",
// "connect: ..."): it is slow, not silent, so the attempt is an ordinary timeout, retried,
// and the message says to raise timeout_s.
TEST(Faults, ASlowReplyCutByTheTimeoutIsRetriedNotDeclaredHung) {
  const std::string body =
      R"({"id":"x","choices":[{"index":0,"message":{"role":"assistant","content":"A"},"finish_reason":"stop"}]})";
  std::atomic<int> calls{0};
  std::atomic<bool> stopping{false};
  httplib::Server server;
  server.Post("/v1/chat/completions", [&](const httplib::Request&, httplib::Response& res) {
    ++calls;
    res.set_content_provider(body.size(), "application/json",
                             [&](size_t offset, size_t, httplib::DataSink& sink) {
                               if (offset == 0) sink.write(body.data(), 20);  // headers + 20 bytes at once
                               // ... then nothing within the client's timeout.
                               for (int i = 0; i < 100 && !stopping.load(); ++i)
                                 std::this_thread::sleep_for(std::chrono::milliseconds(10));
                               return false;  // give up: the client has gone
                             });
  });
  const int port = server.bind_to_any_port("127.0.0.1");
  std::thread t([&] { server.listen_after_bind(); });
  while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  OpenAiOptions o = fast("http://127.0.0.1:" + std::to_string(port) + "/v1", 1);
  o.timeout_s = 0.3;
  ChatResponse r;
  {
    OpenAiBackend b(o);
    r = b.complete(simple_request());
  }
  stopping = true;
  server.stop();
  t.join();
  EXPECT_EQ(r.kind, ResponseKind::kApiError);
  EXPECT_EQ(r.attempts, 2) << r.error;  // max_retries 1: retried, as a timeout is
  EXPECT_EQ(calls.load(), 2);
  EXPECT_FALSE(r.endpoint_silent) << r.error;
  EXPECT_EQ(r.error.rfind("timeout: ", 0), 0u) << r.error;
  EXPECT_NE(r.error.find("still sending its reply when timeout_s (0.3 s) ran out: raise timeout_s"), std::string::npos)
      << r.error;
  EXPECT_EQ(r.error.find("no HTTP response"), std::string::npos) << r.error;
}

}  // namespace
}  // namespace nf
