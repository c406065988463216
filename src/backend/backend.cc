// ChatRequest <-> OpenAI chat/completions request body (the wire contract shared by the
// openai client and the serve-sim server).
#include "backend/backend.h"

#include <cmath>
#include <string>

namespace nf {

nlohmann::json ChatRequest::to_openai_json() const {
  nlohmann::json body = nlohmann::json::object();
  body["model"] = model;
  nlohmann::json msgs = nlohmann::json::array();
  for (const auto& m : messages) msgs.push_back({{"role", m.role}, {"content", m.content}});
  body["messages"] = std::move(msgs);
  body["temperature"] = temperature;
  body["top_p"] = top_p;
  body["max_tokens"] = max_tokens;
  if (seed) body["seed"] = *seed;
  if (extra_body.is_object()) {
    for (const auto& [key, value] : extra_body.items()) body[key] = value;
  }
  return body;
}

namespace {

Status bad(const std::string& field, const std::string& why) {
  return InvalidArgument("chat request: '" + field + "' " + why);
}

// Content is a string, null (""), or an array of {"type":"text","text":...} parts.
Result<std::string> message_content(const nlohmann::json& c, const std::string& field) {
  if (c.is_null()) return std::string();
  if (c.is_string()) return c.get<std::string>();
  if (c.is_array()) {
    std::string out;
    for (const auto& part : c) {
      if (!part.is_object() || part.value("type", "") != "text" || !part.contains("text") ||
          !part["text"].is_string()) {
        return bad(field, "has a content part that is not {\"type\": \"text\", \"text\": string}");
      }
      out += part["text"].get<std::string>();
    }
    return out;
  }
  return bad(field, "must be a string, null or an array of text parts");
}

Result<double> finite_number(const nlohmann::json& v, const std::string& field) {
  if (!v.is_number()) return bad(field, "must be a number");
  const double x = v.get<double>();
  if (!std::isfinite(x)) return bad(field, "must be finite");
  return x;
}

}  // namespace

Result<ChatRequest> ChatRequest::from_openai_json(const nlohmann::json& body) {
  if (!body.is_object()) return InvalidArgument("chat request: body must be a JSON object");
  ChatRequest req;
  req.extra_body = nlohmann::json::object();
  bool have_model = false;
  bool have_messages = false;
  for (const auto& [key, value] : body.items()) {
    if (key == "model") {
      if (!value.is_string()) return bad(key, "must be a string");
      req.model = value.get<std::string>();
      have_model = true;
    } else if (key == "messages") {
      if (!value.is_array()) return bad(key, "must be an array");
      for (size_t i = 0; i < value.size(); ++i) {
        const auto& m = value[i];
        const std::string field = "messages[" + std::to_string(i) + "]";
        if (!m.is_object()) return bad(field, "must be an object");
        if (!m.contains("role") || !m["role"].is_string()) return bad(field + ".role", "must be a string");
        ChatMessage msg;
        msg.role = m["role"].get<std::string>();
        if (m.contains("content")) {
          NF_ASSIGN_OR_RETURN(msg.content, message_content(m["content"], field + ".content"));
        }
        req.messages.push_back(std::move(msg));
      }
      have_messages = true;
    } else if (key == "temperature") {
      if (value.is_null()) continue;
      NF_ASSIGN_OR_RETURN(req.temperature, finite_number(value, key));
      if (req.temperature < 0.0) return bad(key, "must be >= 0");
    } else if (key == "top_p") {
      if (value.is_null()) continue;
      NF_ASSIGN_OR_RETURN(req.top_p, finite_number(value, key));
      if (!(req.top_p > 0.0 && req.top_p <= 1.0)) return bad(key, "must be in (0, 1]");
    } else if (key == "seed") {
      if (value.is_null()) continue;
      if (value.is_number_unsigned()) {
        const auto u = value.get<uint64_t>();
        if (u > static_cast<uint64_t>(INT64_MAX)) return bad(key, "is out of the int64 range");
        req.seed = static_cast<int64_t>(u);
      } else if (value.is_number_integer()) {
        req.seed = value.get<int64_t>();
      } else {
        return bad(key, "must be an integer");
      }
    } else if (key == "max_tokens" || key == "max_completion_tokens") {
      if (value.is_null()) continue;
      if (!value.is_number_integer()) return bad(key, "must be an integer");
      const auto n = value.get<int64_t>();
      if (n < 1 || n > INT32_MAX) return bad(key, "must be in [1, 2147483647]");
      req.max_tokens = static_cast<int>(n);
    } else {
      req.extra_body[key] = value;
    }
  }
  if (!have_model) return bad("model", "is missing");
  if (!have_messages) return bad("messages", "is missing");
  return req;
}

}  // namespace nf
