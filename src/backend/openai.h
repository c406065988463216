// The OpenAI-compatible chat/completions client over libcurl (DESIGN.md "Backends",
// openai): vLLM, Ollama, llama.cpp server, SGLang, TGI, hosted APIs, and serve-sim.
#pragma once

#include <string>

#include "backend/backend.h"

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
  int max_retries = 2;            // extra attempts on connect errors, 408, 429 and 5xx
};

/// POSTs ChatRequest::to_openai_json() to {base_url}/chat/completions. Thread-safe: one
/// CURL easy handle per call, curl_global_init once.
///
/// Classification (never throws):
///   transport failure              -> kApiError "connect: <curl error>"
///   HTTP non-2xx                   -> kApiError "HTTP <code>: <first 200 chars of body>"
///   2xx, body not JSON or no choices[0].message -> kApiError "malformed response body"
///   finish_reason "content_filter" -> kRefused
///   otherwise                      -> kOk (null content -> "")
/// Retries (minimal): up to max_retries more attempts on transport errors, 408, 429 and
/// 5xx, after 100 ms then 400 ms (400 ms for any later one); other 4xx are not retried.
/// ChatResponse.attempts counts the attempts made; latency_ms is that of the last one.
/// Any occurrence of the API key in an error message is replaced by "[redacted]".
class OpenAiBackend final : public Backend {
 public:
  explicit OpenAiBackend(OpenAiOptions options);

  ChatResponse complete(const ChatRequest& request) override;
  std::string kind() const override { return "openai"; }
  /// "openai:" + base_url without userinfo (user:pass@) and without a trailing '/'.
  std::string identity() const override;

 private:
  OpenAiOptions options_;
  std::string base_url_;  // trailing '/' stripped
};

/// `url` with any "user:pass@" userinfo removed from its authority.
std::string strip_url_userinfo(const std::string& url);

}  // namespace nf
