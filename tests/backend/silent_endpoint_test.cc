// A hung endpoint (issue 16; http.h EndpointHealth): an attempt that waits its whole
// timeout_s while the endpoint sends no HTTP response to anyone is "silent" and not
// retried, on both the thread path (post_chat) and the event loop (ChatMulti); a timeout
// while the endpoint answers other calls is an ordinary, retried timeout; and a call in
// flight is cut promptly once the endpoint's abandon flag is set.
#include "backend/http.h"
#include "backend/openai.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <thread>

namespace nf {
namespace {

// POST /v1/chat/completions: a body containing "hang" waits `hang_s` (or until the server
// is destroyed) before answering; any other body is answered at once.
class HangingServer {
 public:
  explicit HangingServer(double hang_s) {
    server_.Post("/v1/chat/completions", [this, hang_s](const httplib::Request& req, httplib::Response& res) {
      if (req.body.find("hang") != std::string::npos) {
        const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(hang_s);
        while (!closing_.load() && std::chrono::steady_clock::now() < until)
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      res.set_content(R"({"model":"m","choices":[{"message":{"role":"assistant","content":"Answer: B"},)"
                      R"("finish_reason":"stop"}]})",
                      "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~HangingServer() {
    closing_ = true;
    server_.stop();
    thread_.join();
  }
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }

 private:
  httplib::Server server_;
  std::thread thread_;
  std::atomic<bool> closing_{false};
  int port_ = -1;
};

OpenAiOptions opts(const std::string& base_url, double timeout_s, int retries) {
  OpenAiOptions o;
  o.base_url = base_url;
  o.max_retries = retries;
  o.timeout_s = timeout_s;
  o.connect_timeout_s = 2;
  o.base_delay_s = 0.01;
  return o;
}

ChatRequest request(const std::string& text) {
  ChatRequest r;
  r.model = "m";
  r.messages = {{"user", text}};
  return r;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

TEST(SilentEndpoint, ATimeoutWithNoReplyToAnyoneIsNotRetried) {
  HangingServer server(30);
  OpenAiBackend backend(opts(server.base_url(), 0.5, 4));
  const auto t0 = std::chrono::steady_clock::now();
  const ChatResponse r = backend.complete(request("hang"));
  const double took = seconds_since(t0);
  EXPECT_EQ(r.kind, ResponseKind::kApiError);
  EXPECT_TRUE(r.transport_error);
  EXPECT_TRUE(r.endpoint_silent);
  EXPECT_EQ(r.attempts, 1);  // not 5: a hung server would cost 5 timeouts per draw
  EXPECT_LT(took, 2.0);
  EXPECT_NE(r.error.find("no HTTP response from the server to any call for 0.5 s"), std::string::npos) << r.error;
}

TEST(SilentEndpoint, ATimeoutWhileTheEndpointAnswersOthersIsRetried) {
  HangingServer server(30);
  OpenAiBackend backend(opts(server.base_url(), 0.5, 1));
  std::atomic<bool> stop{false};
  std::atomic<int> answered{0};
  std::thread others([&] {  // a live server: other calls are answered every 100 ms
    while (!stop.load()) {
      if (backend.complete(request("quick")).kind == ResponseKind::kOk) ++answered;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const ChatResponse r = backend.complete(request("hang"));
  stop = true;
  others.join();
  EXPECT_GT(answered.load(), 3);
  EXPECT_EQ(r.kind, ResponseKind::kApiError);
  EXPECT_TRUE(r.transport_error);
  EXPECT_FALSE(r.endpoint_silent) << r.error;
  EXPECT_EQ(r.attempts, 2);  // the ordinary timeout is retried
}

TEST(SilentEndpoint, TheEventLoopFindsTheSameSilence) {
  HangingServer server(30);
  OpenAiBackend backend(opts(server.base_url(), 0.5, 4));
  ChatMulti multi;
  std::optional<ChatResponse> got;
  multi.start(backend.async_call(request("hang")), [&](ChatResponse r) { got = std::move(r); });
  const auto t0 = std::chrono::steady_clock::now();
  while (!got && seconds_since(t0) < 10) multi.poll(0.1);
  ASSERT_TRUE(got.has_value());
  EXPECT_LT(seconds_since(t0), 2.0);
  EXPECT_TRUE(got->endpoint_silent) << got->error;
  EXPECT_EQ(got->attempts, 1);
}

TEST(SilentEndpoint, AnAbandonedCallReturnsWithinAboutASecond) {
  HangingServer server(60);
  std::atomic<bool> abandon{false};
  OpenAiOptions o = opts(server.base_url(), 60, 4);
  o.abandon = &abandon;
  OpenAiBackend backend(o);
  EXPECT_EQ(backend.complete(request("quick")).kind, ResponseKind::kOk);  // the flag alone changes nothing
  std::thread cut([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    abandon = true;
  });
  const auto t0 = std::chrono::steady_clock::now();
  const ChatResponse r = backend.complete(request("hang"));
  const double took = seconds_since(t0);
  cut.join();
  EXPECT_TRUE(r.abandoned);
  EXPECT_EQ(r.kind, ResponseKind::kApiError);
  EXPECT_FALSE(r.endpoint_silent);
  EXPECT_LT(took, 2.0);
  // Once set, a new call does not even start.
  const ChatResponse later = backend.complete(request("quick"));
  EXPECT_TRUE(later.abandoned);
  EXPECT_EQ(later.attempts, 0);
}

}  // namespace
}  // namespace nf
