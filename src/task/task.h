// The task interface (DESIGN.md layer 4): item + condition + config -> one or more
// requests; responses -> outcomes. The runner owns scheduling, caching and the store; a
// task owns what is asked and how the answer is scored. A multi-call task (a staged
// agent, seed 000 §III.A; a FHIR agent, seed 002) makes several calls within one draw.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/backend.h"
#include "core/types.h"
#include "util/status.h"

namespace nf {

/// An item as the store records it.
struct TaskItem {
  std::string id;
  std::string cluster;
  nlohmann::json data;  // the item as JSON (stored in the items table)
};

/// What a task needs to know about the draw it executes.
struct DrawContext {
  DrawKey key;
  Config config;
  std::string model;                       // the subject's model name
  std::optional<int64_t> seed;             // the per-replicate request seed (runner/runner.h)
  nlohmann::json extra_body = nlohmann::json::object();
};

/// The request a task sends for the draw `ctx` with `messages`: the subject's model, the
/// config's temperature, top_p and max_tokens, the per-replicate seed and the subject's
/// extra_body. Shared by every task so that all send the same decoding settings.
inline ChatRequest draw_request(const DrawContext& ctx, std::vector<ChatMessage> messages) {
  ChatRequest req;
  req.model = ctx.model;
  req.messages = std::move(messages);
  req.temperature = ctx.config.temperature;
  req.top_p = ctx.config.top_p;
  req.seed = ctx.seed;
  req.max_tokens = ctx.config.max_tokens;
  req.extra_body = ctx.extra_body;
  return req;
}

/// Sends one request for the current draw and returns the classified response. The
/// runner's implementation consults the response cache (keyed by backend identity,
/// request body, draw key and call index) before calling the backend.
using CallFn = std::function<ChatResponse(const ChatRequest&)>;

/// The result of one draw. For a multi-call task `request`/`response` describe the last
/// call and `transcript` holds every call.
struct TaskDrawResult {
  DrawStatus status = DrawStatus::kOk;
  std::vector<Outcome> outcomes;  // empty unless status == ok
  std::string error;
  nlohmann::json request = nlohmann::json::object();
  ChatResponse response;           // the last response (content, usage, provenance)
  nlohmann::json detail = nlohmann::json::object();      // condition details (e.g. permutation)
  nlohmann::json transcript = nlohmann::json::array();   // per call: request body, content, status
  int calls = 0;
};

class Task {
 public:
  virtual ~Task() = default;
  /// "mcq", ...
  virtual std::string name() const = 0;
  virtual const std::vector<TaskItem>& items() const = 0;
  /// Validates every (item, condition) pair before any call is made. InvalidArgument
  /// names the item and the condition.
  virtual Status prepare(const std::vector<std::string>& conditions, uint64_t study_seed) = 0;
  /// Executes one draw of item `item_index` under `condition`. Thread-safe (const);
  /// never throws; API failures come back as status api_error, never as outcomes.
  virtual TaskDrawResult run(size_t item_index, const std::string& condition, const DrawContext& ctx,
                             const CallFn& call) const = 0;

  /// True when every draw is at most ONE call whose request depends on no reply (MCQ):
  /// then run() is begin_draw(), the call, finish_draw(), and the runner may drive many
  /// such draws from one event loop (runner.cc). Multi-call tasks (agents, chat with
  /// judges) keep the default false and are only run().
  virtual bool single_call() const { return false; }
  /// First half of a single-call draw: fills `out` (detail, and `request` =
  /// the returned request's to_openai_json(), which the runner sends as built) and returns
  /// the request to send, or nullopt when the draw ended without a call (`out.status` and
  /// `out.error` say why; never an outcome). Thread-safe (const). The default (a task that
  /// is not single_call) ends every draw as an internal parse_error.
  virtual std::optional<ChatRequest> begin_draw(size_t item_index, const std::string& condition,
                                                const DrawContext& ctx, TaskDrawResult& out) const {
    (void)item_index, (void)condition, (void)ctx;
    out.status = DrawStatus::kParseError;  // never an outcome
    out.error = "internal: task " + name() + " has no single-call draws (run it with run())";
    return std::nullopt;
  }
  /// Second half: scores `response`, the reply to `request` from begin_draw(), into `out`
  /// (status, outcomes, error, response, calls = 1). Thread-safe (const).
  virtual void finish_draw(size_t item_index, const std::string& condition, const ChatRequest& request,
                           ChatResponse response, TaskDrawResult& out) const {
    (void)item_index, (void)condition, (void)request;
    out.response = std::move(response);
  }
};

}  // namespace nf
