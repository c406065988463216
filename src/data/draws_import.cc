// Long-format draw import (CSV or JSONL). See draws_import.h for the contract.
//
// Both readers stream: the file is read in 1 MiB blocks (CSV) or line by line (JSONL),
// one row is converted at a time and handed to the caller, so memory does not grow with
// the file (issue 14). The CSV reader is a small RFC 4180 parser: fields separated by
// ',', records by CRLF or LF; a field that starts with '"' is quoted, may contain ',',
// CR, LF and '""' (a literal quote), and must be followed by ',' or the end of the record.
#include "data/draws_import.h"

#include <array>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "util/strings.h"

namespace nf {
namespace {

// The columns the reader knows, required first. `cluster` is optional (defaults to the
// item); `label` and `status` are optional, as `noisefloor export` writes them: the
// outcome's label ("B") and the draw's status (only ok draws carry outcomes, so any other
// status is refused).
enum Col { kSubject, kItem, kCluster, kCondition, kConfig, kReplicate, kOutcome, kValue, kLabel, kStatus, kNumCols };
constexpr int kNumRequired = kValue + 1;
const std::array<const char*, kNumCols> kColName{"subject", "item",    "cluster", "condition", "config",
                                                 "replicate", "outcome", "value", "label", "status"};

using Fields = std::array<std::string_view, kNumCols>;  // absent column = empty view
using RowFn = std::function<Status(const LongDrawRow& row, size_t line)>;

std::string_view trim_view(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

bool parse_number(std::string_view s, double* out) {
  const std::string_view t = trim_view(s);
  if (t.empty() || t.size() > 64) return false;
  for (char c : t)
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+'))
      return false;
  char buf[72];
  std::memcpy(buf, t.data(), t.size());
  buf[t.size()] = '\0';
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(buf, &end);
  if (end != buf + t.size() || errno == ERANGE || !std::isfinite(v)) return false;
  *out = v;
  return true;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != b[i]) return false;
  return true;
}

/// Fields of one row -> LongDrawRow, with the per-outcome category maps (first seen = 0)
/// that must persist across rows.
class RowConverter {
 public:
  explicit RowConverter(const std::string& path) : path_(path) {}

  Status convert(size_t line, const Fields& f, LongDrawRow* row) {
    auto err = [&](int col, const std::string& problem) {
      return InvalidArgument(fmt::format("{}:{}: {}: {}", path_, line, kColName[col], problem));
    };
    row->subject.assign(f[kSubject]);
    row->item.assign(f[kItem]);
    row->cluster.assign(f[kCluster]);
    row->condition.assign(f[kCondition]);
    row->config.assign(f[kConfig]);
    row->outcome.assign(f[kOutcome]);
    if (row->subject.empty()) return err(kSubject, "empty");
    if (row->item.empty()) return err(kItem, "empty");
    if (row->outcome.empty()) return err(kOutcome, "empty");
    if (row->cluster.empty()) row->cluster = row->item;
    if (row->condition.empty()) row->condition = "none";
    if (row->config.empty()) row->config = "default";
    if (const std::string_view st = trim_view(f[kStatus]); !st.empty() && st != "ok")
      return err(kStatus, fmt::format("'{}': only ok draws carry outcomes (api_error, parse_error and refused "
                                      "draws have none to import)",
                                      st));

    const std::string_view rep = trim_view(f[kReplicate]);
    if (rep.empty()) return err(kReplicate, "empty, expected a non-negative integer");
    for (char c : rep)
      if (!std::isdigit(static_cast<unsigned char>(c)))
        return err(kReplicate, fmt::format("expected a non-negative integer, got '{}'", rep));
    if (rep.size() > 9) return err(kReplicate, fmt::format("'{}' is out of range", rep));
    int r = 0;
    for (char c : rep) r = r * 10 + (c - '0');
    row->replicate = r;

    const std::string_view v = f[kValue];
    const std::string_view tv = trim_view(v);
    double num = 0;
    if (tv.empty()) return err(kValue, "empty");
    if (iequals(tv, "true") || iequals(tv, "false")) {
      const bool t = iequals(tv, "true");
      row->value = t ? 1.0 : 0.0;
      row->label = t ? "true" : "false";
    } else if (parse_number(v, &num)) {
      row->value = num;
      row->label.assign(f[kLabel]);  // kept as exported ("B" for a choice), "" when absent
    } else {
      auto& cats = categories_[row->outcome];
      auto [it, inserted] = cats.emplace(std::string(v), static_cast<int>(cats.size()));
      (void)inserted;
      row->value = it->second;
      row->label.assign(v);
    }
    return Status::Ok();
  }

 private:
  const std::string& path_;
  std::unordered_map<std::string, std::unordered_map<std::string, int>> categories_;  // outcome -> label -> index
};

/// Buffered RFC 4180 record reader over a FILE (1 MiB blocks).
class CsvReader {
 public:
  CsvReader(const std::string& path, std::FILE* f) : path_(path), f_(f), buf_(1 << 20) {
    if (fill() && len_ >= 3 && std::memcmp(buf_.data(), "\xEF\xBB\xBF", 3) == 0) pos_ = 3;  // UTF-8 BOM
  }

  /// Reads the next non-blank record into fields[0, *count); false at end of file.
  /// `*line` is the 1-based line on which the record starts.
  Result<bool> next(std::vector<std::string>& fields, size_t* count, size_t* line) {
    for (;;) {
      if (peek() == EOF) return false;
      *line = line_;
      size_t n = 0;
      bool end_of_record = false;
      while (!end_of_record) {
        if (n == fields.size()) fields.emplace_back();
        std::string& field = fields[n];
        field.clear();
        const size_t col = n + 1;  // 1-based field number, for messages
        int c = peek();
        if (c == '"') {
          const size_t open_line = line_;
          ++pos_;
          bool closed = false;
          while ((c = peek()) != EOF) {
            ++pos_;
            if (c == '"') {
              if (peek() == '"') {
                field += '"';
                ++pos_;
                continue;
              }
              closed = true;
              break;
            }
            if (c == '\n') ++line_;
            field += static_cast<char>(c);
          }
          if (!closed)
            return InvalidArgument(fmt::format("{}:{}: field {}: malformed CSV: unterminated quoted field", path_,
                                               open_line, col));
          c = peek();
          if (c != EOF && c != ',' && c != '\n' && c != '\r')
            return InvalidArgument(fmt::format("{}:{}: field {}: malformed CSV: '{}' after a closing quote (a quote "
                                               "inside a quoted field is written \"\")",
                                               path_, line_, col, static_cast<char>(c)));
        } else {
          // Fast path: copy the unquoted run straight from the buffer.
          for (;;) {
            if (pos_ == len_ && !fill()) break;
            const char* b = buf_.data() + pos_;
            const char* e = buf_.data() + len_;
            const char* p = b;
            while (p < e && *p != ',' && *p != '\n' && *p != '\r' && *p != '"') ++p;
            field.append(b, p);
            pos_ += static_cast<size_t>(p - b);
            if (p < e) break;
          }
          if (peek() == '"')
            return InvalidArgument(fmt::format("{}:{}: field {}: malformed CSV: quote inside an unquoted field "
                                               "(quote the whole field and write the quote as \"\")",
                                               path_, line_, col));
        }
        ++n;
        c = peek();
        if (c == EOF) {
          end_of_record = true;
        } else if (c == ',') {
          ++pos_;
        } else {  // CR, LF or CRLF
          if (c == '\r') ++pos_;
          if (peek() == '\n') ++pos_;
          ++line_;
          end_of_record = true;
        }
      }
      // Blank lines (a single empty field) are skipped.
      if (n == 1 && fields[0].empty()) continue;
      *count = n;
      return true;
    }
  }

 private:
  int peek() {
    if (pos_ == len_ && !fill()) return EOF;
    return static_cast<unsigned char>(buf_[pos_]);
  }
  bool fill() {
    len_ = std::fread(buf_.data(), 1, buf_.size(), f_);
    pos_ = 0;
    return len_ > 0;
  }

  const std::string& path_;
  std::FILE* f_;
  std::vector<char> buf_;
  size_t pos_ = 0, len_ = 0, line_ = 1;
};

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

Result<std::unique_ptr<std::FILE, FileCloser>> open_input(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return NotFound(path + ": no such file");
  if (std::filesystem::is_directory(path, ec)) return InvalidArgument(path + ": is a directory, expected a file");
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return InvalidArgument(path + ": cannot open: " + std::strerror(errno));
  return std::unique_ptr<std::FILE, FileCloser>(f);
}

Status stream_csv(const std::string& path, const RowFn& fn) {
  NF_ASSIGN_OR_RETURN(auto file, open_input(path));
  CsvReader reader(path, file.get());
  std::vector<std::string> fields;
  size_t count = 0, line = 0;
  NF_ASSIGN_OR_RETURN(bool has_header, reader.next(fields, &count, &line));
  if (!has_header) return InvalidArgument(fmt::format("{}:1: empty file, expected a header row", path));
  const size_t header_line = line, header_fields = count;
  std::map<std::string, size_t> index;
  for (size_t c = 0; c < count; ++c) {
    const std::string name = trim(fields[c]);
    if (index.count(name))
      return InvalidArgument(fmt::format("{}:{}: {}: duplicate column in the header", path, header_line, name));
    index[name] = c;
  }
  std::vector<std::string> present;
  for (const auto& [k, v] : index) present.push_back(k);
  std::array<int, kNumCols> at;
  at.fill(-1);
  for (int c = 0; c < kNumCols; ++c) {
    if (auto it = index.find(kColName[c]); it != index.end()) at[c] = static_cast<int>(it->second);
    if (at[c] < 0 && c < kNumRequired && c != kCluster)  // cluster is optional: defaults to the item
      // A header cell within edit distance is probably a typo of this column.
      return InvalidArgument(fmt::format("{}:{}: {}: missing column{}", path, header_line, kColName[c],
                                         did_you_mean(kColName[c], present)));
  }
  RowConverter conv(path);
  LongDrawRow row;
  Fields f;
  for (;;) {
    NF_ASSIGN_OR_RETURN(bool more, reader.next(fields, &count, &line));
    if (!more) break;
    if (count != header_fields)
      return InvalidArgument(fmt::format("{}:{}: expected {} fields as in the header, found {}", path, line,
                                         header_fields, count));
    for (int c = 0; c < kNumCols; ++c) f[c] = at[c] < 0 ? std::string_view() : std::string_view(fields[at[c]]);
    NF_RETURN_IF_ERROR(conv.convert(line, f, &row));
    NF_RETURN_IF_ERROR(fn(row, line));
  }
  return Status::Ok();
}

/// The text of each known column of one JSONL row (present[c] false = absent).
struct JsonRow {
  std::array<std::string, kNumCols> text;
  std::array<bool, kNumCols> present{};
  void set(int c, std::string v) {
    text[c] = std::move(v);
    present[c] = true;
  }
  Fields view() const {
    Fields f;
    for (int c = 0; c < kNumCols; ++c) f[c] = present[c] ? std::string_view(text[c]) : std::string_view();
    return f;
  }
};

/// Expands one exported draw object into long rows (one per outcome). The draw's fields
/// become the key columns; an outcome needs a string name and a numeric value.
Status expand_draw_line(const std::string& path, size_t line_no, const nlohmann::json& j,
                        const std::function<Status(const JsonRow&)>& emit) {
  const nlohmann::json& outs = j["outcomes"];
  if (!outs.is_array())
    return InvalidArgument(fmt::format("{}:{}: outcomes: expected an array, found {}", path, line_no, outs.type_name()));
  JsonRow base;
  for (int c : {kSubject, kItem, kCluster, kCondition, kConfig, kStatus}) {
    auto it = j.find(kColName[c]);
    if (it == j.end() || it->is_null()) continue;
    if (!it->is_string())
      return InvalidArgument(
          fmt::format("{}:{}: {}: expected a string, found {}", path, line_no, kColName[c], it->type_name()));
    base.set(c, it->get<std::string>());
  }
  auto rep = j.find("replicate");
  if (rep == j.end() || !rep->is_number_integer())
    return InvalidArgument(fmt::format("{}:{}: replicate: expected a non-negative integer", path, line_no));
  base.set(kReplicate, rep->dump());
  for (size_t k = 0; k < outs.size(); ++k) {
    const nlohmann::json& o = outs[k];
    const std::string where = fmt::format("{}:{}: outcomes[{}]", path, line_no, k);
    if (!o.is_object() || !o.contains("name") || !o["name"].is_string() || !o.contains("value") ||
        !o["value"].is_number())
      return InvalidArgument(where + ": expected {\"name\": string, \"value\": number, \"label\": string}");
    JsonRow row = base;
    row.set(kOutcome, o["name"].get<std::string>());
    row.set(kValue, o["value"].dump());
    if (auto l = o.find("label"); l != o.end() && l->is_string()) row.set(kLabel, l->get<std::string>());
    NF_RETURN_IF_ERROR(emit(row));
  }
  return Status::Ok();
}

Status stream_jsonl(const std::string& path, const RowFn& fn) {
  NF_ASSIGN_OR_RETURN(auto file, open_input(path));
  file.reset();
  std::ifstream in(path, std::ios::binary);
  if (!in) return InvalidArgument(path + ": cannot open: " + std::strerror(errno));
  RowConverter conv(path);
  LongDrawRow out;
  std::string line;
  size_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (trim(line).empty()) continue;
    auto emit = [&](const JsonRow& row) -> Status {
      NF_RETURN_IF_ERROR(conv.convert(line_no, row.view(), &out));
      return fn(out, line_no);
    };
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception& ex) {
      return InvalidArgument(fmt::format("{}:{}: malformed JSON: {}", path, line_no, ex.what()));
    }
    if (!j.is_object()) return InvalidArgument(fmt::format("{}:{}: expected a JSON object", path, line_no));
    if (j.contains("outcomes") && !j.contains("outcome")) {
      // One draw per line, as `noisefloor export --format jsonl` writes it: expand its
      // outcomes array [{name, value, label}] into long rows.
      NF_RETURN_IF_ERROR(expand_draw_line(path, line_no, j, emit));
      continue;
    }
    JsonRow row;
    for (int c = 0; c < kNumRequired; ++c) {
      auto it = j.find(kColName[c]);
      if (it == j.end() || it->is_null()) {
        if (c == kCluster) continue;
        return InvalidArgument(fmt::format("{}:{}: {}: missing", path, line_no, kColName[c]));
      }
      if (it->is_string()) {
        row.set(c, it->get<std::string>());
      } else if (it->is_number_integer()) {
        row.set(c, it->dump());
      } else if (it->is_number_float()) {
        if (c == kReplicate)
          return InvalidArgument(fmt::format("{}:{}: replicate: expected a non-negative integer, got {}", path, line_no,
                                             it->dump()));
        row.set(c, it->dump());
      } else if (it->is_boolean() && c == kValue) {
        row.set(c, it->get<bool>() ? "true" : "false");
      } else {
        return InvalidArgument(fmt::format("{}:{}: {}: expected a string or a number, found {}", path, line_no,
                                           kColName[c], it->type_name()));
      }
    }
    for (int c : {kLabel, kStatus}) {
      auto it = j.find(kColName[c]);
      if (it == j.end() || it->is_null()) continue;
      if (!it->is_string())
        return InvalidArgument(
            fmt::format("{}:{}: {}: expected a string, found {}", path, line_no, kColName[c], it->type_name()));
      row.set(c, it->get<std::string>());
    }
    NF_RETURN_IF_ERROR(emit(row));
  }
  return Status::Ok();
}

}  // namespace

Status for_each_long_draw(const std::string& path, const RowFn& fn) {
  const std::string lower = to_lower(path);
  auto ends_with = [&](std::string_view suf) {
    return lower.size() >= suf.size() && lower.compare(lower.size() - suf.size(), suf.size(), suf) == 0;
  };
  const bool csv = ends_with(".csv");
  const bool jsonl = ends_with(".jsonl") || ends_with(".json");
  if (!csv && !jsonl)
    return InvalidArgument(fmt::format("{}: unknown file extension, expected .csv, .jsonl or .json", path));
  return csv ? stream_csv(path, fn) : stream_jsonl(path, fn);
}

Result<std::vector<LongDrawRow>> read_long_draws(const std::string& path) {
  std::vector<LongDrawRow> out;
  std::map<std::tuple<std::string, std::string, std::string, std::string, int, std::string>, size_t> seen;
  const Status scanned = for_each_long_draw(path, [&](const LongDrawRow& row, size_t line) -> Status {
    auto key = std::make_tuple(row.subject, row.item, row.condition, row.config, row.replicate, row.outcome);
    if (auto d = seen.find(key); d != seen.end())
      return InvalidArgument(fmt::format("{}:{}: outcome: duplicate row for (subject={}, item={}, condition={}, "
                                         "config={}, replicate={}, outcome={}) (first on line {})",
                                         path, line, row.subject, row.item, row.condition, row.config, row.replicate,
                                         row.outcome, d->second));
    seen.emplace(std::move(key), line);
    out.push_back(row);
    return Status::Ok();
  });
  NF_RETURN_IF_ERROR(scanned);
  return out;
}

size_t find_long_draw_line(const std::string& path, const LongDrawRow& key) {
  size_t found = 0;
  (void)for_each_long_draw(path, [&](const LongDrawRow& r, size_t line) -> Status {
    if (r.subject == key.subject && r.item == key.item && r.condition == key.condition && r.config == key.config &&
        r.replicate == key.replicate && r.outcome == key.outcome) {
      found = line;
      return Internal("found");  // stops the scan
    }
    return Status::Ok();
  });
  return found;
}

}  // namespace nf
