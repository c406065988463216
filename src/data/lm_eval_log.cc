// lm-evaluation-harness samples files. See lm_eval_log.h.
#include "data/lm_eval_log.h"

#include <filesystem>
#include <map>
#include <regex>
#include <set>

#include <fmt/format.h>

#include "data/json_type.h"
#include "util/file.h"
#include "util/hash.h"
#include "util/json_depth.h"
#include "util/strings.h"

namespace nf {

namespace {

// The bookkeeping fields of a logged sample; every other number/boolean field is a metric
// when the line has no `metrics` list (files written before lm-eval listed them).
const std::set<std::string> kBookkeeping{"doc_id",       "doc",  "target",      "arguments",   "resps",
                                         "filtered_resps", "filter", "metrics", "doc_hash", "prompt_hash",
                                         "target_hash"};

/// A string no log holds, standing in for a bare NaN / Infinity / -Infinity (which
/// Python's json module writes for a float that is not finite, and which JSON and
/// nlohmann::json refuse) so the line can still be parsed and the field named.
constexpr const char* kNonFinite = "\x01noisefloor-non-finite:";

/// Parses one line, first replacing each bare NaN, Infinity or -Infinity where a value is
/// expected with the string kNonFinite + the literal. Throws nlohmann's parse_error for
/// anything else that is not JSON.
nlohmann::json parse_line_with_non_finite(std::string line) {
  for (int guard = 0;; ++guard) {
    try {
      return nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error& ex) {
      // ex.byte: 1-based index of the character the lexer stopped on (the first of NaN or
      // Infinity; for -Infinity the I after the minus sign).
      const size_t at = ex.byte == 0 ? 0 : ex.byte - 1;
      if (at >= line.size() || guard > 100000) throw;
      size_t start = std::string::npos, len = 0;
      std::string literal;
      if (line.compare(at, 3, "NaN") == 0) {
        start = at, len = 3, literal = "NaN";
      } else if (line.compare(at, 8, "Infinity") == 0) {
        const bool minus = at > 0 && line[at - 1] == '-';
        start = minus ? at - 1 : at, len = minus ? 9 : 8, literal = minus ? "-Infinity" : "Infinity";
      }
      if (start == std::string::npos) throw;
      line.replace(start, len, nlohmann::json(std::string(kNonFinite) + literal).dump());
    }
  }
}

/// The literal (NaN, Infinity, -Infinity) when `v` stands for a non-finite number, else "".
std::string non_finite_literal(const nlohmann::json& v) {
  if (!v.is_string()) return std::string();
  const std::string& s = v.get_ref<const std::string&>();
  const std::string tag = kNonFinite;
  return s.rfind(tag, 0) == 0 ? s.substr(tag.size()) : std::string();
}

/// `v` with every stand-in for a non-finite number replaced by null (fields that are not
/// metrics: a dataset's missing value in `doc` is no error of the import).
void null_non_finite(nlohmann::json& v) {
  if (!non_finite_literal(v).empty()) v = nullptr;
  else if (v.is_object() || v.is_array())
    for (auto& sub : v) null_non_finite(sub);
}

std::string text_of(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return std::string();
  return v.dump();
}

}  // namespace

Result<HarnessLog> read_lm_eval_samples(const std::string& path, const LmEvalReadOptions& options) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return NotFound(fmt::format("{}: no such file", path));
  const std::filesystem::path fp(path);
  HarnessLog log;
  log.path = path;
  log.source = "lm-eval";
  log.subject = options.subject;
  if (log.subject.empty()) {
    std::string dir = std::filesystem::absolute(fp, ec).parent_path().filename().string();
    for (size_t at = dir.find("__"); at != std::string::npos; at = dir.find("__", at + 1)) dir.replace(at, 2, "/");
    log.subject = dir;
    if (log.subject.empty())
      return InvalidArgument(fmt::format("{}: cannot tell the model from the path; name it with --subject", path));
  }
  log.condition = options.task;
  if (log.condition.empty()) {
    static const std::regex kName(R"(^samples_(.+)_(\d{4}-\d{2}-\d{2}T[0-9.\-]+)\.jsonl$)");
    std::smatch m;
    const std::string name = fp.filename().string();
    if (!std::regex_match(name, m, kName))
      return InvalidArgument(fmt::format("{}: the file name is not samples_<task>_<timestamp>.jsonl; name the task "
                                         "with --task",
                                         path));
    log.condition = m[1].str();
  }
  log.config = options.config.empty() ? "default" : options.config;
  log.subject_spec = {{"name", log.subject}, {"source", "lm-eval"}};
  log.config_spec = {{"source", "lm-eval"}};

  NF_ASSIGN_OR_RETURN(std::string text, read_file(path));
  // The samples file keeps no run id; its name carries the run's timestamp, so a run is
  // its name and its bytes: the same file twice (or a copy) is one run, two runs that
  // answered alike (greedy decoding) are still two.
  log.run_id = fp.filename().string() + " sha256 " + sha256_hex(text);
  std::map<std::pair<std::string, int>, size_t> draw_index;  // (item, replicate) -> index in log.draws
  std::map<std::pair<std::string, std::string>, size_t> seen;  // (item, filter) -> line
  size_t pos = 0, line_no = 0, lines = 0;
  int repeats = 0;  // generations per document: 0 until the first line says
  std::set<std::string> dropped_metrics;
  std::set<std::string> raw_filters;  // filters that kept one response, so the raw generations were scored
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    const std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++line_no;
    if (trim(line).empty()) continue;
    ++lines;
    auto err = [&](const std::string& field, const std::string& problem) {
      return InvalidArgument(fmt::format("{}:{}: {}: {}", path, line_no, field, problem));
    };
    NF_RETURN_IF_ERROR(check_json_depth(line, fmt::format("{}:{}", path, line_no)));
    nlohmann::json j;
    try {
      j = parse_line_with_non_finite(line);
    } catch (const nlohmann::json::exception& ex) {
      return InvalidArgument(fmt::format("{}:{}: malformed JSON: {}", path, line_no, ex.what()));
    }
    if (!j.is_object()) return err("(line)", "expected a JSON object, found " + json_type(j));
    for (const auto& k : kBookkeeping)  // a NaN in the doc or in loglikelihood resps is no metric
      if (j.contains(k)) null_non_finite(j[k]);
    const nlohmann::json doc_id = j.value("doc_id", nlohmann::json());
    if (!doc_id.is_number_integer()) return err("doc_id", "missing or not an integer");
    const std::string item = doc_id.dump();
    const std::string filter = j.contains("filter") && j["filter"].is_string() ? j["filter"].get<std::string>() : "none";
    if (auto [it, inserted] = seen.emplace(std::make_pair(item, filter), line_no); !inserted)
      return err("doc_id", fmt::format("{} appears twice for filter '{}' (first on line {})", item, filter, it->second));
    {  // what the line says about the document (check_same_items compares across runs)
      ItemIdentity id;
      id.where = fmt::format("{}:{}", path, line_no);
      id.label = "doc_id " + item;
      for (const char* field : {"doc_hash", "target_hash", "prompt_hash"}) {
        if (!j.contains(field) || j[field].is_null()) continue;
        const std::string v = j[field].is_string() ? j[field].get<std::string>() : j[field].dump();
        (std::string(field) == "prompt_hash" ? id.warn : id.same)[field] = v;
      }
      auto [it, inserted] = log.item_identity.emplace(item, id);
      if (!inserted)  // another filter's line of the document
        for (const auto& [field, v] : id.same)
          if (const auto f = it->second.same.find(field); f != it->second.same.end() && f->second != v)
            return InvalidArgument(identity_mismatch_message(it->second, id, field, "document"));
    }
    std::string cluster = item;
    if (!options.cluster_field.empty()) {
      const nlohmann::json doc = j.value("doc", nlohmann::json());
      if (!doc.is_object() || !doc.contains(options.cluster_field) || text_of(doc[options.cluster_field]).empty())
        return err("doc." + options.cluster_field, "missing or empty (named by --cluster-field)");
      cluster = text_of(doc[options.cluster_field]);
    }
    // Metric fields: those the line lists, or every other number/boolean.
    std::vector<std::string> metric_names;
    if (j.contains("metrics")) {
      if (!j["metrics"].is_array()) return err("metrics", "expected a list of metric names, found " + json_type(j["metrics"]));
      for (const auto& m : j["metrics"]) {
        if (!m.is_string()) return err("metrics", "expected metric names, found " + json_type(m));
        metric_names.push_back(m.get<std::string>());
      }
    } else {
      for (const auto& [k, v] : j.items())
        if (!kBookkeeping.count(k) && (v.is_number() || v.is_boolean() || !non_finite_literal(v).empty()))
          metric_names.push_back(k);
    }
    if (metric_names.empty()) return err("metrics", "no metric field on the line");
    std::vector<Outcome> metrics;
    for (const auto& m : metric_names) {
      if (!j.contains(m)) return err(m, "listed in metrics but missing");
      const nlohmann::json& v = j[m];
      if (const std::string lit = non_finite_literal(v); !lit.empty())
        return err(m, fmt::format("{} is not a number this import accepts (lm-eval writes NaN for a metric it could "
                                  "not compute on this document, which its nanmean aggregation leaves out; a draw "
                                  "needs a finite value for every metric)",
                                  lit));
      if (v.is_boolean()) metrics.push_back({m + "," + filter, v.get<bool>() ? 1.0 : 0.0, ""});
      else if (v.is_number()) metrics.push_back({m + "," + filter, v.get<double>(), ""});
      else return err(m, "expected a number or a boolean, found " + json_type(v));
    }
    const nlohmann::json resps = j.value("resps", nlohmann::json());
    const nlohmann::json filtered = j.value("filtered_resps", nlohmann::json());
    std::vector<std::string> generations;
    if (resps.is_array() && resps.size() == 1 && resps[0].is_array() && resps[0].size() > 1) {
      bool all_text = true;
      for (const auto& g : resps[0]) all_text = all_text && g.is_string();
      if (all_text)
        for (const auto& g : resps[0]) generations.push_back(g.get<std::string>());
    }
    const std::string target = trim(text_of(j.value("target", nlohmann::json())));
    if (generations.empty()) {  // one generation (or a loglikelihood task): one draw with the file's metrics
      if (repeats > 1) return err("resps", fmt::format("one generation, but earlier lines held {} (repeats)", repeats));
      repeats = 1;
      std::string label;
      if (filtered.is_array() && filtered.size() == 1 && filtered[0].is_string()) label = filtered[0].get<std::string>();
      for (auto& o : metrics) o.label = label;
      auto [it, inserted] = draw_index.emplace(std::make_pair(item, 0), log.draws.size());
      if (inserted) {
        HarnessDraw d;
        d.item = item;
        d.cluster = cluster;
        d.replicate = 0;
        if (resps.is_array() && resps.size() == 1 && resps[0].is_array() && resps[0].size() == 1 &&
            resps[0][0].is_string())
          d.content = resps[0][0].get<std::string>();
        d.extra = {{"source", "lm-eval"}, {"file", fp.filename().string()}, {"line", line_no}, {"run", log.run_id}};
        log.draws.push_back(std::move(d));
      }
      HarnessDraw& d = log.draws[it->second];
      if (d.cluster != cluster) return err("doc." + options.cluster_field, "differs between filters of one document");
      for (auto& o : metrics) d.outcomes.push_back(std::move(o));
    } else {
      const int k = static_cast<int>(generations.size());
      if (repeats != 0 && k != repeats)
        return err("resps", fmt::format("{} generations, but earlier lines held {}", k, repeats));
      repeats = k;
      for (const auto& o : metrics) dropped_metrics.insert(o.name);
      std::vector<std::string> per_draw;
      if (filtered.is_array() && filtered.size() == 1 && filtered[0].is_array() &&
          static_cast<int>(filtered[0].size()) == k) {
        for (const auto& f : filtered[0]) per_draw.push_back(text_of(f));
      } else {
        per_draw = generations;
        raw_filters.insert(filter);
      }
      for (int r = 0; r < k; ++r) {
        auto [it, inserted] = draw_index.emplace(std::make_pair(item, r), log.draws.size());
        if (inserted) {
          HarnessDraw d;
          d.item = item;
          d.cluster = cluster;
          d.replicate = r;
          d.content = generations[static_cast<size_t>(r)];
          d.extra = {{"source", "lm-eval"}, {"file", fp.filename().string()}, {"line", line_no}, {"repeats", k},
                     {"run", log.run_id}};
          log.draws.push_back(std::move(d));
        }
        const std::string resp = trim(per_draw[static_cast<size_t>(r)]);
        log.draws[it->second].outcomes.push_back(
            {"draw_exact_match," + filter, resp == target ? 1.0 : 0.0, per_draw[static_cast<size_t>(r)]});
      }
    }
    if (!log.item_data.contains(item)) {
      nlohmann::json data = {{"source", "lm-eval"}, {"target", j.value("target", nlohmann::json())}};
      if (j.contains("doc_hash")) data["doc_hash"] = j["doc_hash"];
      log.item_data[item] = data;
    }
  }
  if (lines == 0) return InvalidArgument(fmt::format("{}: empty file, expected one JSON object per line", path));
  keep_item_identity(&log);
  if (repeats > 1) {
    std::string names, raw;
    for (const auto& m : dropped_metrics) names += (names.empty() ? "" : ", ") + m;
    for (const auto& f : raw_filters) raw += (raw.empty() ? "" : ", ") + f;
    log.warnings.push_back(fmt::format(
        "{}: repeats: {} generations per document, but lm-eval logs one metric per document ({}), not per "
        "generation: those are not imported; each generation is a draw scored by noisefloor as the exact match of "
        "its filtered response, trimmed, against the target (outcome draw_exact_match,<filter>){}",
        path, repeats, names,
        raw.empty() ? std::string()
                    : fmt::format("; filter(s) {} kept only one response, so the raw generations were compared", raw)));
  }
  return log;
}

}  // namespace nf
