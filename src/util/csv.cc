#include "util/csv.h"

#include <fmt/format.h>

namespace nf {

size_t CsvTable::column(const std::string& name) const {
  for (size_t c = 0; c < header.size(); ++c)
    if (header[c] == name) return c;
  return std::string::npos;
}

Result<CsvTable> parse_csv(const std::string& path, const std::string& text) {
  std::vector<std::pair<size_t, std::vector<std::string>>> recs;
  size_t i = text.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0, line = 1;
  const size_t n = text.size();
  while (i < n) {
    std::vector<std::string> fields;
    const size_t start_line = line;
    for (;;) {
      std::string f;
      if (i < n && text[i] == '"') {
        ++i;
        bool closed = false;
        while (i < n) {
          if (text[i] == '"') {
            if (i + 1 < n && text[i + 1] == '"') {
              f += '"';
              i += 2;
              continue;
            }
            ++i;
            closed = true;
            break;
          }
          if (text[i] == '\n') ++line;
          f += text[i++];
        }
        if (!closed) return InvalidArgument(fmt::format("{}:{}: malformed CSV: unterminated quoted field", path, start_line));
      } else {
        while (i < n && text[i] != ',' && text[i] != '\n' && text[i] != '\r') f += text[i++];
      }
      fields.push_back(std::move(f));
      if (i < n && text[i] == ',') {
        ++i;
        continue;
      }
      if (i < n && text[i] == '\r') ++i;
      if (i < n && text[i] == '\n') {
        ++i;
        ++line;
      }
      break;
    }
    if (!(fields.size() == 1 && fields[0].empty())) recs.emplace_back(start_line, std::move(fields));
  }
  if (recs.empty()) return InvalidArgument(fmt::format("{}: empty file (expected a header row)", path));
  CsvTable t;
  t.header_line = recs[0].first;
  t.header = std::move(recs[0].second);
  for (size_t c = 0; c < t.header.size(); ++c) {
    for (size_t e = 0; e < c; ++e) {
      if (t.header[e] == t.header[c])  // a second column of the same name would silently win
        return InvalidArgument(
            fmt::format("{}:{}: {}: duplicate column in the header", path, t.header_line, t.header[c]));
    }
  }
  for (size_t r = 1; r < recs.size(); ++r) {
    if (recs[r].second.size() != t.header.size())
      return InvalidArgument(fmt::format("{}:{}: expected {} fields as in the header, found {}", path, recs[r].first,
                                         t.header.size(), recs[r].second.size()));
    t.records.push_back(std::move(recs[r]));
  }
  return t;
}

}  // namespace nf
