#include "backend/finish_reason.h"

#include <string_view>

#include <fmt/format.h>

namespace nf {

std::string abnormal_finish_error(const std::string& finish_reason) {
  static constexpr std::string_view kFinished[] = {"stop",           "length",    "tool_calls", "function_call",
                                                   "content_filter", "eos_token", "eos",        "stop_sequence",
                                                   "end_turn",       "max_tokens"};
  if (finish_reason.empty()) return "";
  for (std::string_view f : kFinished)
    if (finish_reason == f) return "";
  std::string shown = finish_reason.substr(0, 60);
  for (char& ch : shown)
    if (static_cast<unsigned char>(ch) < 0x20) ch = '?';  // a server's bytes, shown on one line
  return fmt::format("the generation did not finish (finish_reason '{}', not one of stop, length, tool_calls, "
                     "content_filter, eos_token, stop_sequence): its text is no answer",
                     shown);
}

}  // namespace nf
