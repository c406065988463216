// The model-client interface: one chat completion request in, one classified response
// out. Implementations: sim (in-process simulator), openai (OpenAI-compatible HTTP).
// Every implementation is thread-safe: the runner calls complete() from several threads.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/types.h"
#include "util/status.h"

namespace nf {

/// One chat request. `seed` is the per-draw seed the runner derives from the config seed
/// and the replicate index (runner/plan.h); the simulator's randomness depends only on
/// (model, messages, seed, temperature, top_p), so the in-process and HTTP paths agree.
struct ChatRequest {
  std::string model;
  std::vector<ChatMessage> messages;
  double temperature = 0.0;
  double top_p = 1.0;
  std::optional<int64_t> seed;
  int max_tokens = 512;
  nlohmann::json extra_body = nlohmann::json::object();  // vendor fields, merged verbatim

  /// The OpenAI chat/completions request body.
  nlohmann::json to_openai_json() const;
  /// Parses an OpenAI chat/completions request body. InvalidArgument names the bad field.
  static Result<ChatRequest> from_openai_json(const nlohmann::json& body);
};

/// How a request ended (DESIGN.md error taxonomy, before answer parsing).
enum class ResponseKind { kOk, kApiError, kRefused };

struct ChatResponse {
  ResponseKind kind = ResponseKind::kOk;
  std::string content;             // assistant text (kOk)
  std::string finish_reason;       // "stop", "length", "content_filter", ...
  std::string served_model;        // response "model"
  std::string system_fingerprint;  // response "system_fingerprint"
  int64_t prompt_tokens = -1;
  int64_t completion_tokens = -1;
  double latency_ms = 0.0;
  int http_status = 0;             // 0 for in-process backends
  /// The last attempt failed below HTTP: connection refused or reset, timeout, a transfer
  /// cut off (never set by in-process backends). With http_status >= 500 after the
  /// retries, what the runner's circuit breaker counts (runner.h RunOptions).
  bool transport_error = false;
  /// The last attempt timed out after the endpoint had sent no HTTP response at all for
  /// its whole timeout_s (a hung server: http.h EndpointHealth); the runner's circuit
  /// breaker stops the run on the first such draw. Implies transport_error.
  bool endpoint_silent = false;
  /// The call was cut by a stop (http.h ChatEndpoint::abandon): not an answer and not a
  /// failure of the server; the runner never stores the draw (a resume runs it).
  bool abandoned = false;
  std::string raw_body;            // response body as received (or synthesised by sim)
  std::string error;               // api_error / refusal detail
  int attempts = 1;
  /// Provenance: the server's relevant response headers (http.h provenance_headers).
  std::map<std::string, std::string> headers;
  /// choices[0].logprobs as received (null when not requested or not returned).
  nlohmann::json logprobs;
};

class Backend {
 public:
  virtual ~Backend() = default;
  /// Sends one request. Never throws; transport failures return kind = kApiError.
  virtual ChatResponse complete(const ChatRequest& request) = 0;
  /// "sim", "openai", ...
  virtual std::string kind() const = 0;
  /// An identity for cache keys and provenance, with credentials stripped
  /// (e.g. "openai:http://127.0.0.1:8080/v1").
  virtual std::string identity() const = 0;
};

}  // namespace nf
