// The Anthropic Messages API backend (DESIGN.md "Backends", anthropic; issue 6 item 6),
// sharing the transport, retry policy and rate limits of the openai backend.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/openai.h"
#include "backend/http.h"
#include "backend/rate_limit.h"

namespace nf {

/// The Messages API request body for `request`: system messages are joined into the
/// top-level "system" string; the others go to "messages" as {role, content}; max_tokens,
/// temperature and (when not 1) top_p are sent; `seed` is not (the API has none);
/// extra_body keys are merged verbatim. Source: Anthropic Messages API reference.
nlohmann::json to_anthropic_json(const ChatRequest& request);

/// Parses a Messages API reply: the text blocks of "content" are concatenated;
/// stop_reason "max_tokens" -> finish_reason "length", "end_turn"/"stop_sequence" ->
/// "stop", "tool_use" -> "tool_calls", "refusal" -> kRefused; usage input/output_tokens
/// -> prompt/completion tokens. False (malformed) if the body is not a JSON object with a
/// "content" array, or nests arrays/objects deeper than kMaxJsonDepth (util/json_depth.h;
/// then r.error names the limit).
bool parse_anthropic_body(const std::string& body, ChatResponse& r);

/// POSTs to {base_url}/messages (base_url e.g. "https://api.anthropic.com/v1") with the
/// headers x-api-key (from OpenAiOptions::api_key) and anthropic-version: 2023-06-01.
/// Options, retries, rate limits and error classification as OpenAiBackend.
class AnthropicBackend final : public Backend, public AsyncChatSource {
 public:
  explicit AnthropicBackend(OpenAiOptions options);
  ChatResponse complete(const ChatRequest& request) override;
  std::string kind() const override { return "anthropic"; }
  /// "anthropic:" + base_url without userinfo and trailing '/'.
  std::string identity() const override;
  /// The call complete(request) makes, for an event loop (http.h ChatMulti).
  AsyncChatCall async_call(const ChatRequest& request, const std::string* openai_body_text = nullptr) override;

 private:
  OpenAiOptions options_;
  std::string base_url_;
  std::unique_ptr<RateLimiter> limiter_;
  std::atomic<uint64_t> calls_{0};
  std::unique_ptr<CurlHandlePool> pool_;
  EndpointHealth health_;
  ChatEndpoint endpoint_;  // built once in the constructor
};

}  // namespace nf
