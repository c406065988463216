// Long-format draw import (CSV or JSONL). See draws_import.h for the contract.
//
// The CSV reader is a small RFC 4180 parser: fields separated by ',', records by CRLF or
// LF; a field that starts with '"' is quoted, may contain ',', CR, LF and '""' (a literal
// quote), and must be followed by ',' or the end of the record.
#include "data/draws_import.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "util/file.h"
#include "util/strings.h"

namespace nf {
namespace {

const std::vector<std::string> kColumns{"subject", "item", "cluster", "condition", "config",
                                        "replicate", "outcome", "value"};
// Optional columns, as `noisefloor export` writes them: the outcome's label ("B") and the
// draw's status (only ok draws carry outcomes, so any other status is refused).
const std::vector<std::string> kOptionalColumns{"label", "status"};

/// One CSV record with the 1-based line on which it starts.
struct CsvRecord {
  size_t line = 0;
  std::vector<std::string> fields;
};

Result<std::vector<CsvRecord>> parse_csv(const std::string& path, const std::string& text) {
  std::vector<CsvRecord> out;
  size_t i = 0, line = 1;
  if (text.compare(0, 3, "\xEF\xBB\xBF") == 0) i = 3;  // UTF-8 byte-order mark
  const size_t n = text.size();
  while (i < n) {
    CsvRecord rec;
    rec.line = line;
    size_t col = 1;  // 1-based field number, for messages
    bool end_of_record = false;
    while (!end_of_record) {
      std::string field;
      if (i < n && text[i] == '"') {
        const size_t open_line = line;
        ++i;
        bool closed = false;
        while (i < n) {
          const char c = text[i];
          if (c == '"') {
            if (i + 1 < n && text[i + 1] == '"') {
              field += '"';
              i += 2;
              continue;
            }
            ++i;
            closed = true;
            break;
          }
          if (c == '\n') ++line;
          field += c;
          ++i;
        }
        if (!closed)
          return InvalidArgument(fmt::format("{}:{}: field {}: malformed CSV: unterminated quoted field", path,
                                             open_line, col));
        if (i < n && text[i] != ',' && text[i] != '\n' && text[i] != '\r')
          return InvalidArgument(fmt::format("{}:{}: field {}: malformed CSV: '{}' after a closing quote (a quote "
                                             "inside a quoted field is written \"\")",
                                             path, line, col, text[i]));
      } else {
        while (i < n && text[i] != ',' && text[i] != '\n' && text[i] != '\r') {
          if (text[i] == '"')
            return InvalidArgument(fmt::format("{}:{}: field {}: malformed CSV: quote inside an unquoted field "
                                               "(quote the whole field and write the quote as \"\")",
                                               path, line, col));
          field += text[i++];
        }
      }
      rec.fields.push_back(std::move(field));
      ++col;
      if (i >= n) {
        end_of_record = true;
      } else if (text[i] == ',') {
        ++i;
      } else {  // CR, LF or CRLF
        if (text[i] == '\r') ++i;
        if (i < n && text[i] == '\n') ++i;
        ++line;
        end_of_record = true;
      }
    }
    // Blank lines (a single empty field) are skipped.
    if (rec.fields.size() == 1 && rec.fields[0].empty()) continue;
    out.push_back(std::move(rec));
  }
  return out;
}

/// The row fields as text plus where they came from, shared by the CSV and JSONL paths.
struct RawRow {
  size_t line = 0;
  std::map<std::string, std::string> text;   // column -> value as text
  std::map<std::string, bool> value_is_bool;  // JSONL: value given as a JSON boolean
};

bool parse_number(const std::string& s, double* out) {
  const std::string t = trim(s);
  if (t.empty()) return false;
  for (char c : t)
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+'))
      return false;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(t.c_str(), &end);
  if (end != t.c_str() + t.size() || errno == ERANGE || !std::isfinite(v)) return false;
  *out = v;
  return true;
}

Result<std::vector<LongDrawRow>> convert(const std::string& path, const std::vector<RawRow>& raw) {
  std::vector<LongDrawRow> out;
  out.reserve(raw.size());
  std::map<std::tuple<std::string, std::string, std::string, std::string, int, std::string>, size_t> seen;
  std::map<std::string, std::map<std::string, int>> categories;  // outcome -> label -> index
  for (const RawRow& r : raw) {
    auto get = [&](const std::string& c) {
      auto it = r.text.find(c);
      return it == r.text.end() ? std::string() : it->second;
    };
    auto err = [&](const std::string& col, const std::string& problem) {
      return InvalidArgument(fmt::format("{}:{}: {}: {}", path, r.line, col, problem));
    };
    LongDrawRow row;
    row.subject = get("subject");
    row.item = get("item");
    row.cluster = get("cluster");
    row.condition = get("condition");
    row.config = get("config");
    row.outcome = get("outcome");
    if (row.subject.empty()) return err("subject", "empty");
    if (row.item.empty()) return err("item", "empty");
    if (row.outcome.empty()) return err("outcome", "empty");
    if (row.cluster.empty()) row.cluster = row.item;
    if (row.condition.empty()) row.condition = "none";
    if (row.config.empty()) row.config = "default";
    if (const std::string st = trim(get("status")); !st.empty() && st != "ok")
      return err("status", fmt::format("'{}': only ok draws carry outcomes (api_error, parse_error and refused "
                                       "draws have none to import)",
                                       st));

    const std::string rep = trim(get("replicate"));
    if (rep.empty()) return err("replicate", "empty, expected a non-negative integer");
    for (char c : rep)
      if (!std::isdigit(static_cast<unsigned char>(c)))
        return err("replicate", fmt::format("expected a non-negative integer, got '{}'", rep));
    if (rep.size() > 9) return err("replicate", fmt::format("'{}' is out of range", rep));
    row.replicate = std::stoi(rep);

    const std::string v = get("value");
    const std::string lv = to_lower(trim(v));
    double num = 0;
    if (trim(v).empty()) return err("value", "empty");
    if (lv == "true" || lv == "false") {
      row.value = lv == "true" ? 1.0 : 0.0;
      row.label = lv;
    } else if (parse_number(v, &num)) {
      row.value = num;
      row.label = get("label");  // kept as exported ("B" for a choice), "" when absent
    } else {
      auto& cats = categories[row.outcome];
      auto [it, inserted] = cats.emplace(v, static_cast<int>(cats.size()));
      (void)inserted;
      row.value = it->second;
      row.label = v;
    }

    auto key = std::make_tuple(row.subject, row.item, row.condition, row.config, row.replicate, row.outcome);
    if (auto d = seen.find(key); d != seen.end())
      return err("outcome", fmt::format("duplicate row for (subject={}, item={}, condition={}, config={}, "
                                        "replicate={}, outcome={}) (first on line {})",
                                        row.subject, row.item, row.condition, row.config, row.replicate, row.outcome,
                                        d->second));
    seen[key] = r.line;
    out.push_back(std::move(row));
  }
  return out;
}

Result<std::vector<RawRow>> read_csv_rows(const std::string& path, const std::string& text) {
  NF_ASSIGN_OR_RETURN(std::vector<CsvRecord> recs, parse_csv(path, text));
  if (recs.empty()) return InvalidArgument(fmt::format("{}:1: empty file, expected a header row", path));
  const CsvRecord& header = recs[0];
  std::map<std::string, size_t> index;
  for (size_t c = 0; c < header.fields.size(); ++c) {
    const std::string name = trim(header.fields[c]);
    if (index.count(name))
      return InvalidArgument(fmt::format("{}:{}: {}: duplicate column in the header", path, header.line, name));
    index[name] = c;
  }
  std::vector<std::string> present;
  for (const auto& [k, v] : index) present.push_back(k);
  for (const auto& c : kColumns) {
    if (c == "cluster") continue;  // optional: defaults to the item
    if (!index.count(c)) {
      // A header cell within edit distance is probably a typo of this column.
      return InvalidArgument(
          fmt::format("{}:{}: {}: missing column{}", path, header.line, c, did_you_mean(c, present)));
    }
  }
  std::vector<RawRow> rows;
  for (size_t r = 1; r < recs.size(); ++r) {
    const CsvRecord& rec = recs[r];
    if (rec.fields.size() != header.fields.size())
      return InvalidArgument(fmt::format("{}:{}: expected {} fields as in the header, found {}", path, rec.line,
                                         header.fields.size(), rec.fields.size()));
    RawRow row;
    row.line = rec.line;
    for (const auto& c : kColumns)
      if (auto it = index.find(c); it != index.end()) row.text[c] = rec.fields[it->second];
    for (const auto& c : kOptionalColumns)
      if (auto it = index.find(c); it != index.end()) row.text[c] = rec.fields[it->second];
    rows.push_back(std::move(row));
  }
  return rows;
}

/// Expands one exported draw object into long rows (one per outcome). The draw's fields
/// become the key columns; an outcome needs a string name and a numeric value.
Status expand_draw_line(const std::string& path, size_t line_no, const nlohmann::json& j, std::vector<RawRow>* rows) {
  const nlohmann::json& outs = j["outcomes"];
  if (!outs.is_array())
    return InvalidArgument(fmt::format("{}:{}: outcomes: expected an array, found {}", path, line_no, outs.type_name()));
  RawRow base;
  base.line = line_no;
  for (const char* c : {"subject", "item", "cluster", "condition", "config", "status"}) {
    auto it = j.find(c);
    if (it == j.end() || it->is_null()) continue;
    if (!it->is_string())
      return InvalidArgument(fmt::format("{}:{}: {}: expected a string, found {}", path, line_no, c, it->type_name()));
    base.text[c] = it->get<std::string>();
  }
  auto rep = j.find("replicate");
  if (rep == j.end() || !rep->is_number_integer())
    return InvalidArgument(fmt::format("{}:{}: replicate: expected a non-negative integer", path, line_no));
  base.text["replicate"] = rep->dump();
  for (size_t k = 0; k < outs.size(); ++k) {
    const nlohmann::json& o = outs[k];
    const std::string where = fmt::format("{}:{}: outcomes[{}]", path, line_no, k);
    if (!o.is_object() || !o.contains("name") || !o["name"].is_string() || !o.contains("value") ||
        !o["value"].is_number())
      return InvalidArgument(where + ": expected {\"name\": string, \"value\": number, \"label\": string}");
    RawRow row = base;
    row.text["outcome"] = o["name"].get<std::string>();
    row.text["value"] = o["value"].dump();
    if (auto l = o.find("label"); l != o.end() && l->is_string()) row.text["label"] = l->get<std::string>();
    rows->push_back(std::move(row));
  }
  return Status::Ok();
}

Result<std::vector<RawRow>> read_jsonl_rows(const std::string& path, const std::string& text) {
  std::vector<RawRow> rows;
  size_t pos = 0, line_no = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++line_no;
    if (trim(line).empty()) continue;
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
      NF_RETURN_IF_ERROR(expand_draw_line(path, line_no, j, &rows));
      continue;
    }
    RawRow row;
    row.line = line_no;
    for (const auto& c : kColumns) {
      auto it = j.find(c);
      if (it == j.end() || it->is_null()) {
        if (c == "cluster") continue;
        return InvalidArgument(fmt::format("{}:{}: {}: missing", path, line_no, c));
      }
      if (it->is_string()) {
        row.text[c] = it->get<std::string>();
      } else if (it->is_number_integer()) {
        row.text[c] = it->dump();
      } else if (it->is_number_float()) {
        if (c == "replicate")
          return InvalidArgument(fmt::format("{}:{}: replicate: expected a non-negative integer, got {}", path, line_no,
                                             it->dump()));
        row.text[c] = it->dump();
      } else if (it->is_boolean() && c == "value") {
        row.text[c] = it->get<bool>() ? "true" : "false";
      } else {
        return InvalidArgument(fmt::format("{}:{}: {}: expected a string or a number, found {}", path, line_no, c,
                                           it->type_name()));
      }
    }
    for (const auto& c : kOptionalColumns) {
      auto it = j.find(c);
      if (it == j.end() || it->is_null()) continue;
      if (!it->is_string())
        return InvalidArgument(fmt::format("{}:{}: {}: expected a string, found {}", path, line_no, c, it->type_name()));
      row.text[c] = it->get<std::string>();
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace

Result<std::vector<LongDrawRow>> read_long_draws(const std::string& path) {
  const std::string lower = to_lower(path);
  auto ends_with = [&](std::string_view suf) {
    return lower.size() >= suf.size() && lower.compare(lower.size() - suf.size(), suf.size(), suf) == 0;
  };
  const bool csv = ends_with(".csv");
  const bool jsonl = ends_with(".jsonl") || ends_with(".json");
  if (!csv && !jsonl)
    return InvalidArgument(fmt::format("{}: unknown file extension, expected .csv, .jsonl or .json", path));
  NF_ASSIGN_OR_RETURN(std::string text, read_file(path));
  std::vector<RawRow> rows;
  if (csv) {
    NF_ASSIGN_OR_RETURN(rows, read_csv_rows(path, text));
  } else {
    NF_ASSIGN_OR_RETURN(rows, read_jsonl_rows(path, text));
  }
  return convert(path, rows);
}

}  // namespace nf
