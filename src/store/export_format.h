// Internal to src/store: the field formats both stores' exports share (docs/store.md
// "Exports"): RFC 4180 CSV fields and the config axes read from a config id. In a namespace
// of their own: nf::config_axes (metrics/envelope.h) is another function.
#pragma once

#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace nf::store_export {

// RFC 4180 field: quoted when it holds a comma, quote, CR or LF, or leading/trailing
// space; quotes doubled.
inline std::string csv_field(std::string_view s) {
  bool quote = s.find_first_of(",\"\r\n") != std::string_view::npos ||
               (!s.empty() && (s.front() == ' ' || s.back() == ' ' || s.front() == '\t' || s.back() == '\t'));
  if (!quote) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

// The axes of a config id as written by spec::expand_configs ("temperature=0.7,top_p=0.9";
// "default" = no varying axis): [(axis, value text)] in id order.
inline std::vector<std::pair<std::string, std::string>> config_axes(const std::string& id) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t start = 0;
  while (start < id.size()) {
    size_t end = id.find(',', start);
    if (end == std::string::npos) end = id.size();
    const std::string part = id.substr(start, end - start);
    const size_t eq = part.find('=');
    if (eq != std::string::npos && eq > 0) out.emplace_back(part.substr(0, eq), part.substr(eq + 1));
    start = end + 1;
  }
  return out;
}

// A config axis value as JSON: a number when it reads as one, null for "null", else the text.
inline nlohmann::json axis_value_json(const std::string& v) {
  if (v == "null") return nullptr;
  char* end = nullptr;
  const double d = std::strtod(v.c_str(), &end);
  if (!v.empty() && end == v.c_str() + v.size()) return d;
  return v;
}

}  // namespace nf::store_export
