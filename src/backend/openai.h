// The OpenAI-compatible chat/completions client over libcurl (DESIGN.md "Backends",
// openai): vLLM, Ollama, llama.cpp server, SGLang, TGI, hosted APIs, and serve-sim.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <set>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/http.h"
#include "backend/rate_limit.h"
#include "backend/retry.h"
#include "util/clock.h"

namespace nf {

struct OpenAiOptions {
  /// e.g. "http://127.0.0.1:8080/v1"; "/chat/completions" is appended (a trailing '/'
  /// is stripped first).
  std::string base_url;
  /// The key's VALUE, read by the caller from the environment variable the study names.
  /// Empty = no Authorization header. Never appears in identity() or error messages.
  std::string api_key;
  double timeout_s = 120;         // whole-transfer timeout per attempt, seconds
  double connect_timeout_s = 10;  // connection timeout per attempt, seconds
  int max_retries = 4;            // extra attempts on retryable failures (retry.h)
  double retry_after_cap_s = 120; // a longer Retry-After gives up (api_error)
  double base_delay_s = 0.5;      // back-off base (retry.h backoff_delay_s)
  double max_delay_s = 30;        // back-off cap
  double rpm = 0;                 // requests per minute (0 = unlimited)
  double tpm = 0;                 // tokens per minute (0 = unlimited)
  uint64_t jitter_seed = 1;       // seed of the back-off jitter stream
  Clock* clock = nullptr;         // nullptr = real_clock() (tests pass a fake)
  /// Adaptive back-off after 429s (rate_limit.h AdaptiveOptions): an AIMD limit on the
  /// requests in flight, starting at and capped by `max_in_flight` (the runner passes the
  /// subject's concurrency), plus a shared pause on Retry-After. Default on; false only to
  /// compare (tests, rehearsals).
  bool adaptive = true;
  double max_in_flight = 256;
  /// Set by the runner to abandon every call in progress at the end of a stop's grace
  /// (http.h ChatEndpoint::abandon); nullptr = calls are never abandoned. Not owned.
  const std::atomic<bool>* abandon = nullptr;
};

/// The parsed fields of a 2xx chat.completion body, classified (issue 6 item 4):
///   not JSON / no choices[0] / choices[0].message not an object -> false (malformed:
///     retried, then api_error)
///   arrays and objects nested deeper than kMaxJsonDepth (util/json_depth.h) -> false with
///     r.error "reply: JSON nested deeper than 512 levels ..." (a hostile server must not
///     crash the process by recursion; the call ends an api_error naming it, never an answer)
///   finish_reason "content_filter", or a non-empty message.refusal -> kRefused
///   content null with finish_reason "length" -> kOk, content "" (truncated: the task
///     records a parse_error naming the truncation; never a wrong answer)
///   only tool_calls, or finish_reason null -> kOk with the text there is ("" if none)
///   content as an array of {"type":"text","text"} parts -> their concatenation
/// Fills content, finish_reason, served_model, system_fingerprint, usage and logprobs.
/// Reads the common shape of such a body with nlohmann's SAX reader (no DOM) and falls
/// back to parse_openai_body_dom for anything else (content parts, logprobs, a key given
/// twice, wrong types, a body that does not parse): always the DOM reader's result.
bool parse_openai_body(const std::string& body, ChatResponse& r);
/// The same classification read from a full nlohmann DOM (the reference for the SAX path).
bool parse_openai_body_dom(const std::string& body, ChatResponse& r);
/// parse_openai_body's SAX path alone: true with `r` filled for a body of the common
/// shape (an object; choices[0] an object with a message object; content a string or
/// null; logprobs null or absent; no key it reads given twice), nullopt for any other
/// body (then `r` is untouched and parse_openai_body_dom decides).
std::optional<bool> parse_openai_body_sax(const std::string& body, ChatResponse& r);

/// POSTs ChatRequest::to_openai_json() to {base_url}/chat/completions. Thread-safe; each
/// worker thread reuses its own CURL handle (keep-alive).
///
/// Classification (never throws):
///   transport failure after retries -> kApiError "connect: <curl error> (N attempts)"
///   HTTP non-2xx (final or after retries) -> kApiError "HTTP <code>: <first 200 chars>"
///   Retry-After beyond retry_after_cap_s -> kApiError naming the wait and the cap
///   2xx malformed after retries -> kApiError "malformed response body" (": <reason>" when
///     the parser gave one, e.g. the nesting limit)
///   otherwise as parse_openai_body.
/// Retries follow retry.h (408/409/429/5xx, transport errors, malformed bodies; Retry-After
/// honoured); every attempt passes the endpoint's RateLimiter, so a 429 slows every worker
/// (AIMD in-flight limit; a Retry-After pauses the whole endpoint), budgets or not.
/// ChatResponse.attempts counts the attempts made; latency_ms is that of the last one.
/// Any occurrence of the API key in an error message or body is replaced by "[redacted]".
class OpenAiBackend final : public Backend, public AsyncChatSource {
 public:
  explicit OpenAiBackend(OpenAiOptions options);

  ChatResponse complete(const ChatRequest& request) override;
  std::string kind() const override { return "openai"; }
  /// "openai:" + base_url without userinfo (user:pass@) and without a trailing '/'.
  std::string identity() const override;
  /// The call complete(request) makes, for an event loop (http.h ChatMulti).
  AsyncChatCall async_call(const ChatRequest& request, const std::string* openai_body_text = nullptr) override;
  /// The endpoint's limiter (budgets and adaptive back-off); never null.
  const RateLimiter& limiter() const { return *limiter_; }

 private:
  OpenAiOptions options_;
  std::string base_url_;  // trailing '/' stripped
  std::unique_ptr<RateLimiter> limiter_;
  std::atomic<uint64_t> calls_{0};
  std::unique_ptr<CurlHandlePool> pool_;
  EndpointHealth health_;
  ChatEndpoint endpoint_;  // built once in the constructor
};

/// The endpoint every call of a backend built from `options` shares: `url`, `headers`,
/// timeouts, the retry policy (max_retries clamped at 0, Retry-After cap, back-off bounds),
/// the secret to redact, the clock, and the backend-owned budgets, handle pool and health
/// (pointers kept, not owned). Built once per backend, not per call; used by OpenAiBackend
/// and AnthropicBackend.
ChatEndpoint make_chat_endpoint(const OpenAiOptions& options, std::string url, std::vector<std::string> headers,
                                RateLimiter* limiter, CurlHandlePool* pool, EndpointHealth* health);

/// The limiter every call of a backend built from `options` passes: rpm/tpm budgets (0 =
/// none) and the adaptive back-off after 429s (options.adaptive, max_in_flight). Created
/// for every openai/anthropic backend, budgets or not.
std::unique_ptr<RateLimiter> make_endpoint_limiter(const OpenAiOptions& options);

/// `url` with any "user:pass@" userinfo removed from its authority.
std::string strip_url_userinfo(const std::string& url);

/// The per-option probabilities at the token where the answer letter sits (issue 11).
struct AnswerTokenProbs {
  std::optional<size_t> position;      // index into logprobs.content; nullopt = not found
  std::string token;                   // the generated token there
  std::optional<double> token_prob;    // its own probability, exp(logprob)
  /// Letter -> probability at that position ("B" and " B" merged); nullopt = absent from
  /// the top list (unknown, not zero). Empty when no position was found.
  std::map<std::string, std::optional<double>> probs;
  /// The top list holds tokens that are not option letters: a server whose top logprobs
  /// are the model's distribution before a grammar / guided-choice constraint.
  bool top_has_non_letters = false;
  /// The letters the top list itself carried (not counting the sampled token's own
  /// probability): the argmax scoring path ranks only these.
  std::set<std::string> listed_letters;
  std::string note;  // why no position was found ("" when found)
};

/// Finds the answer position in `logprobs` = choices[0].logprobs ({"content": [{"token",
/// "logprob", "top_logprobs": [{"token", "logprob"}, ...]}]}): the generated tokens are
/// concatenated; the position is the token holding the first non-space character after the
/// LAST "<answer>" (case-insensitive), or, without such a tag, the last token that is one
/// of `letters` after trimming whitespace. The first generated token is NOT the answer
/// position for a reply like "<answer>B</answer>" (it is "<"). A position whose token is
/// not a bare letter (e.g. ">B") is not found: its alternatives are not per-option
/// probabilities. Source: issue 11 item 1; seed 003 §3 (logprob scoring path).
AnswerTokenProbs answer_token_probabilities(const nlohmann::json& logprobs, const std::vector<std::string>& letters);

/// answer_token_probabilities(logprobs, letters).probs: per-option probabilities at the
/// answer position (for a one-token reply "B", the first token). The sampled token's own
/// logprob counts when the top list does not carry it, so `top_logprobs` null, absent and
/// [] give the same result: every option unknown except the sampled one (issue 13 item 8).
/// Empty map if logprobs is null/malformed or no answer position is found.
std::map<std::string, std::optional<double>> option_probabilities(const nlohmann::json& logprobs,
                                                                   const std::vector<std::string>& letters);

}  // namespace nf
