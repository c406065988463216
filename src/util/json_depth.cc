// See json_depth.h.
#include "util/json_depth.h"

#include <fmt/format.h>

namespace nf {

Status check_json_depth(std::string_view text, std::string_view where, size_t max_depth) {
  size_t depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;  // the escaped character is never a quote that ends the string
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth)
        return InvalidArgument(fmt::format("{}: JSON nested deeper than {} levels (arrays and objects inside each other)",
                                           where, max_depth));
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return Status::Ok();
}

}  // namespace nf
