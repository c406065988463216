// serve-sim: the simulator behind an OpenAI-compatible HTTP API on loopback (DESIGN.md
// "Backends"), so the HTTP client is tested end to end and any OpenAI-compatible tool
// can be pointed at a model with known ground truth.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/sim.h"
#include "util/status.h"

namespace nf {

/// Fault injection for rehearsing a bad day on loopback (issue 6 item 10; `serve-sim
/// --latency-ms --fail-rate --fail-kinds --retry-after`). Each chat request is delayed by
/// latency_ms, then fails with probability fail_rate with a kind drawn uniformly from
/// `kinds`:
///   "429"      429 with `Retry-After: <retry_after>` and an OpenAI-style error body
///   "500"      500 with an error body
///   "reset"    the status line and headers of a 200, then the connection is closed
///              mid-body (the client sees a transport error)
///   "truncate" 200 whose JSON body is cut in half (Content-Length matches the cut body)
///   "slow"     the correct reply after an extra slow_ms
/// The draw depends only on (seed, the request body, how many times this body was seen
/// before), never on arrival order, so a study's faults are reproducible under any
/// concurrency.
/// A 429 fault whose retry_after is a positive whole number of seconds S also throttles
/// the server as a real rate limiter does: every chat request arriving in the next S
/// seconds is answered 429 with the remaining seconds as Retry-After, without drawing a
/// fault (the per-body fault stream does not advance), so a client that keeps sending
/// during the window collects extra 429s and one that honours Retry-After endpoint-wide
/// collects none (issue 6 item 2).
struct FaultOptions {
  double latency_ms = 0.0;   // added to every chat request (>= 0)
  double fail_rate = 0.0;    // in [0, 1]
  std::vector<std::string> kinds{"429", "500", "reset", "truncate", "slow"};
  std::string retry_after = "1";  // sent verbatim with 429s
  double slow_ms = 2000.0;   // extra delay of a "slow" fault
  uint64_t seed = 1;         // fault stream seed

  /// The known kinds, in the order 429, 500, reset, truncate, slow.
  static const std::vector<std::string>& known_kinds();
  /// Parses "429,500,reset" into kinds. InvalidArgument names an unknown kind with a
  /// did-you-mean.
  static Result<std::vector<std::string>> parse_kinds(const std::string& csv);
  /// InvalidArgument when a value is out of range or kinds is empty while fail_rate > 0.
  Status validate() const;
};

/// What the server has answered so far (thread-safe snapshot).
struct SimServerCounters {
  int64_t chat_requests = 0;   // POSTs to the chat endpoint
  int64_t faults_429 = 0, faults_500 = 0, faults_reset = 0, faults_truncate = 0, faults_slow = 0;
  int64_t throttled_429 = 0;   // 429s sent inside a throttle window (no fault drawn)
  int64_t total_429() const { return faults_429 + throttled_429; }
  nlohmann::json to_json() const;
};

/// Simulated subjects served by name (`serve-sim --study`, runner/sim_models.h): the
/// request's `model` selects its SimParams, as a vLLM or llama.cpp server with several
/// served model names selects the weights. Empty = one parameter set for every name.
using SimModels = std::map<std::string, SimParams>;

/// An httplib::Server on a background thread, bound to 127.0.0.1 only. Endpoints:
///   POST /v1/chat/completions, /chat/completions: ChatRequest::from_openai_json ->
///        SimBackend::complete -> the OpenAI chat.completion body (created = now);
///        malformed JSON or fields -> 400 {"error": {"message", "type": "invalid_request_error"}}
///   GET  /v1/models, /models: {"object": "list", "data": [{"id": "sim", ...}]}
///   GET  /health: "ok"
///   GET  /v1/sim/stats: SimServerCounters as {"chat_requests", "faults": {"429", "500",
///        "reset", "truncate", "slow"}, "throttled_429", "total_429"}
/// Logprobs: a request with "logprobs": true and "top_logprobs": N (1..20) whose last user
/// message is an MCQ prompt gets choices[0].logprobs = {"content": [one entry per token of
/// the reply]} (sim_mcq_logprobs): at the answer letter after "<answer>", "top_logprobs"
/// holds the N most likely option letters under the sim's latent option distribution
/// (temperature 1, top_p 1; SimBackend::option_logits), most likely first, so letters
/// beyond N are absent (unknown) as with a real server.
/// Models: without a SimModels table any model name is accepted (it is part of the
/// simulator's streams) and answered with the one SimParams. With a table, a request is
/// answered by its model's own SimBackend -- the same reply, logprobs and
/// system_fingerprint ("sim-" + that model's params hash) as `backend: sim` with those
/// params in process -- and an unknown name gets 404 {"error": {"message": "The model `X`
/// does not exist ...", "type": "NotFoundError", "code": 404}} as vLLM answers it;
/// /v1/models lists the table's names. Thread-safe.
class SimServer {
 public:
  /// Binds 127.0.0.1:`port` (0 = any free port) and starts serving.
  /// Errors: Unavailable "cannot bind 127.0.0.1:PORT" when the port is taken.
  static Result<std::unique_ptr<SimServer>> start(SimParams params, int port = 0);
  /// As above, with fault injection. Errors also: InvalidArgument from faults.validate().
  static Result<std::unique_ptr<SimServer>> start(SimParams params, int port, FaultOptions faults);
  /// As above, serving `models` by name (see the class comment); `params` answers every
  /// name when `models` is empty.
  static Result<std::unique_ptr<SimServer>> start(SimParams params, int port, FaultOptions faults, SimModels models);

  struct Impl;
  /// Use start(); public only for std::make_unique.
  explicit SimServer(std::unique_ptr<Impl> impl);
  ~SimServer();
  SimServer(const SimServer&) = delete;
  SimServer& operator=(const SimServer&) = delete;

  int port() const;
  /// "http://127.0.0.1:PORT/v1"
  std::string base_url() const;
  /// The counters so far.
  SimServerCounters counters() const;
  /// Stops serving and joins the thread; idempotent.
  void stop();

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace nf
