// Internal to src/store: the field formats both stores' exports share (docs/store.md
// "Exports"): RFC 4180 CSV fields and the config axes read from a config id. In a namespace
// of their own: nf::config_axes (metrics/envelope.h) is another function.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
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

// One row of `export --format csv`: the ten fixed columns (subject, item, condition,
// cluster, config, replicate, status, outcome, value, label; `text(c)`, `int64(c)`,
// `dbl(c)` read column c of the store's query) and then one column per varying axis in
// `axes` (empty where the config has no such axis; a null seed is empty). Values print
// with fmt's "{}", the shortest decimal that reads back to the same double. With
// `no_outcome` (the one row of a draw that is not ok: parse_error, refused, api_error)
// outcome, value and label are empty and columns 7-9 are not read.
template <class Text, class Int64, class Dbl>
void write_csv_row(std::ostream& out, const Text& text, const Int64& int64, const Dbl& dbl,
                   const std::vector<std::string>& axes, bool no_outcome = false) {
  out << csv_field(text(0)) << ',' << csv_field(text(1)) << ',' << csv_field(text(2)) << ',' << csv_field(text(3))
      << ',' << csv_field(text(4)) << ',' << int64(5) << ',' << csv_field(text(6)) << ',';
  if (no_outcome) out << ",,";
  else out << csv_field(text(7)) << ',' << fmt::format("{}", dbl(8)) << ',' << csv_field(text(9));
  const auto values = config_axes(std::string(text(4)));
  for (const auto& a : axes) {
    std::string v;
    for (const auto& [axis, value] : values)
      if (axis == a) v = value == "null" ? "" : value;
    out << ',' << csv_field(v);
  }
  out << '\n';
}

}  // namespace nf::store_export
