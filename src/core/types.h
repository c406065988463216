// The data model shared by every layer above core (DESIGN.md "Data flow").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/status.h"

namespace nf {

/// The status of one draw (DESIGN.md "Error taxonomy"; never mix these).
///  ok          the model answered and every outcome was extracted;
///  parse_error the model answered but no outcome could be extracted (seed 003 App. D);
///  api_error   transport/HTTP/timeout/malformed body: never scored (seed 004 §6);
///  refused     provider moderation or an explicit refusal.
enum class DrawStatus { kOk, kParseError, kApiError, kRefused };

std::string_view draw_status_name(DrawStatus s);
Result<DrawStatus> parse_draw_status(std::string_view name);

/// The primary key of a draw: (subject, item, condition, config, replicate) within one
/// study. Replicates are numbered from 0. A cached response never stands in for a
/// different replicate (the replicate is part of every cache key).
struct DrawKey {
  std::string subject;
  std::string item;
  std::string condition;
  std::string config;
  int replicate = 0;

  /// "subject|item|condition|config|replicate": unique, stable, used as a map key.
  std::string to_string() const;
  friend bool operator==(const DrawKey&, const DrawKey&) = default;
  friend auto operator<=>(const DrawKey&, const DrawKey&) = default;
};

/// One extracted outcome of a draw. `value` is numeric (1/0 for binary outcomes, an
/// option index for a choice); `label` is an optional human-readable form ("B").
struct Outcome {
  std::string name;
  double value = 0.0;
  std::string label;
};

/// A multiple-choice option.
struct McqOption {
  std::string letter;  // "A".."J"
  std::string text;
};

/// A multiple-choice item as read from a dataset (seed 004 §2.4). `answer` is the gold
/// letter; `cluster` groups items for cluster bootstrap (defaults to the item id).
struct McqItem {
  std::string id;
  std::string cluster;
  std::string question;
  std::vector<McqOption> options;
  std::string answer;
  nlohmann::json meta = nlohmann::json::object();
};

/// A decoding/template configuration: one point of the configuration envelope
/// (seed 003 §3). `id` is a stable label derived from the varying axes.
struct Config {
  std::string id;
  double temperature = 0.0;
  double top_p = 1.0;
  std::optional<int64_t> seed;
  int max_tokens = 512;
  std::string template_name = "default";
  int fewshot = 0;  // solved exemplars before the question (seed 003 §3 few-shot axis)

  nlohmann::json to_json() const;
};

/// A chat message.
struct ChatMessage {
  std::string role;  // "system" | "user" | "assistant"
  std::string content;
};

/// A completed draw as stored (docs/store.md, table `draws`).
struct Draw {
  DrawKey key;
  DrawStatus status = DrawStatus::kOk;
  std::string cluster;            // item cluster, copied for analyses
  nlohmann::json request;         // the request body actually sent
  // `request` already dumped (compact, invalid UTF-8 replaced: request.dump(-1, ' ',
  // false, replace), the bytes the event loop sent): the store writes these bytes instead
  // of dumping `request` again. Empty: the store dumps `request`.
  std::string request_text;
  std::string raw_response;       // the response body as received
  std::string content;            // the assistant text
  std::vector<Outcome> outcomes;  // empty unless status == ok
  std::string error;              // api_error / parse_error detail
  double latency_ms = 0.0;
  int64_t prompt_tokens = -1;     // -1 = not reported
  int64_t completion_tokens = -1;
  std::string finish_reason;
  std::string served_model;
  std::string system_fingerprint;
  bool cached = false;            // served from the response cache
  int attempts = 1;
  nlohmann::json extra = nlohmann::json::object();  // condition details, e.g. permutation
};

}  // namespace nf
