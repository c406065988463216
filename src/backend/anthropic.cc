#include "backend/anthropic.h"

#include <algorithm>

#include "backend/finish_reason.h"
#include "backend/http.h"
#include "util/json_depth.h"

namespace nf {

nlohmann::json to_anthropic_json(const ChatRequest& request) {
  nlohmann::json body = nlohmann::json::object();
  body["model"] = request.model;
  body["max_tokens"] = request.max_tokens;
  std::string system;
  nlohmann::json msgs = nlohmann::json::array();
  for (const auto& m : request.messages) {
    if (m.role == "system") {
      if (!system.empty()) system += "\n\n";
      system += m.content;
    } else {
      msgs.push_back({{"role", m.role}, {"content", m.content}});
    }
  }
  if (!system.empty()) body["system"] = system;
  body["messages"] = std::move(msgs);
  body["temperature"] = request.temperature;
  if (request.top_p != 1.0) body["top_p"] = request.top_p;
  if (request.extra_body.is_object()) {
    for (const auto& [key, value] : request.extra_body.items()) body[key] = value;
  }
  return body;
}

bool parse_anthropic_body(const std::string& body, ChatResponse& r) {
  if (Status deep = check_json_depth(body, "reply"); !deep.ok()) {  // as parse_openai_body_dom
    r.error = std::string(deep.message());
    return false;
  }
  const nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return false;
  const auto content = j.find("content");
  if (content == j.end() || !content->is_array()) return false;
  r.content.clear();
  for (const auto& block : *content) {
    if (block.is_object() && block.value("type", "") == "text" && block.contains("text") && block["text"].is_string())
      r.content += block["text"].get<std::string>();
  }
  const std::string stop = j.contains("stop_reason") && j["stop_reason"].is_string() ? j["stop_reason"].get<std::string>() : "";
  if (stop == "max_tokens") r.finish_reason = "length";
  else if (stop == "end_turn" || stop == "stop_sequence") r.finish_reason = "stop";
  else if (stop == "tool_use") r.finish_reason = "tool_calls";
  else r.finish_reason = stop;
  if (auto m = j.find("model"); m != j.end() && m->is_string()) r.served_model = m->get<std::string>();
  if (auto u = j.find("usage"); u != j.end() && u->is_object()) {
    if (auto p = u->find("input_tokens"); p != u->end() && p->is_number_integer()) r.prompt_tokens = p->get<int64_t>();
    if (auto p = u->find("output_tokens"); p != u->end() && p->is_number_integer())
      r.completion_tokens = p->get<int64_t>();
  }
  r.kind = ResponseKind::kOk;
  if (stop == "refusal") {
    r.kind = ResponseKind::kRefused;
    r.error = "refusal";
  } else if (std::string e = abnormal_finish_error(r.finish_reason); !e.empty()) {
    r.kind = ResponseKind::kApiError;  // an unknown stop_reason: the text is no answer
    r.error = std::move(e);
  }
  return true;
}

AnthropicBackend::AnthropicBackend(OpenAiOptions options) : options_(std::move(options)) {
  pool_ = std::make_unique<CurlHandlePool>();
  base_url_ = options_.base_url;
  while (!base_url_.empty() && base_url_.back() == '/') base_url_.pop_back();
  std::vector<std::string> headers = {"Content-Type: application/json", "Expect:", "anthropic-version: 2023-06-01"};
  if (!options_.api_key.empty()) headers.push_back("x-api-key: " + options_.api_key);
  limiter_ = make_endpoint_limiter(options_);
  endpoint_ = make_chat_endpoint(options_, base_url_ + "/messages", std::move(headers), limiter_.get(), pool_.get(),
                                 &health_);
}

std::string AnthropicBackend::identity() const { return "anthropic:" + strip_url_userinfo(base_url_); }

AsyncChatCall AnthropicBackend::async_call(const ChatRequest& request, const std::string* openai_body_text) {
  AsyncChatCall call;
  (void)openai_body_text;  // another wire format
  call.endpoint = &endpoint_;
  call.payload = to_anthropic_json(request).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  call.parse = parse_anthropic_body;
  call.rng = Rng::stream(options_.jitter_seed, {calls_.fetch_add(1)});
  call.max_tokens = request.max_tokens;
  return call;
}

ChatResponse AnthropicBackend::complete(const ChatRequest& request) {
  Rng rng = Rng::stream(options_.jitter_seed, {calls_.fetch_add(1)});
  const std::string payload = to_anthropic_json(request).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return post_chat(endpoint_, payload, parse_anthropic_body, rng, request.max_tokens);
}

}  // namespace nf
