// The OpenAI-compatible client against serve-sim (end to end) and against tiny
// misbehaving servers (classification, retries, credentials).
#include "backend/http.h"
#include "backend/openai.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <functional>
#include <mutex>
#include <set>
#include <thread>

#include "sim/sim.h"
#include "sim/sim_server.h"
#include "sim/sim_test_util.h"

namespace nf {
namespace {

using testing::item_bank;
using testing::mcq_request;

// A throwaway httplib server on 127.0.0.1 answering POST /v1/chat/completions with `handler`.
class TinyServer {
 public:
  explicit TinyServer(httplib::Server::Handler handler) {
    server_.Post("/v1/chat/completions", std::move(handler));
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~TinyServer() {
    server_.stop();
    thread_.join();
  }
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = -1;
};

OpenAiOptions opts(const std::string& base_url, int retries = 2) {
  OpenAiOptions o;
  o.base_url = base_url;
  o.max_retries = retries;
  o.timeout_s = 10;
  o.connect_timeout_s = 2;
  o.base_delay_s = 0.01;  // real sleeps stay short; the policy itself is tested on a fake clock
  return o;
}

ChatRequest simple_request() { return mcq_request(item_bank()[1].first, item_bank()[1].second, 0.0, 1); }

// A port with nothing listening: bind an ephemeral port, read it, close the socket.
int closed_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  socklen_t len = sizeof(addr);
  EXPECT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  ::close(fd);
  return ntohs(addr.sin_port);
}

TEST(OpenAi, IdentityStripsUserinfoAndTrailingSlash) {
  EXPECT_EQ(OpenAiBackend(opts("http://127.0.0.1:8080/v1/")).identity(), "openai:http://127.0.0.1:8080/v1");
  EXPECT_EQ(OpenAiBackend(opts("https://user:secret@api.example.com/v1")).identity(),
            "openai:https://api.example.com/v1");
  EXPECT_EQ(strip_url_userinfo("http://host/path@x"), "http://host/path@x");
  OpenAiOptions o = opts("http://127.0.0.1:1/v1");
  o.api_key = "sk-test-SECRET-123";
  OpenAiBackend b(o);
  EXPECT_EQ(b.kind(), "openai");
  EXPECT_EQ(b.identity().find("SECRET"), std::string::npos);
}

TEST(OpenAi, MatchesTheInProcessSimByteForByte) {
  SimParams params{.seed = 21, .spread = 1.2, .parse_error_rate = 0.1};
  auto server = SimServer::start(params);
  ASSERT_TRUE(server.ok()) << server.status().to_string();
  SimBackend sim(params);
  OpenAiBackend client(opts((*server)->base_url()));
  int n = 0;
  for (const auto& [stem, options] : item_bank()) {
    for (double T : {0.0, 0.4, 1.0}) {
      for (double top_p : {1.0, 0.9}) {
        for (int64_t seed : {0, 1, 2, 77}) {
          const ChatRequest req = mcq_request(stem, options, T, seed, top_p);
          const ChatResponse local = sim.complete(req);
          const ChatResponse remote = client.complete(req);
          ASSERT_EQ(remote.kind, ResponseKind::kOk) << remote.error;
          EXPECT_EQ(remote.content, local.content);
          EXPECT_EQ(remote.finish_reason, "stop");
          EXPECT_EQ(remote.served_model, "sim-a");
          EXPECT_EQ(remote.system_fingerprint, local.system_fingerprint);
          EXPECT_EQ(remote.prompt_tokens, local.prompt_tokens);
          EXPECT_EQ(remote.completion_tokens, local.completion_tokens);
          EXPECT_EQ(remote.http_status, 200);
          EXPECT_EQ(remote.attempts, 1);
          ++n;
        }
      }
    }
  }
  EXPECT_EQ(n, 96);
}

TEST(OpenAi, ServerResultsDoNotDependOnClientThreads) {
  auto server = SimServer::start(SimParams{.seed = 5});
  ASSERT_TRUE(server.ok());
  std::vector<ChatRequest> reqs;
  for (const auto& [stem, options] : item_bank()) {
    for (int64_t s = 0; s < 10; ++s) reqs.push_back(mcq_request(stem, options, 0.8, s));
  }
  OpenAiBackend client(opts((*server)->base_url()));
  std::vector<std::string> serial(reqs.size());
  for (size_t i = 0; i < reqs.size(); ++i) serial[i] = client.complete(reqs[i]).content;
  std::vector<std::string> parallel(reqs.size());
  std::vector<std::thread> threads;
  for (size_t t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (size_t i = reqs.size(); i-- > 0;) {
        if (i % 4 == t) parallel[i] = client.complete(reqs[i]).content;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(parallel, serial);
  std::set<std::string> distinct(serial.begin(), serial.end());
  EXPECT_GT(distinct.size(), 4u);
}

TEST(OpenAi, SimServerEndpointsAndBadRequests) {
  auto server = SimServer::start(SimParams{});
  ASSERT_TRUE(server.ok());
  httplib::Client c("127.0.0.1", (*server)->port());
  auto health = c.Get("/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(health->body, "ok");
  auto models = c.Get("/v1/models");
  ASSERT_TRUE(models);
  EXPECT_EQ(nlohmann::json::parse(models->body)["object"], "list");
  for (const std::string& body : {std::string("{not json"), std::string(R"({"model": "m"})"),
                                  std::string(R"({"model": "m", "messages": [], "temperature": -1})")}) {
    auto res = c.Post("/v1/chat/completions", body, "application/json");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 400) << body;
    const auto j = nlohmann::json::parse(res->body, nullptr, false);
    ASSERT_TRUE(j.contains("error")) << res->body;
    EXPECT_TRUE(j["error"]["message"].is_string());
    EXPECT_EQ(j["error"]["type"], "invalid_request_error");
  }
  // The unversioned path is refused, as a real server would (issue 12: a base URL without
  // /v1 must fail against serve-sim too, not only in production).
  auto unversioned = c.Post("/chat/completions", simple_request().to_openai_json().dump(), "application/json");
  ASSERT_TRUE(unversioned);
  EXPECT_EQ(unversioned->status, 404);
  EXPECT_EQ(nlohmann::json::parse(unversioned->body)["error"]["type"], "invalid_request_error");
}

TEST(OpenAi, PortInUseIsUnavailable) {
  auto first = SimServer::start(SimParams{});
  ASSERT_TRUE(first.ok());
  auto second = SimServer::start(SimParams{}, (*first)->port());
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kUnavailable);
  (*first)->stop();
  (*first)->stop();  // idempotent
}

TEST(OpenAi, ConnectionRefusedIsApiErrorAfterRetries) {
  OpenAiBackend client(opts("http://127.0.0.1:" + std::to_string(closed_port()) + "/v1", 1));
  const ChatResponse r = client.complete(simple_request());
  EXPECT_EQ(r.kind, ResponseKind::kApiError);
  EXPECT_EQ(r.error.rfind("connect: ", 0), 0u) << r.error;
  EXPECT_EQ(r.attempts, 2);
}

TEST(OpenAi, AnEndpointThatNeverAnsweredFailsFastAfterThreeDeadCalls) {
  OpenAiBackend client(opts("http://127.0.0.1:" + std::to_string(closed_port()) + "/v1", 2));
  for (int i = 0; i < EndpointHealth::kDeadCalls; ++i) EXPECT_EQ(client.complete(simple_request()).attempts, 3) << i;
  const ChatResponse r = client.complete(simple_request());
  EXPECT_EQ(r.kind, ResponseKind::kApiError);
  EXPECT_EQ(r.attempts, 1);
}

TEST(OpenAi, ServerErrorIsRetriedThenApiError) {
  std::atomic<int> hits{0};
  TinyServer s([&](const httplib::Request&, httplib::Response& res) {
    ++hits;
    res.status = 500;
    res.set_content(std::string(300, 'x'), "text/plain");
  });
  OpenAiBackend client(opts(s.base_url(), 2));
  const ChatResponse r = client.complete(simple_request());
  EXPECT_EQ(r.kind, ResponseKind::kApiError);
  EXPECT_EQ(r.error, "HTTP 500: " + std::string(200, 'x') + " (3 attempts)");
  EXPECT_EQ(r.http_status, 500);
  EXPECT_EQ(r.attempts, 3);
  EXPECT_EQ(hits.load(), 3);
}

TEST(OpenAi, RateLimitRecoversOnRetry) {
  std::atomic<int> hits{0};
  SimBackend sim(SimParams{});
  TinyServer s([&](const httplib::Request& req, httplib::Response& res) {
    if (hits++ == 0) {
      res.status = 429;
      return;
    }
    auto r = sim.complete(*ChatRequest::from_openai_json(nlohmann::json::parse(req.body)));
    res.set_content(r.raw_body, "application/json");
  });
  const ChatResponse r = OpenAiBackend(opts(s.base_url(), 2)).complete(simple_request());
  EXPECT_EQ(r.kind, ResponseKind::kOk) << r.error;
  EXPECT_EQ(r.attempts, 2);
  EXPECT_EQ(r.content, sim.complete(simple_request()).content);
}

TEST(OpenAi, ClientErrorIsNotRetried) {
  std::atomic<int> hits{0};
  TinyServer s([&](const httplib::Request&, httplib::Response& res) {
    ++hits;
    res.status = 400;
    res.set_content(R"({"error": {"message": "bad"}})", "application/json");
  });
  const ChatResponse r = OpenAiBackend(opts(s.base_url(), 2)).complete(simple_request());
  EXPECT_EQ(r.kind, ResponseKind::kApiError);
  EXPECT_EQ(r.error.rfind("HTTP 400: ", 0), 0u) << r.error;
  EXPECT_EQ(r.attempts, 1);
  EXPECT_EQ(hits.load(), 1);
}

TEST(OpenAi, MalformedBodiesAreApiErrors) {
  for (const std::string& body : {std::string("<html>garbage</html>"), std::string(R"({"choices": []})"),
                                 std::string(R"({"choices": [{"text": "legacy"}]})"), std::string("[1, 2]")}) {
    TinyServer s([&](const httplib::Request&, httplib::Response& res) { res.set_content(body, "application/json"); });
    const ChatResponse r = OpenAiBackend(opts(s.base_url(), 0)).complete(simple_request());
    EXPECT_EQ(r.kind, ResponseKind::kApiError) << body;
    EXPECT_EQ(r.error, "malformed response body (1 attempt)");
    EXPECT_EQ(r.raw_body, body);
  }
}

TEST(OpenAi, ContentFilterIsRefusedAndNullContentIsEmpty) {
  std::string finish = "content_filter";
  TinyServer s([&](const httplib::Request&, httplib::Response& res) {
    nlohmann::json j = {{"model", "served-x"},
                        {"choices", {{{"message", {{"role", "assistant"}, {"content", nullptr}}}, {"finish_reason", finish}}}},
                        {"usage", {{"prompt_tokens", 12}, {"completion_tokens", 0}}}};
    res.set_content(j.dump(), "application/json");
  });
  ChatResponse r = OpenAiBackend(opts(s.base_url(), 0)).complete(simple_request());
  EXPECT_EQ(r.kind, ResponseKind::kRefused);
  EXPECT_EQ(r.finish_reason, "content_filter");
  finish = "length";
  r = OpenAiBackend(opts(s.base_url(), 0)).complete(simple_request());
  EXPECT_EQ(r.kind, ResponseKind::kOk);
  EXPECT_EQ(r.content, "");
  EXPECT_EQ(r.finish_reason, "length");
  EXPECT_EQ(r.served_model, "served-x");
  EXPECT_EQ(r.prompt_tokens, 12);
  EXPECT_EQ(r.completion_tokens, 0);
}

TEST(OpenAi, BearerHeaderIsSentOnlyWithAKeyAndNeverLeaks) {
  const std::string key = "sk-live-TOPSECRET-0123456789";
  std::mutex mu;
  std::string seen_auth;
  std::string seen_body;
  bool had_auth = false;
  // Echoes the Authorization header back in a 401 body (a careless proxy).
  TinyServer s([&](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(mu);
    had_auth = req.has_header("Authorization");
    seen_auth = req.get_header_value("Authorization");
    seen_body = req.body;
    res.status = 401;
    res.set_content("invalid credentials: " + seen_auth, "text/plain");
  });
  OpenAiOptions o = opts(s.base_url(), 0);
  o.api_key = key;
  const ChatResponse r = OpenAiBackend(o).complete(simple_request());
  {
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_EQ(seen_auth, "Bearer " + key);
    EXPECT_EQ(seen_body.find(key), std::string::npos);
  }
  EXPECT_EQ(r.kind, ResponseKind::kApiError);
  EXPECT_EQ(r.error.rfind("HTTP 401: ", 0), 0u);
  EXPECT_EQ(r.error.find("TOPSECRET"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("[redacted]"), std::string::npos) << r.error;

  // Without a key there is no Authorization header at all.
  const ChatResponse r2 = OpenAiBackend(opts(s.base_url(), 0)).complete(simple_request());
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_FALSE(had_auth);
  EXPECT_EQ(r2.kind, ResponseKind::kApiError);

  // A refused connection's error does not carry the key either.
  OpenAiOptions dead = opts("http://127.0.0.1:" + std::to_string(closed_port()) + "/v1", 0);
  dead.api_key = key;
  const ChatResponse r3 = OpenAiBackend(dead).complete(simple_request());
  EXPECT_EQ(r3.kind, ResponseKind::kApiError);
  EXPECT_EQ(r3.error.find("TOPSECRET"), std::string::npos);
}

}  // namespace
}  // namespace nf
