// serve-sim: the simulator behind an OpenAI-compatible HTTP API on loopback (DESIGN.md
// "Backends"), so the HTTP client is tested end to end and any OpenAI-compatible tool
// can be pointed at a model with known ground truth.
#pragma once

#include <memory>
#include <string>

#include "backend/sim.h"
#include "util/status.h"

namespace nf {

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
