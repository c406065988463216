// The HTTP transport shared by the openai and anthropic backends: one POST over libcurl
// with a CURL easy handle per thread, reused across requests so connections stay alive
// (a handle per call reconnects every time and costs CPU).
#pragma once

#include <atomic>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "backend/backend.h"
#include "backend/rate_limit.h"
#include "backend/retry.h"
#include "util/clock.h"
#include "util/rng.h"

namespace nf {

/// One HTTP exchange as received.
struct HttpReply {
  bool transport_error = false;   // curl failed: connect, reset, timeout, partial body
  bool timed_out = false;         // ... by a timeout (curl error 28: the transfer or the connect)
  bool abandoned = false;         // ... because the caller's abandon flag was set (ChatEndpoint::abandon)
  /// The server had begun to answer (a status line or body bytes) before the transport
  /// error: a slow reply cut by timeout_s, not a hung endpoint (never "silent").
  bool responded = false;
  std::string curl_error;
  long http = 0;                  // status of the last response (0 on transport error)
  std::string body;
  /// Lower-cased names; last value wins. Only the headers provenance_headers() keeps
  /// (incl. retry-after and date): the rest are dropped as they arrive.
  std::map<std::string, std::string> headers;
  double latency_ms = 0.0;
};

/// CURL easy handles of one backend, one per calling thread, reused across requests so
/// connections stay alive; all closed when the pool is destroyed (so a backend's
/// connections end with it). Thread-safe.
class CurlHandlePool {
 public:
  CurlHandlePool() = default;
  ~CurlHandlePool();
  CurlHandlePool(const CurlHandlePool&) = delete;
  CurlHandlePool& operator=(const CurlHandlePool&) = delete;
  /// This thread's handle (a CURL*), created on first use; nullptr if curl_easy_init fails.
  void* for_this_thread();
  /// As above; *fresh (if not null) says whether the handle was created by this call (so
  /// the caller sets the options that never change only once per handle).
  void* for_this_thread(bool* fresh);

 private:
  std::mutex mu_;
  std::unordered_map<std::thread::id, void*> handles_;
};

/// POSTs `payload` to `url` with `headers` ("Name: value" lines) on this thread's handle
/// from `pool`. `timeout_s` bounds the whole transfer, `connect_timeout_s` the connect;
/// proxies from the environment are ignored (the URL is talked to directly). When
/// `abandon` is not null and becomes true, the transfer is cut within about a second
/// (libcurl's progress callback) and the reply says `abandoned`. Never throws.
HttpReply http_post(CurlHandlePool& pool, const std::string& url, const std::vector<std::string>& headers, const std::string& payload,
                    double timeout_s, double connect_timeout_s, const std::atomic<bool>* abandon = nullptr);

/// `text` with every occurrence of `secret` replaced by "[redacted]" (no-op if empty).
std::string redact_secret(std::string text, const std::string& secret);

/// The response headers worth keeping as provenance: server, date, openai-*, x-request-id,
/// request-id, x-ratelimit-*, anthropic-*, retry-after, and any header naming a model or
/// fingerprint. Never includes set-cookie or authorization.
std::map<std::string, std::string> provenance_headers(const std::map<std::string, std::string>& headers);

/// Whether an endpoint has ever answered: an endpoint that has never sent an HTTP
/// response and has failed kDeadCalls calls in a row at the transport level gets a single
/// attempt per call from then on (fail fast: a run against a server that is down ends in
/// seconds with exit 3, not after every draw's full back-off). Thread-safe.
///
/// And when it last answered (issue 16: a hung server): `last_reply_s` is the Clock::now_s()
/// at which the last HTTP response of any status arrived (-infinity before the first). An
/// attempt that timed out after waiting its whole `timeout_s` while no HTTP response at
/// all arrived from the endpoint (last_reply_s before the attempt started) is "silent":
/// the server accepts connections but answers nobody (SIGSTOPped, deadlocked, a socket
/// that reads and never writes). Such an attempt is not retried and its call reports
/// ChatResponse::endpoint_silent, on which the runner's circuit breaker stops the run at
/// once (runner.h RunOptions::max_consecutive_api_errors). A slow but live server is never
/// silent: any reply, from any call, within timeout_s resets the clock.
struct EndpointHealth {
  static constexpr int kDeadCalls = 3;
  std::atomic<bool> answered{false};
  std::atomic<int> dead_calls{0};
  std::atomic<double> last_reply_s{-std::numeric_limits<double>::infinity()};
  bool fail_fast() const { return !answered.load() && dead_calls.load() >= kDeadCalls; }
};

/// Settings of one chat endpoint for post_chat().
struct ChatEndpoint {
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  double timeout_s = 120;
  double connect_timeout_s = 10;
  RetryPolicy policy;
  std::string secret;                // redacted from every error and body kept
  Clock* clock = nullptr;            // nullptr = real_clock()
  RateLimiter* limiter = nullptr;    // nullptr = no budgets, no adaptive back-off
  CurlHandlePool* pool = nullptr;    // required: the backend's handles
  EndpointHealth* health = nullptr;  // nullptr = never fail fast, never silent
  /// Set (by the runner, at the end of a stop's grace) to abandon every call of this
  /// endpoint: post_chat cuts the transfer or the back-off in progress (within about a
  /// second) and returns ChatResponse::abandoned, which is never stored. nullptr = never.
  const std::atomic<bool>* abandon = nullptr;
};

/// Parses a 2xx body into `r`; false = malformed (retried, then api_error).
using ChatBodyParser = std::function<bool(const std::string& body, ChatResponse& r)>;

/// One chat call with the retry policy of retry.h: POSTs `payload`, classifies each
/// attempt (transport error, HTTP status, malformed 2xx body via `parse`), waits as
/// decide_retry says (pausing the whole endpoint after a 429), charges the token budget
/// with the usage reported (or `max_tokens` when none), and returns the classified
/// response (kApiError with a redacted reason when the call failed). `rng` draws jitter.
/// A silent attempt (EndpointHealth) ends the call at once (endpoint_silent). Once
/// `endpoint.abandon` is set, the call returns within about a second with kApiError and
/// `abandoned` = true (no further attempt; a wait for admission ends when a slot frees).
ChatResponse post_chat(const ChatEndpoint& endpoint, const std::string& payload, const ChatBodyParser& parse,
                       Rng& rng, int max_tokens);

/// What one chat call has received so far (the pieces post_chat and ChatMulti share, so
/// the thread path and the event loop classify every reply the same way).
struct ChatCallState {
  HttpReply last;           // the last attempt's reply
  ChatResponse parsed;      // its parsed body (when parsed_ok)
  bool parsed_ok = false;
  bool silent = false;      // the last attempt was silent (EndpointHealth): not retried
  int attempts = 0;         // attempts made (set when the call ends)
};

/// The retry policy of one call to `endpoint`: its policy, with no retries once the
/// endpoint fails fast (EndpointHealth).
RetryPolicy chat_call_policy(const ChatEndpoint& endpoint);

/// Ends one attempt that received `reply` (after admission `permit` when the endpoint has
/// a limiter): releases the permit (a 429 cuts the in-flight limit; a usable Retry-After
/// pauses the endpoint), marks the endpoint as answered (and when: last_reply_s), parses a
/// 2xx body with `parse` into `st`, and returns what the retry policy needs; a silent
/// attempt (EndpointHealth) comes back with AttemptResult::no_retry and st.silent set.
AttemptResult chat_attempt_done(const ChatEndpoint& endpoint, const ChatBodyParser& parse,
                                const RateLimiter::Permit& permit, HttpReply reply, ChatCallState& st);

/// The classified response of a call whose last decision was `d` (kDone or kGiveUp), as
/// post_chat documents it; charges the token budget. Moves the body out of `st`.
/// A silent last attempt gives endpoint_silent = true and an error naming the silence.
ChatResponse chat_call_result(const ChatEndpoint& endpoint, ChatCallState& st, const RetryDecision& d,
                              int max_tokens);

/// A chat call an event loop can drive (ChatMulti::start): everything post_chat takes.
struct AsyncChatCall {
  const ChatEndpoint* endpoint = nullptr;  // owned by the backend, which outlives the call
  std::string payload;
  ChatBodyParser parse;
  Rng rng{1};
  int max_tokens = 0;
};

/// A backend whose calls an event loop can drive (openai, anthropic).
class AsyncChatSource {
 public:
  virtual ~AsyncChatSource() = default;
  /// The call `complete(request)` would make, not yet started. Thread-safe.
  /// `openai_body_text`, when not null, must be request.to_openai_json() already dumped by
  /// the caller (compact, invalid UTF-8 replaced: the bytes the store keeps as the draw's
  /// request): an OpenAI-compatible backend then sends those bytes instead of building
  /// and dumping the body again.
  virtual AsyncChatCall async_call(const ChatRequest& request, const std::string* openai_body_text = nullptr) = 0;
};

/// Many chat calls on ONE thread over a libcurl multi handle (issue 14 item 5): each call
/// is exactly a post_chat (same admission through the endpoint's RateLimiter, same
/// retry decisions, same classification: the shared pieces above), but a wait between
/// attempts or for admission is a timer, not a sleeping thread, and one curl_multi_poll
/// wakes for every transfer that has data. Connections are kept alive in the multi
/// handle's connection cache. Not thread-safe: one thread calls start() and poll().
class ChatMulti {
 public:
  using Done = std::function<void(ChatResponse)>;
  ChatMulti();
  ~ChatMulti();  // abandons calls still in progress (their `done` is never called; the
                 // runner destroys the loop at the end of a stop's grace)
  ChatMulti(const ChatMulti&) = delete;
  ChatMulti& operator=(const ChatMulti&) = delete;
  /// Starts `call`; `done` gets its response, on the thread that calls poll().
  void start(AsyncChatCall call, Done done);
  /// Calls started and not yet done (transferring, or waiting for a retry or admission).
  size_t active() const;
  /// Drives transfers and timers for at most `max_wait_s` seconds (less when something
  /// finishes earlier) and runs the `done` of every call that ended.
  void poll(double max_wait_s);

 private:
  struct Call;
  void launch(Call& c);
  void* multi_;  // CURLM*
  std::vector<void*> idle_;  // CURL* easy handles, options that never change already set
  std::unordered_map<const ChatEndpoint*, void*> header_lists_;  // curl_slist* per endpoint
  std::vector<std::unique_ptr<Call>> calls_;
};

}  // namespace nf
