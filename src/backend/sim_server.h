// serve-sim: the simulator behind an OpenAI-compatible HTTP API on loopback (DESIGN.md
// "Backends"), so the HTTP client is tested end to end and any OpenAI-compatible tool
// can be pointed at a model with known ground truth.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backend/sim.h"
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

/// An httplib::Server on a background thread, bound to 127.0.0.1 only. Endpoints:
///   POST /v1/chat/completions, /chat/completions: ChatRequest::from_openai_json ->
///        SimBackend::complete -> the OpenAI chat.completion body (created = now);
///        malformed JSON or fields -> 400 {"error": {"message", "type": "invalid_request_error"}}
///   GET  /v1/models, /models: {"object": "list", "data": [{"id": "sim", ...}]}
///   GET  /health: "ok"
/// Any model name is accepted (it is part of the simulator's streams). Thread-safe.
class SimServer {
 public:
  /// Binds 127.0.0.1:`port` (0 = any free port) and starts serving.
  /// Errors: Unavailable "cannot bind 127.0.0.1:PORT" when the port is taken.
  static Result<std::unique_ptr<SimServer>> start(SimParams params, int port = 0);
  /// As above, with fault injection. Errors also: InvalidArgument from faults.validate().
  static Result<std::unique_ptr<SimServer>> start(SimParams params, int port, FaultOptions faults);

  struct Impl;
  /// Use start(); public only for std::make_unique.
  explicit SimServer(std::unique_ptr<Impl> impl);
  ~SimServer();
  SimServer(const SimServer&) = delete;
  SimServer& operator=(const SimServer&) = delete;

  int port() const;
  /// "http://127.0.0.1:PORT/v1"
  std::string base_url() const;
  /// Stops serving and joins the thread; idempotent.
  void stop();

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace nf
