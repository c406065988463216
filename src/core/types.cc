#include "core/types.h"

#include <fmt/format.h>

namespace nf {

std::string_view draw_status_name(DrawStatus s) {
  switch (s) {
    case DrawStatus::kOk: return "ok";
    case DrawStatus::kParseError: return "parse_error";
    case DrawStatus::kApiError: return "api_error";
    case DrawStatus::kRefused: return "refused";
  }
  return "unknown";
}

Result<DrawStatus> parse_draw_status(std::string_view name) {
  if (name == "ok") return DrawStatus::kOk;
  if (name == "parse_error") return DrawStatus::kParseError;
  if (name == "api_error") return DrawStatus::kApiError;
  if (name == "refused") return DrawStatus::kRefused;
  return InvalidArgument(fmt::format("unknown draw status '{}' (expected ok, parse_error, api_error, refused)", name));
}

std::string DrawKey::to_string() const {
  return fmt::format("{}|{}|{}|{}|{}", subject, item, condition, config, replicate);
}

nlohmann::json Config::to_json() const {
  nlohmann::json j = {{"id", id},
                      {"temperature", temperature},
                      {"top_p", top_p},
                      {"max_tokens", max_tokens},
                      {"template", template_name}};
  j["seed"] = seed ? nlohmann::json(*seed) : nlohmann::json(nullptr);
  if (fewshot > 0) j["fewshot"] = fewshot;
  return j;
}

}  // namespace nf
