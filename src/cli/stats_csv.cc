#include "cli/stats_csv.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "util/file.h"
#include "util/strings.h"

namespace nf::cli {

Result<Csv> read_csv(const std::string& path) {
  NF_ASSIGN_OR_RETURN(std::string text, read_file(path));
  // A UTF-8 byte-order mark (spreadsheet exports) is not part of the first header name;
  // dropped the way `import draws` drops it (data/draws_import.cc).
  if (text.size() >= 3 && std::memcmp(text.data(), "\xEF\xBB\xBF", 3) == 0) text.erase(0, 3);
  std::vector<std::vector<Cell>> records;
  std::vector<Cell> rec;
  Cell cur;
  int line = 1;
  cur.line = 1;
  cur.column = 1;
  bool in_quotes = false;
  bool any = false;
  int quote_line = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (in_quotes) {
      if (ch == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          cur.text += '"';
          ++i;
        } else {
          in_quotes = false;
        }
      } else {
        if (ch == '\n') ++line;
        cur.text += ch;
      }
      continue;
    }
    if (ch == '"') {
      if (!trim(cur.text).empty()) {
        return InvalidArgument(fmt::format("{}:{}:{}: a quote inside an unquoted field", path, line, cur.column));
      }
      cur.text.clear();
      in_quotes = true;
      quote_line = line;
      any = true;
    } else if (ch == ',') {
      rec.push_back(cur);
      cur = Cell{"", line, cur.column + 1};
      any = true;
    } else if (ch == '\n' || ch == '\r') {
      if (ch == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      if (any || !cur.text.empty()) {
        rec.push_back(cur);
        records.push_back(std::move(rec));
      }
      rec.clear();
      ++line;
      cur = Cell{"", line, 1};
      any = false;
    } else {
      cur.text += ch;
      any = true;
    }
  }
  if (in_quotes) return InvalidArgument(fmt::format("{}:{}: unterminated quoted field", path, quote_line));
  if (any || !cur.text.empty()) {
    rec.push_back(cur);
    records.push_back(std::move(rec));
  }
  if (records.empty()) return InvalidArgument(path + ": empty file (expected a header line)");
  Csv csv;
  csv.path = path;
  csv.header_line = records[0][0].line;
  for (const auto& c : records[0]) {
    const std::string name = trim(c.text);
    for (const auto& h : csv.header) {
      if (!name.empty() && h == name)
        return InvalidArgument(fmt::format("{}: column '{}' appears twice in the header", csv.where(c), name));
    }
    csv.header.push_back(name);
  }
  for (size_t r = 1; r < records.size(); ++r) {
    auto& row = records[r];
    if (row.size() > csv.header.size()) {
      return InvalidArgument(fmt::format("{}: {} fields, the header has {}", csv.where(row[csv.header.size()]),
                                         row.size(), csv.header.size()));
    }
    // A short row is refused as a long one is (a truncated line or a lost comma is not
    // "the last raters missing"); missing values are written as empty fields, `q2,B,,`
    // (docs/stats.md), the way `import draws` also refuses short rows.
    if (row.size() < csv.header.size()) {
      std::string as_written;  // the row with its missing fields written empty: "q2,B,,"
      for (size_t i = 0; i < row.size(); ++i) as_written += (i ? "," : "") + trim(row[i].text);
      as_written += std::string(csv.header.size() - row.size(), ',');
      return InvalidArgument(fmt::format("{}:{}: {} field{}, the header has {} (write a missing value as an empty "
                                         "field: '{}')",
                                         csv.path, row[0].line, row.size(), row.size() == 1 ? "" : "s",
                                         csv.header.size(), as_written.size() > 80 ? as_written.substr(0, 77) + "..."
                                                                                     : as_written));
    }
    for (auto& c : row) c.text = trim(c.text);
    csv.rows.push_back(std::move(row));
  }
  if (csv.rows.empty()) return InvalidArgument(path + ": no data rows after the header");
  return csv;
}

Result<size_t> column_index(const Csv& csv, const std::string& name) {
  for (size_t i = 0; i < csv.header.size(); ++i) {
    if (csv.header[i] == name) return i;
  }
  return InvalidArgument(fmt::format("{}:{}: no column named '{}'{}", csv.path, csv.header_line, name,
                                     did_you_mean(name, csv.header)));
}

Result<double> cell_number(const Csv& csv, const Cell& c) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(c.text.c_str(), &end);
  if (c.text.empty() || end != c.text.c_str() + c.text.size() || errno == ERANGE || !std::isfinite(v)) {
    return InvalidArgument(fmt::format("{}: '{}' is not a number", csv.where(c), c.text));
  }
  return v;
}

Result<std::vector<std::vector<double>>> numeric_columns(const Csv& csv, const std::vector<std::string>& names) {
  std::vector<std::vector<double>> out;
  for (const auto& name : names) {
    NF_ASSIGN_OR_RETURN(const size_t c, column_index(csv, name));
    std::vector<double> col;
    col.reserve(csv.rows.size());
    for (const auto& row : csv.rows) {
      NF_ASSIGN_OR_RETURN(const double v, cell_number(csv, row[c]));
      col.push_back(v);
    }
    out.push_back(std::move(col));
  }
  return out;
}

}  // namespace nf::cli
