// Inspect AI logs (.eval zip archives and .json documents). See inspect_log.h.
#include "data/inspect_log.h"

#include <zip.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <filesystem>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <span>

#include <fmt/format.h>

#include "data/json_type.h"
#include "util/file.h"
#include "util/hash.h"
#include "util/json_depth.h"
#include "util/strings.h"

namespace nf {

std::string harness_config_id(const nlohmann::json& settings) {
  if (!settings.is_object() || settings.empty()) return "default";
  std::string id;
  for (const auto& [k, v] : settings.items()) {  // nlohmann::json keeps object keys sorted
    if (v.is_null()) continue;
    if (!id.empty()) id += ",";
    id += k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
  }
  return id.empty() ? "default" : id;
}

namespace {

constexpr zip_uint64_t kMaxMemberBytes = zip_uint64_t{1} << 30;  // 1 GiB per member

/// A read-only open zip archive (libzip), closed on destruction.
class ZipReader {
 public:
  static Result<std::unique_ptr<ZipReader>> open(const std::string& path) {
    int err = 0;
    zip_t* za = zip_open(path.c_str(), ZIP_RDONLY, &err);
    if (za == nullptr) {
      zip_error_t ze;
      zip_error_init_with_code(&ze, err);
      const std::string msg = zip_error_strerror(&ze);
      zip_error_fini(&ze);
      return InvalidArgument(fmt::format("{}: not a readable .eval (zip) log: {}", path, msg));
    }
    return std::unique_ptr<ZipReader>(new ZipReader(path, za));
  }
  ~ZipReader() { zip_discard(za_); }
  ZipReader(const ZipReader&) = delete;
  ZipReader& operator=(const ZipReader&) = delete;

  std::vector<std::string> names() const {
    std::vector<std::string> out;
    const zip_int64_t n = zip_get_num_entries(za_, 0);
    for (zip_int64_t i = 0; i < n; ++i)
      if (const char* name = zip_get_name(za_, static_cast<zip_uint64_t>(i), 0)) out.emplace_back(name);
    return out;
  }

  bool has(const std::string& name) const { return zip_name_locate(za_, name.c_str(), 0) >= 0; }

  Result<std::string> read(const std::string& name) const {
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat(za_, name.c_str(), 0, &st) != 0)
      return InvalidArgument(fmt::format("{}: {}: missing from the archive", path_, name));
    if ((st.valid & ZIP_STAT_SIZE) == 0 || st.size > kMaxMemberBytes)
      return InvalidArgument(fmt::format("{}: {}: size unknown or above 1 GiB", path_, name));
    zip_file_t* f = zip_fopen(za_, name.c_str(), 0);
    if (f == nullptr)
      return InvalidArgument(fmt::format("{}: {}: cannot open: {}", path_, name, zip_strerror(za_)));
    std::string out(static_cast<size_t>(st.size), '\0');
    const zip_int64_t got = out.empty() ? 0 : zip_fread(f, out.data(), st.size);
    std::string err = got < 0 ? zip_file_strerror(f) : std::string();
    zip_fclose(f);
    if (got < 0 || static_cast<zip_uint64_t>(got) != st.size)
      return InvalidArgument(fmt::format("{}: {}: corrupt member ({})", path_, name,
                                         err.empty() ? "short read" : err));
    return out;
  }

 private:
  ZipReader(std::string path, zip_t* za) : path_(std::move(path)), za_(za) {}
  std::string path_;
  zip_t* za_;
};

Result<nlohmann::json> parse_json(const std::string& where, const std::string& text) {
  NF_RETURN_IF_ERROR(check_json_depth(text, where));
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& ex) {
    return InvalidArgument(fmt::format("{}: malformed JSON: {}", where, ex.what()));
  }
}

/// Python's float() on a string as Inspect's is_finite_number uses it: surrounding
/// whitespace, an optional sign, decimal digits with an optional point and exponent; the
/// value must be finite ("nan", "inf", "1e999" are not). Underscores between digits
/// (which Python accepts) and hexadecimal (which strtod accepts) are not numbers here.
bool parse_number_text(const std::string& s, double* out) {
  static const std::regex kNumber(R"(^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$)");
  const std::string t = trim(s);
  if (!std::regex_match(t, kNumber)) return false;
  const double v = std::strtod(t.c_str(), nullptr);  // an underflow reads as Python's (0 or subnormal)
  if (!std::isfinite(v)) return false;
  *out = v;
  return true;
}

// One score value -> outcomes (inspect_score_outcomes); `written`, when given, receives
// each outcome's value as written in the log (JSON), for the mixing message.
Status add_value(const std::string& name, const nlohmann::json& v, const std::string& label,
                 std::vector<Outcome>* out, std::vector<std::string>* written) {
  if (v.is_null()) return Status::Ok();
  const size_t before = out->size();
  if (v.is_boolean()) {
    out->push_back({name, v.get<bool>() ? 1.0 : 0.0, label});
  } else if (v.is_number()) {
    out->push_back({name, v.get<double>(), label});
  } else if (v.is_string()) {
    // Inspect's value_to_float (scorer/_metric.py): the CORRECT / INCORRECT / PARTIAL /
    // NOANSWER constants exactly as written ("c" and "C " are not "C"), then the string
    // lower-cased but not trimmed: yes/true 1, no/false 0, a finite number. Any other
    // string is a label (a category: read_inspect_log codes it, or refuses a scorer that
    // mixes labels with scores).
    const std::string s = v.get<std::string>();
    const std::string lower = to_lower(s);
    const std::string shown = label.empty() ? s : label;
    double num = 0;
    if (s == "C") out->push_back({name, 1.0, shown});
    else if (s == "P") out->push_back({name, 0.5, shown});
    else if (s == "I" || s == "N") out->push_back({name, 0.0, shown});
    else if (lower == "yes" || lower == "true") out->push_back({name, 1.0, shown});
    else if (lower == "no" || lower == "false") out->push_back({name, 0.0, shown});
    else if (parse_number_text(s, &num)) out->push_back({name, num, label});
    else if (trim(s).empty())
      return InvalidArgument(fmt::format(
          "{}: value {} is empty: neither a score Inspect's value_to_float converts nor a label; give the sample a "
          "score, or null for none",
          name, v.dump()));
    else
      out->push_back({name, std::numeric_limits<double>::quiet_NaN(), s});  // a label
  } else if (v.is_object()) {
    for (const auto& [k, sub] : v.items()) NF_RETURN_IF_ERROR(add_value(name + "." + k, sub, "", out, written));
  } else if (v.is_array()) {
    for (size_t i = 0; i < v.size(); ++i)
      NF_RETURN_IF_ERROR(add_value(fmt::format("{}[{}]", name, i), v[i], "", out, written));
  }
  if (written != nullptr && out->size() == before + 1) written->push_back(v.dump());
  return Status::Ok();
}

std::string id_text(const nlohmann::json& id) {
  if (id.is_string()) return id.get<std::string>();
  if (id.is_number_integer() || id.is_number_unsigned()) return id.dump();
  return std::string();
}

/// The name of a version-1 log's single scorer (results.scorer.name, or the first of
/// results.scores / eval.scorers), else "score".
std::string v1_scorer_name(const nlohmann::json& header) {
  const nlohmann::json* res = header.contains("results") ? &header["results"] : nullptr;
  if (res != nullptr && res->is_object()) {
    if (res->contains("scorer") && (*res)["scorer"].is_object() && (*res)["scorer"].contains("name") &&
        (*res)["scorer"]["name"].is_string())
      return (*res)["scorer"]["name"].get<std::string>();
    if (res->contains("scores") && (*res)["scores"].is_array() && !(*res)["scores"].empty() &&
        (*res)["scores"][0].is_object() && (*res)["scores"][0].value("name", nlohmann::json()).is_string())
      return (*res)["scores"][0]["name"].get<std::string>();
  }
  return "score";
}

struct LogContext {
  std::string path;
  int version = 2;
  std::string v1_scorer;
  std::string cluster_field;
};

/// sha256_hex of `v`'s JSON (nlohmann keeps object keys sorted), for comparing a sample's
/// input and target across logs. A chat message's `id` is left out: Inspect generates one
/// (shortuuid) for each message it creates, so the same dataset input gets new ids per run.
std::string identity_hash(nlohmann::json v) {
  if (v.is_array())
    for (auto& m : v)
      if (m.is_object()) m.erase("id");
  return sha256_hex(v.dump());
}

Status read_sample(const LogContext& ctx, const std::string& where, const nlohmann::json& s, HarnessLog* log,
                   size_t* unscored) {
  auto err = [&](const std::string& field, const std::string& problem) {
    return InvalidArgument(fmt::format("{}: {}: {}: {}", ctx.path, where, field, problem));
  };
  if (!s.is_object()) return err("sample", "expected an object, found " + json_type(s));
  const std::string item = id_text(s.value("id", nlohmann::json()));
  if (item.empty()) return err("id", "missing, or not a string or integer");
  const nlohmann::json epoch = s.value("epoch", nlohmann::json(1));
  if (!epoch.is_number_integer() || epoch.get<int64_t>() < 1 || epoch.get<int64_t>() > 1000000)
    return err("epoch", "expected an integer >= 1, found " + epoch.dump());
  {  // what the sample answered (check_same_items compares across logs)
    ItemIdentity id;
    id.where = fmt::format("{}: {} (sample {}, epoch {})", ctx.path, where, item, epoch.dump());
    id.label = "sample " + item;
    for (const char* field : {"input", "target"})
      if (s.contains(field) && !s[field].is_null()) id.same[std::string(field) + " sha256"] = identity_hash(s[field]);
    auto [it, inserted] = log->item_identity.emplace(item, id);
    if (!inserted)  // another epoch of the sample
      for (const auto& [field, v] : id.same)
        if (const auto f = it->second.same.find(field); f != it->second.same.end() && f->second != v)
          return InvalidArgument(identity_mismatch_message(it->second, id, field, "sample"));
  }
  HarnessDraw d;
  d.item = item;
  d.replicate = static_cast<int>(epoch.get<int64_t>() - 1);
  d.cluster = item;
  if (!ctx.cluster_field.empty()) {
    const nlohmann::json md = s.value("metadata", nlohmann::json::object());
    if (!md.is_object() || !md.contains(ctx.cluster_field))
      return err("metadata." + ctx.cluster_field, "missing (named by --cluster-field)");
    const std::string c = md[ctx.cluster_field].is_string() ? md[ctx.cluster_field].get<std::string>()
                                                            : id_text(md[ctx.cluster_field]);
    if (c.empty())
      return err("metadata." + ctx.cluster_field,
                 "expected a string or an integer, found " + json_type(md[ctx.cluster_field]));
    d.cluster = c;
  }
  d.extra = {{"source", "inspect"},
             {"log", std::filesystem::path(ctx.path).filename().string()},
             {"sample", where},
             {"epoch", epoch},
             {"run", log->run_id}};
  if (s.contains("uuid") && s["uuid"].is_string()) d.extra["uuid"] = s["uuid"];
  if (const auto& out = s.value("output", nlohmann::json()); out.is_object()) {
    if (out.contains("completion") && out["completion"].is_string()) d.content = out["completion"].get<std::string>();
    if (out.contains("model") && out["model"].is_string()) d.served_model = out["model"].get<std::string>();
    if (out.contains("choices") && out["choices"].is_array() && !out["choices"].empty() &&
        out["choices"][0].is_object() && out["choices"][0].value("stop_reason", nlohmann::json()).is_string())
      d.finish_reason = out["choices"][0]["stop_reason"].get<std::string>();
    if (out.contains("usage") && out["usage"].is_object()) {
      const auto& u = out["usage"];
      if (u.value("input_tokens", nlohmann::json()).is_number_integer()) d.prompt_tokens = u["input_tokens"].get<int64_t>();
      if (u.value("output_tokens", nlohmann::json()).is_number_integer())
        d.completion_tokens = u["output_tokens"].get<int64_t>();
    }
  }
  const nlohmann::json error = s.value("error", nlohmann::json());
  if (!error.is_null()) {
    d.status = DrawStatus::kApiError;
    if (error.is_object() && error.contains("message") && error["message"].is_string())
      d.error = error["message"].get<std::string>();
    else
      d.error = error.is_string() ? error.get<std::string>() : error.dump();
    log->draws.push_back(std::move(d));
    return Status::Ok();
  }
  nlohmann::json scores = s.value("scores", nlohmann::json());
  if (s.contains("score") && !s["score"].is_null()) {  // log version 1: one score, no scorer name
    if (!scores.is_null()) return err("score", "a sample holds both 'score' (version 1) and 'scores'");
    scores = nlohmann::json::object({{ctx.v1_scorer, s["score"]}});
  }
  if (!scores.is_null() && !scores.is_object()) return err("scores", "expected an object, found " + json_type(scores));
  if (scores.is_null() || scores.empty()) {
    ++*unscored;
    return Status::Ok();
  }
  for (const auto& [scorer, sc] : scores.items()) {
    if (!sc.is_object() || !sc.contains("value"))
      return err("scores." + scorer, "expected an object with a 'value', found " + json_type(sc));
    const nlohmann::json answer = sc.value("answer", nlohmann::json());
    std::vector<Outcome> outcomes;
    std::vector<std::string> written;
    const std::string at = fmt::format("{} (sample {}, epoch {})", where, item, epoch.dump());
    if (Status st = add_value(scorer, sc["value"], answer.is_string() ? answer.get<std::string>() : std::string(),
                              &outcomes, &written);
        !st.ok())
      return InvalidArgument(fmt::format("{}: {}: scores.{}", ctx.path, at, st.message()));
    for (size_t k = 0; k < outcomes.size(); ++k) {
      // Every value of an outcome is a score, or every one a label (ScoreKind).
      const ScoreKind kind{std::isnan(outcomes[k].value), at, written[k]};
      auto [it, first] = log->score_kinds.emplace(outcomes[k].name, kind);
      if (!first && it->second.labels != kind.labels)
        return InvalidArgument(mixed_scores_message(outcomes[k].name, it->second, ctx.path, kind, ctx.path));
      d.outcomes.push_back(std::move(outcomes[k]));
    }
  }
  if (d.outcomes.empty()) {
    ++*unscored;
    return Status::Ok();
  }
  if (!log->item_data.contains(item)) {
    nlohmann::json data = {{"source", "inspect"}};
    if (s.contains("target")) data["target"] = s["target"];
    log->item_data[item] = data;
  }
  log->draws.push_back(std::move(d));
  return Status::Ok();
}

}  // namespace

Result<std::vector<Outcome>> inspect_score_outcomes(const std::string& scorer, const nlohmann::json& value,
                                                    const nlohmann::json& answer) {
  std::vector<Outcome> out;
  NF_RETURN_IF_ERROR(
      add_value(scorer, value, answer.is_string() ? answer.get<std::string>() : std::string(), &out, nullptr));
  return out;
}

Result<HarnessLog> read_inspect_log(const std::string& path, const InspectReadOptions& options) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return NotFound(fmt::format("{}: no such file", path));
  const std::string lower = to_lower(path);
  const bool is_eval = lower.size() >= 5 && lower.compare(lower.size() - 5, 5, ".eval") == 0;
  const bool is_json = lower.size() >= 5 && lower.compare(lower.size() - 5, 5, ".json") == 0;
  if (!is_eval && !is_json)
    return InvalidArgument(fmt::format("{}: unknown Inspect log extension, expected .eval or .json", path));

  // The header first; the samples are then read one at a time (a zip member is parsed,
  // turned into a draw and dropped), so a log's events never all sit in memory at once.
  nlohmann::json header;
  std::unique_ptr<ZipReader> zip;
  std::vector<std::string> members;  // .eval: samples/*.json members, in name order
  size_t n_samples = 0;
  std::string header_name = "header.json";
  if (is_eval) {
    NF_ASSIGN_OR_RETURN(zip, ZipReader::open(path));
    // A finished log has header.json; one still running has only _journal/start.json.
    if (!zip->has(header_name)) header_name = "_journal/start.json";
    if (!zip->has(header_name))
      return InvalidArgument(fmt::format("{}: neither header.json nor _journal/start.json in the archive: not an "
                                         "Inspect .eval log",
                                         path));
    NF_ASSIGN_OR_RETURN(std::string text, zip->read(header_name));
    NF_ASSIGN_OR_RETURN(header, parse_json(path + ": " + header_name, text));
    for (const auto& n : zip->names())
      if (n.rfind("samples/", 0) == 0 && n.size() > 13 && n.compare(n.size() - 5, 5, ".json") == 0) members.push_back(n);
    std::sort(members.begin(), members.end());
    n_samples = members.size();
  } else {
    NF_ASSIGN_OR_RETURN(std::string text, read_file(path));
    NF_ASSIGN_OR_RETURN(header, parse_json(path, text));
    header_name = "(document)";
    if (header.is_object() && header.contains("samples")) {
      if (!header["samples"].is_array())
        return InvalidArgument(fmt::format("{}: samples: expected an array, found {}", path, json_type(header["samples"])));
      n_samples = header["samples"].size();
    }
  }
  auto herr = [&](const std::string& field, const std::string& problem) {
    return InvalidArgument(fmt::format("{}: {}: {}: {}", path, header_name, field, problem));
  };
  if (!header.is_object()) return herr("(top level)", "expected an object, found " + json_type(header));
  const nlohmann::json version = header.value("version", nlohmann::json());
  if (!version.is_number_integer()) return herr("version", "missing or not an integer: not an Inspect log");
  LogContext ctx{path, version.get<int>(), "", options.cluster_field};
  if (ctx.version != 1 && ctx.version != 2)
    return herr("version", fmt::format("{} is not supported (Inspect log versions 1 and 2 are)", ctx.version));
  const nlohmann::json eval = header.value("eval", nlohmann::json());
  if (!eval.is_object()) return herr("eval", "missing or not an object");
  if (!eval.value("model", nlohmann::json()).is_string() || eval["model"].get<std::string>().empty())
    return herr("eval.model", "missing or empty");
  if (!eval.value("task", nlohmann::json()).is_string() || eval["task"].get<std::string>().empty())
    return herr("eval.task", "missing or empty");
  ctx.v1_scorer = v1_scorer_name(header);

  HarnessLog log;
  log.path = path;
  log.source = "inspect";
  log.subject = eval["model"].get<std::string>();
  log.condition = eval["task"].get<std::string>();
  nlohmann::json gen = nlohmann::json::object();
  if (eval.contains("model_generate_config") && eval["model_generate_config"].is_object())
    gen.update(eval["model_generate_config"]);
  if (header.contains("plan") && header["plan"].is_object() && header["plan"].contains("config") &&
      header["plan"]["config"].is_object())
    gen.update(header["plan"]["config"]);
  log.config = harness_config_id(gen);
  log.config_spec = {{"source", "inspect"}, {"generate_config", gen}};
  log.subject_spec = {{"name", log.subject}, {"source", "inspect"}};
  if (eval.contains("model_base_url") && eval["model_base_url"].is_string())
    log.subject_spec["base_url"] = eval["model_base_url"];
  // The run's identity: eval.eval_id ("globally unique id for eval", log/_log.py; a retry
  // gets a new one); an older log without one is known by its bytes.
  if (eval.value("eval_id", nlohmann::json()).is_string() && !eval["eval_id"].get<std::string>().empty()) {
    log.run_id = "eval_id " + eval["eval_id"].get<std::string>();
  } else {
    NF_ASSIGN_OR_RETURN(std::string bytes, read_file(path));
    log.run_id = "sha256 " + sha256_hex(bytes);
  }

  if (n_samples == 0)
    return InvalidArgument(fmt::format("{}: holds no samples (was the eval run with log_samples=False, or has it "
                                       "not reached its first sample yet?)",
                                       path));
  size_t unscored = 0;
  std::map<std::string, std::set<int>> epochs_of;  // sample id -> epochs held
  for (size_t k = 0; k < n_samples; ++k) {
    nlohmann::json member;
    std::string where;
    if (zip) {
      where = members[k];
      NF_ASSIGN_OR_RETURN(std::string st, zip->read(where));
      NF_ASSIGN_OR_RETURN(member, parse_json(path + ": " + where, st));
    } else {
      where = fmt::format("samples[{}]", k);
    }
    const nlohmann::json& s = zip ? member : header["samples"][k];
    NF_RETURN_IF_ERROR(read_sample(ctx, where, s, &log, &unscored));
    // read_sample has checked id and epoch.
    epochs_of[id_text(s["id"])].insert(s.value("epoch", nlohmann::json(1)).get<int>());
  }

  keep_item_identity(&log);
  // Label outcomes -> categories, first seen = 0 (code_label_scores recodes them across
  // the logs of one import).
  NF_RETURN_IF_ERROR(code_label_scores(std::span<HarnessLog>(&log, 1)));

  const std::string status = header.value("status", nlohmann::json("")).is_string()
                                 ? header.value("status", std::string())
                                 : std::string();
  if (!status.empty() && status != "success")
    log.warnings.push_back(fmt::format("{}: status '{}': the run did not finish; imported the samples it holds",
                                       path, status));
  if (unscored > 0)
    log.warnings.push_back(fmt::format("{}: {} sample record(s) without scores were left out", path, unscored));
  // Declared epochs vs what the log holds.
  int64_t declared = 1;
  if (eval.contains("config") && eval["config"].is_object() && eval["config"].contains("epochs") &&
      eval["config"]["epochs"].is_number_integer())
    declared = std::max<int64_t>(1, eval["config"]["epochs"].get<int64_t>());
  int64_t records = 0;
  size_t short_samples = 0;
  for (const auto& [item, eps] : epochs_of) {
    records += static_cast<int64_t>(eps.size());
    if (static_cast<int64_t>(eps.size()) < declared) ++short_samples;
  }
  if (short_samples > 0)
    log.warnings.push_back(fmt::format(
        "{}: declares {} epochs ({} samples x {} = {} records) but holds {} records ({} of {} samples have fewer "
        "than {} epochs); imported the {} it holds",
        path, declared, epochs_of.size(), declared, declared * static_cast<int64_t>(epochs_of.size()), records,
        short_samples, epochs_of.size(), declared, records));
  return log;
}

}  // namespace nf
