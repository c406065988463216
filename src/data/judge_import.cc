#include "data/judge_import.h"

#include <algorithm>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "data/json_line.h"
#include "data/key_spellings.h"
#include "util/csv.h"
#include "util/file.h"
#include "util/json_depth.h"
#include "util/strings.h"

namespace nf {
namespace {

using nlohmann::json;

/// A table read from CSV or JSONL: header names and per-row (line, values by column).
/// JSONL values keep their JSON type; CSV values are strings.
struct Table {
  std::vector<std::pair<size_t, json>> rows;  // (1-based line, object)
  /// CSV: the header's names and its line (a missing column is the header's fault, said
  /// there); JSONL: none (each object names its own fields).
  std::optional<std::pair<size_t, std::vector<std::string>>> header;
};

// RFC 4180 CSV (util/csv.h) into objects keyed by the header. Every field is a string.
Result<Table> parse_csv_table(const std::string& path, const std::string& text) {
  NF_ASSIGN_OR_RETURN(CsvTable csv, parse_csv(path, text));
  Table t;
  t.header = std::make_pair(csv.header_line, csv.header);
  for (auto& [ln, f] : csv.records) {
    json o = json::object();
    for (size_t c = 0; c < f.size(); ++c) o[csv.header[c]] = std::move(f[c]);
    t.rows.emplace_back(ln, std::move(o));
  }
  return t;
}

Result<Table> parse_jsonl_table(const std::string& path, const std::string& text) {
  Table t;
  std::istringstream in(text);
  std::string l;
  size_t line = 0;
  while (std::getline(in, l)) {
    ++line;
    if (l.find_first_not_of(" \t\r") == std::string::npos) continue;
    json j;  // a repeated key is refused, not silently the last (data/json_line.h)
    NF_RETURN_IF_ERROR(parse_json_line(path, line, l, &j));
    if (!j.is_object()) return InvalidArgument(fmt::format("{}:{}: not a JSON object", path, line));
    t.rows.emplace_back(line, std::move(j));
  }
  return t;
}

Result<Table> read_table(const std::string& path) {
  NF_ASSIGN_OR_RETURN(std::string text, read_file(path));
  auto ends = [&](const char* s) {
    const std::string e(s);
    return path.size() >= e.size() && path.compare(path.size() - e.size(), e.size(), e) == 0;
  };
  if (ends(".csv")) return parse_csv_table(path, text);
  if (ends(".jsonl") || ends(".json")) return parse_jsonl_table(path, text);
  return InvalidArgument(fmt::format("{}: unknown format (expected a .csv or .jsonl file)", path));
}

// "FILE:LINE: COL: missing ... (it has: a, b)", with the closest name present as a
// suggestion: LINE is the CSV header's, or the JSONL object's.
Status missing_column(const std::string& path, size_t line, const std::vector<std::string>& present, const char* col,
                      bool csv_header) {
  return InvalidArgument(fmt::format("{}:{}: {}: missing column{}; {} has: {}; add the '{}' {} (or rename the one "
                                     "meant)",
                                     path, line, col, did_you_mean(col, present),
                                     csv_header ? "the header" : "this row's object",
                                     present.empty() ? std::string("nothing") : join(present, ", "), col,
                                     csv_header ? "column" : "field"));
}

Status missing_column(const std::string& path, size_t line, const json& o, const char* col) {
  std::vector<std::string> present;
  for (const auto& [k, v] : o.items()) present.push_back(k);
  return missing_column(path, line, present, col, false);
}

// A CSV table's header lacks one of `cols`: refused at the header's line, before any row.
Status require_columns(const std::string& path, const Table& t, std::initializer_list<const char*> cols) {
  if (!t.header) return Status::Ok();
  const auto& [line, names] = *t.header;
  for (const char* col : cols)
    if (std::find(names.begin(), names.end(), col) == names.end()) return missing_column(path, line, names, col, true);
  return Status::Ok();
}

// The label cell: a missing column is an error (a misspelt "label" header would otherwise
// turn every vote into a missing vote); an empty cell or null is a missing label.
Result<json> label_cell(const std::string& path, size_t line, const json& o) {
  if (!o.contains("label")) return missing_column(path, line, o, "label");
  return o["label"];
}

// A key field as text (numbers are printed), or InvalidArgument naming file/line/column.
Result<std::string> text_field(const std::string& path, size_t line, const json& o, const char* col,
                               bool allow_empty) {
  if (!o.contains(col)) return missing_column(path, line, o, col);
  const json& v = o[col];
  std::string s;
  if (v.is_string()) s = v.get<std::string>();
  else if (v.is_number_integer()) s = std::to_string(v.get<int64_t>());
  else if (v.is_null()) s = "";
  else return InvalidArgument(fmt::format("{}:{}: {}: expected text, found {}", path, line, col, v.dump()));
  if (s.empty() && !allow_empty) return InvalidArgument(fmt::format("{}:{}: {}: must not be empty", path, line, col));
  return s;
}

// A 0/1 label (1, 0, "1", "0", true, false, "true", "false"); empty/null -> nullopt.
// `what` says what an empty one means ("or empty for a missing vote"; "" when refused).
Result<std::optional<int>> label_field(const std::string& path, size_t line, const json& v, const char* col,
                                       const char* what = ", or empty for a missing vote") {
  if (v.is_null()) return std::optional<int>();
  if (v.is_boolean()) return std::optional<int>(v.get<bool>() ? 1 : 0);
  if (v.is_number_integer() && (v.get<int64_t>() == 0 || v.get<int64_t>() == 1))
    return std::optional<int>(static_cast<int>(v.get<int64_t>()));
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (s.empty()) return std::optional<int>();
    if (s == "1" || s == "true" || s == "True") return std::optional<int>(1);
    if (s == "0" || s == "false" || s == "False") return std::optional<int>(0);
  }
  return InvalidArgument(fmt::format("{}:{}: {}: expected 1 (criterion met) or 0 (not met), also written true/false{}; "
                                     "found {}",
                                     path, line, col, what, v.dump()));
}

}  // namespace

Result<std::string> ProviderMap::provider_of(const std::string& model) const {
  if (auto it = overrides.find(model); it != overrides.end()) return it->second;
  for (const auto& [prefix, provider] : prefixes)
    if (model.compare(0, prefix.size(), prefix) == 0) return provider;
  return NotFound(fmt::format("no provider known for model '{}' (add an override)", model));
}

Result<std::vector<VoteRecord>> read_votes(const std::string& path, std::vector<std::string>* warnings) {
  NF_ASSIGN_OR_RETURN(Table t, read_table(path));
  NF_RETURN_IF_ERROR(
      require_columns(path, t, {"subject", "subject_provider", "item", "cluster", "judge", "judge_provider", "label"}));
  std::vector<VoteRecord> out;
  std::map<std::tuple<std::string, std::string, std::string>, size_t> seen;  // -> first line
  // Key values that differ only by surrounding whitespace: refused; by case: warned.
  std::vector<KeySpellings> keys;
  for (const char* col : {"subject", "subject_provider", "item", "cluster", "judge", "judge_provider"})
    keys.emplace_back(path, col);
  for (const auto& [line, o] : t.rows) {
    VoteRecord v;
    NF_ASSIGN_OR_RETURN(v.subject, text_field(path, line, o, "subject", false));
    NF_ASSIGN_OR_RETURN(v.subject_provider, text_field(path, line, o, "subject_provider", false));
    NF_ASSIGN_OR_RETURN(v.item, text_field(path, line, o, "item", false));
    NF_ASSIGN_OR_RETURN(v.cluster, text_field(path, line, o, "cluster", true));
    NF_ASSIGN_OR_RETURN(v.judge, text_field(path, line, o, "judge", false));
    NF_ASSIGN_OR_RETURN(v.judge_provider, text_field(path, line, o, "judge_provider", false));
    NF_ASSIGN_OR_RETURN(const json label, label_cell(path, line, o));
    NF_ASSIGN_OR_RETURN(v.label, label_field(path, line, label, "label"));
    if (v.cluster.empty()) v.cluster = v.item;
    size_t k = 0;
    for (const std::string* value : {&v.subject, &v.subject_provider, &v.item, &v.cluster, &v.judge, &v.judge_provider})
      NF_RETURN_IF_ERROR(keys[k++].check(*value, line));
    if (auto [it, inserted] = seen.emplace(std::make_tuple(v.subject, v.item, v.judge), line); !inserted)
      return InvalidArgument(fmt::format("{}:{}: judge: a second vote by judge '{}' on subject '{}', item '{}' (the "
                                         "first is on line {}): give each judge one vote per subject and item",
                                         path, line, v.judge, v.subject, v.item, it->second));
    out.push_back(std::move(v));
  }
  if (warnings != nullptr)
    for (const KeySpellings& k : keys) k.append_warnings(warnings);
  return out;
}

Result<std::vector<LabelRecord>> read_labels(const std::string& path, std::vector<std::string>* warnings) {
  NF_ASSIGN_OR_RETURN(Table t, read_table(path));
  NF_RETURN_IF_ERROR(require_columns(path, t, {"rater", "subject", "item", "label"}));
  std::vector<LabelRecord> out;
  std::map<std::tuple<std::string, std::string, std::string>, size_t> seen;  // -> first line
  std::vector<KeySpellings> keys;  // as in read_votes
  for (const char* col : {"rater", "subject", "item"}) keys.emplace_back(path, col);
  for (const auto& [line, o] : t.rows) {
    LabelRecord r;
    NF_ASSIGN_OR_RETURN(r.rater, text_field(path, line, o, "rater", false));
    NF_ASSIGN_OR_RETURN(r.subject, text_field(path, line, o, "subject", false));
    NF_ASSIGN_OR_RETURN(r.item, text_field(path, line, o, "item", false));
    NF_ASSIGN_OR_RETURN(const json label, label_cell(path, line, o));
    NF_ASSIGN_OR_RETURN(auto l, label_field(path, line, label, "label", ""));
    if (!l)
      return InvalidArgument(fmt::format("{}:{}: label: empty: a human label is 1 (criterion met) or 0 (not met), also "
                                         "written true/false; fill it in, or leave the row out",
                                         path, line));
    r.label = *l;
    size_t k = 0;
    for (const std::string* value : {&r.rater, &r.subject, &r.item}) NF_RETURN_IF_ERROR(keys[k++].check(*value, line));
    if (auto [it, inserted] = seen.emplace(std::make_tuple(r.rater, r.subject, r.item), line); !inserted)
      return InvalidArgument(fmt::format("{}:{}: rater: a second label by rater '{}' on subject '{}', item '{}' (the "
                                         "first is on line {}): give each rater one label per subject and item",
                                         path, line, r.rater, r.subject, r.item, it->second));
    out.push_back(std::move(r));
  }
  if (warnings != nullptr)
    for (const KeySpellings& k : keys) k.append_warnings(warnings);
  return out;
}

Result<std::vector<VoteRecord>> read_released_votes(const std::string& path, const ProviderMap& providers) {
  NF_ASSIGN_OR_RETURN(std::string text, read_file(path));
  NF_ASSIGN_OR_RETURN(Table t, parse_jsonl_table(path, text));
  std::vector<VoteRecord> out;
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto& [line, o] : t.rows) {
    NF_ASSIGN_OR_RETURN(std::string subject, text_field(path, line, o, "subject_model", false));
    NF_ASSIGN_OR_RETURN(std::string item, text_field(path, line, o, "item", false));
    NF_ASSIGN_OR_RETURN(std::string prompt, text_field(path, line, o, "prompt_id", false));
    auto provider = providers.provider_of(subject);
    if (!provider.ok()) return NotFound(fmt::format("{}:{}: subject_model: {}", path, line, provider.status().message()));
    if (!seen.insert({subject, item}).second)
      return InvalidArgument(fmt::format("{}:{}: duplicate row (subject_model {}, item {})", path, line, subject, item));
    if (!o.contains("votes") || !o["votes"].is_object())
      return InvalidArgument(fmt::format("{}:{}: votes: expected an object {{judge: true/false/null}}", path, line));
    for (const auto& [judge, vote] : o["votes"].items()) {
      if (!(vote.is_boolean() || vote.is_null()))
        return InvalidArgument(fmt::format("{}:{}: votes.{}: expected true/false/null, found {}", path, line, judge,
                                           vote.dump()));
      VoteRecord v{subject, *provider, item, prompt, judge, judge, std::nullopt};
      if (vote.is_boolean()) v.label = vote.get<bool>() ? 1 : 0;
      out.push_back(std::move(v));
    }
  }
  return out;
}

Result<std::map<std::string, AnnotationKey>> read_annotation_key(const std::string& path) {
  NF_ASSIGN_OR_RETURN(std::string text, read_file(path));
  NF_RETURN_IF_ERROR(check_json_depth(text, path));
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return InvalidArgument(path + ": expected a JSON object {id: {...}}");
  std::map<std::string, AnnotationKey> out;
  for (const auto& [id, e] : j.items()) {
    if (!e.is_object()) return InvalidArgument(fmt::format("{}: {}: expected an object", path, id));
    AnnotationKey k;
    const std::string where = fmt::format("{}: {}", path, id);
    NF_ASSIGN_OR_RETURN(k.subject, text_field(where, 0, e, "subject_model", false));
    NF_ASSIGN_OR_RETURN(k.item, text_field(where, 0, e, "item", false));
    NF_ASSIGN_OR_RETURN(k.prompt_id, text_field(where, 0, e, "prompt_id", true));
    out.emplace(id, std::move(k));
  }
  return out;
}

Result<std::vector<std::pair<std::string, int>>> read_annotation_labels(const std::string& path) {
  NF_ASSIGN_OR_RETURN(std::string text, read_file(path));
  NF_ASSIGN_OR_RETURN(Table t, parse_csv_table(path, text));
  std::vector<std::pair<std::string, int>> out;
  std::set<std::string> seen;
  for (const auto& [line, o] : t.rows) {
    NF_ASSIGN_OR_RETURN(std::string id, text_field(path, line, o, "annotation_id", false));
    if (!o.contains("human_label")) return InvalidArgument(fmt::format("{}:{}: human_label: missing column", path, line));
    NF_ASSIGN_OR_RETURN(auto l, label_field(path, line, o["human_label"], "human_label", ""));
    if (!l) return InvalidArgument(fmt::format("{}:{}: human_label: must not be empty", path, line));
    if (!seen.insert(id).second)
      return InvalidArgument(fmt::format("{}:{}: annotation_id: {} appears twice", path, line, id));
    out.emplace_back(id, *l);
  }
  return out;
}

Result<std::map<std::string, json>> read_perturbation_audit(const std::string& path) {
  NF_ASSIGN_OR_RETURN(std::string text, read_file(path));
  NF_ASSIGN_OR_RETURN(Table t, parse_csv_table(path, text));
  std::map<std::string, json> out;
  for (auto& [line, o] : t.rows) {
    NF_ASSIGN_OR_RETURN(std::string id, text_field(path, line, o, "prompt_id", false));
    json meta = o;
    meta.erase("prompt_id");
    if (!out.emplace(id, std::move(meta)).second)
      return InvalidArgument(fmt::format("{}:{}: prompt_id: {} appears twice", path, line, id));
  }
  return out;
}

Result<MissingInfoData> read_missing_info_dir(const std::string& dir, const ProviderMap& providers) {
  namespace fs = std::filesystem;
  const std::string votes_path = dir + "/votes.jsonl", key_path = dir + "/key.json";
  std::error_code ec;
  for (const auto& p : {votes_path, key_path})
    if (!fs::exists(p, ec)) return NotFound(p + ": no such file (expected the released missing-info-judges files)");
  MissingInfoData d;
  NF_ASSIGN_OR_RETURN(d.votes, read_released_votes(votes_path, providers));
  NF_ASSIGN_OR_RETURN(auto key, read_annotation_key(key_path));
  std::map<std::string, json> audit;
  if (fs::exists(dir + "/perturbation_audit.csv", ec)) {
    NF_ASSIGN_OR_RETURN(audit, read_perturbation_audit(dir + "/perturbation_audit.csv"));
  }
  // Item metadata: prompt and theme from votes.jsonl, strata from the audit.
  {
    NF_ASSIGN_OR_RETURN(std::string text, read_file(votes_path));
    NF_ASSIGN_OR_RETURN(Table t, parse_jsonl_table(votes_path, text));
    for (const auto& [line, o] : t.rows) {
      NF_ASSIGN_OR_RETURN(std::string item, text_field(votes_path, line, o, "item", false));
      NF_ASSIGN_OR_RETURN(std::string prompt, text_field(votes_path, line, o, "prompt_id", false));
      json meta = {{"prompt_id", prompt}, {"theme", o.value("theme", "")}};
      if (auto it = audit.find(prompt); it != audit.end())
        for (const auto& [k, v] : it->second.items()) meta[k] = v;
      auto [pos, added] = d.items.emplace(item, std::make_pair(prompt, meta));
      if (!added && pos->second.first != prompt)
        return InvalidArgument(fmt::format("{}:{}: prompt_id: item {} has prompt {} here but {} earlier", votes_path,
                                           line, item, prompt, pos->second.first));
    }
  }
  std::vector<fs::path> label_files;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("labels_", 0) == 0 && e.path().extension() == ".csv") label_files.push_back(e.path());
  }
  if (ec) return InvalidArgument(dir + ": cannot list: " + ec.message());
  std::sort(label_files.begin(), label_files.end());
  for (const auto& f : label_files) {
    const std::string rater = f.stem().string().substr(7);
    NF_ASSIGN_OR_RETURN(auto labels, read_annotation_labels(f.string()));
    for (const auto& [id, label] : labels) {
      auto it = key.find(id);
      if (it == key.end()) return NotFound(fmt::format("{}: annotation_id {} is not in {}", f.string(), id, key_path));
      d.labels.push_back({rater, it->second.subject, it->second.item, label});
    }
    d.raters.push_back(rater);
  }
  return d;
}

}  // namespace nf
