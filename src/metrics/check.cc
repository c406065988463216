#include "metrics/check.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "stats/proportion.h"
#include "util/strings.h"

namespace nf {

namespace {

const std::vector<std::string> kKinds{"flip_rate_clears_floor", "accuracy_difference_clears_floor",
                                      "max_pooled_floor", "max_parse_error_rate", "max_parse_rate", "min_clusters"};
const std::vector<std::string> kSelectors{"subject", "config", "condition", "outcome", "action", "a", "b"};

bool has_limit(const std::string& kind) { return kind.rfind("max_", 0) == 0 || kind == "min_clusters"; }

std::string fmt_num(double x) { return fmt::format("{:.4g}", x); }

/// Reads a number or null from results.json.
bool number(const nlohmann::json& j, const char* key, double* out) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number()) return false;
  *out = j[key].get<double>();
  return true;
}

// A floor's upper bound for a gate (tester s11 finding 6: a flip rate of 1/12 "cleared" a
// floor of 0/18 from 3 vignettes, an accuracy difference of one item in ten "cleared" two
// 0/100 floors). The interval's upper end, unless its bootstrap resamples were all equal
// (`degenerate`, or ci_low == ci_high): [0, 0] from a few items is not a certainty. Then:
// - a floor of 0 (no replicate pair of any item disagreed): the Wilson score upper bound
//   (row's level, else 95%) on the share of the row's `clusters` whose replicates can
//   disagree at all. A cluster's own floor is at most 1, so the floor is at most that
//   share; it is the cluster, not the pair, that is the independent unit, so the pairs'
//   Wilson bound (`exact_interval`, 0.176 for 0/18) would still overstate the certainty;
// - otherwise the larger of the interval's end and the pairs' Wilson bound (exact_interval.hi).
// Sets *note to what was used ("" for the plain interval). False when the row has no upper end.
bool floor_upper_bound(const nlohmann::json& f, double level, double* high, std::string* note) {
  note->clear();
  if (!number(f, "ci_high", high)) return false;
  double low = 0, rate = 0, clusters = 0, wilson = 0;
  const bool flagged = f.contains("degenerate") && f["degenerate"].is_boolean() && f["degenerate"].get<bool>();
  const bool degenerate = flagged || (number(f, "ci_low", &low) && low == *high);
  if (!degenerate) return true;
  if (number(f, "rate", &rate) && rate == 0 && number(f, "clusters", &clusters) && clusters >= 1) {
    auto w = stats::wilson(0, static_cast<int64_t>(clusters), level);
    if (w.ok() && w->high > *high) {
      *high = w->high;
      *note = fmt::format("the Wilson bound for 0 of {} clusters varying: the bootstrap interval is degenerate, every "
                          "resample equal, which is not a certainty", static_cast<int64_t>(clusters));
    }
    return true;
  }
  if (f.contains("exact_interval") && number(f["exact_interval"], "hi", &wilson) && wilson > *high) {
    *high = wilson;
    *note = "the Wilson score bound: the bootstrap interval is degenerate, every resample equal, which is not a certainty";
  }
  return true;
}

std::string str(const nlohmann::json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
}

/// True when every selector of the rule that names one of `fields` matches.
bool selected(const CheckRule& r, const std::map<std::string, std::string>& fields) {
  for (const auto& [k, v] : r.select.items()) {
    auto it = fields.find(k);
    if (it == fields.end()) it = fields.find(k == "action" ? "outcome" : k == "outcome" ? "action" : k);
    if (it == fields.end()) continue;
    if (it->second != v.get<std::string>()) return false;
  }
  return true;
}

std::string cell_text(const std::map<std::string, std::string>& fields, const std::vector<std::string>& order) {
  std::string out;
  for (const auto& k : order) {
    auto it = fields.find(k);
    if (it == fields.end() || it->second.empty()) continue;
    if (!out.empty()) out += " ";
    out += k + "=" + it->second;
  }
  return out;
}

const nlohmann::json& rows_of(const nlohmann::json& results, const char* analysis) {
  static const nlohmann::json kEmpty = nlohmann::json::array();
  if (!results.contains("analyses") || !results["analyses"].contains(analysis)) return kEmpty;
  const auto& a = results["analyses"][analysis];
  return a.contains("rows") && a["rows"].is_array() ? a["rows"] : kEmpty;
}

// The interval level of an analysis's rows (its `bootstrap.level`), 0.95 when not stated.
double level_of(const nlohmann::json& results, const char* analysis) {
  double level = 0.95;
  if (results.contains("analyses") && results["analyses"].contains(analysis)) {
    const auto& a = results["analyses"][analysis];
    if (a.contains("bootstrap") && a["bootstrap"].is_object() && number(a["bootstrap"], "level", &level) &&
        level > 0 && level < 1)
      return level;
  }
  return 0.95;
}

}  // namespace

std::string CheckRule::describe() const {
  std::string s = kind;
  if (kind.rfind("max_", 0) == 0) s += " <= " + fmt_num(limit);
  if (kind == "min_clusters") s += " >= " + fmt_num(limit);
  if (use != "point") s += " (use " + use + ")";
  for (const auto& [k, v] : select.items()) s += " " + k + "=" + v.get<std::string>();
  if (!origin.empty()) s += " [" + origin + "]";
  return s;
}

size_t CheckReport::failed() const {
  return static_cast<size_t>(std::count_if(findings.begin(), findings.end(), [](const auto& f) { return !f.passed; }));
}

Result<std::vector<CheckRule>> parse_check_rules(const std::string& yaml_text, const std::string& origin) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& ex) {
    return InvalidArgument(fmt::format("{}:{}: malformed YAML: {}", origin, ex.mark.line + 1, ex.msg));
  }
  auto line = [](const YAML::Node& n) { return n.Mark().line + 1; };
  YAML::Node list = root;
  if (root.IsMap()) {
    for (const auto& kv : root)
      if (kv.first.as<std::string>() != "rules")
        return InvalidArgument(fmt::format("{}:{}: {}: unknown key (expected 'rules'){}", origin, line(kv.first),
                                           kv.first.as<std::string>(),
                                           did_you_mean(kv.first.as<std::string>(), {"rules"})));
    list = root["rules"];
  }
  if (!list || !list.IsSequence() || list.size() == 0)
    return InvalidArgument(fmt::format("{}:1: rules: expected a non-empty list of rules", origin));
  std::vector<CheckRule> rules;
  try {
  for (const auto& n : list) {
    if (!n.IsMap()) return InvalidArgument(fmt::format("{}:{}: rules: each rule is a map with 'rule'", origin, line(n)));
    CheckRule r;
    r.origin = fmt::format("{}:{}", origin, line(n));
    if (!n["rule"] || !n["rule"].IsScalar())
      return InvalidArgument(fmt::format("{}: rule: missing (one of {})", r.origin, fmt::join(kKinds, ", ")));
    r.kind = n["rule"].as<std::string>();
    if (std::find(kKinds.begin(), kKinds.end(), r.kind) == kKinds.end())
      return InvalidArgument(fmt::format("{}: rule: unknown rule '{}'{}", r.origin, r.kind, did_you_mean(r.kind, kKinds)));
    for (const auto& kv : n) {
      const std::string key = kv.first.as<std::string>();
      const std::string where = fmt::format("{}:{}: {}", origin, line(kv.first), key);
      if (key == "rule") continue;
      if (key == "max" || key == "min") {
        if (!has_limit(r.kind) || (key == "max") != (r.kind.rfind("max_", 0) == 0))
          return InvalidArgument(fmt::format("{}: does not apply to {}", where, r.kind));
        double v = 0;
        try {
          v = kv.second.as<double>();
        } catch (const YAML::Exception&) {
          return InvalidArgument(fmt::format("{}: expected a number", where));
        }
        if (!std::isfinite(v) || v < 0) return InvalidArgument(fmt::format("{}: expected a number >= 0", where));
        r.limit = v;
        r.select["__limit"] = true;
      } else if (key == "use") {
        r.use = kv.second.as<std::string>();
        const bool ok = (r.kind == "flip_rate_clears_floor" && (r.use == "point" || r.use == "lower")) ||
                        (r.kind == "max_pooled_floor" && (r.use == "point" || r.use == "upper")) || r.use == "point";
        if (!ok) return InvalidArgument(fmt::format("{}: '{}' does not apply to {}", where, r.use, r.kind));
      } else if (key == "include_controls") {
        r.include_controls = kv.second.as<bool>();
      } else if (std::find(kSelectors.begin(), kSelectors.end(), key) != kSelectors.end()) {
        if (!kv.second.IsScalar()) return InvalidArgument(fmt::format("{}: expected a name", where));
        r.select[key] = kv.second.as<std::string>();
      } else {
        std::vector<std::string> known = kSelectors;
        for (const char* k : {"rule", "max", "min", "use", "include_controls"}) known.push_back(k);
        return InvalidArgument(fmt::format("{}: unknown key{}", where, did_you_mean(key, known)));
      }
    }
    if (has_limit(r.kind) && !r.select.contains("__limit"))
      return InvalidArgument(fmt::format("{}: {}: missing '{}'", r.origin, r.kind,
                                         r.kind == "min_clusters" ? "min" : "max"));
    r.select.erase("__limit");
    rules.push_back(std::move(r));
  }
  } catch (const YAML::Exception& ex) {  // a value of the wrong shape (a list where a name belongs ...)
    return InvalidArgument(fmt::format("{}:{}: {}", origin, ex.mark.line + 1, ex.msg));
  }
  return rules;
}

std::vector<std::string> analyses_needed(const std::vector<CheckRule>& rules) {
  std::set<std::string> out;
  for (const auto& r : rules) {
    if (r.kind == "flip_rate_clears_floor") out.insert("fairness");
    if (r.kind == "accuracy_difference_clears_floor") {
      out.insert("paired_subjects");
      out.insert("floor");
    }
    if (r.kind == "max_pooled_floor" || r.kind == "min_clusters") out.insert("floor");
  }
  return {out.begin(), out.end()};
}

Result<CheckReport> evaluate_checks(const nlohmann::json& results, const std::vector<CheckRule>& rules) {
  CheckReport rep;
  for (size_t i = 0; i < rules.size(); ++i) {
    const CheckRule& r = rules[i];
    const size_t before = rep.findings.size();
    auto add = [&](const std::map<std::string, std::string>& f, const std::vector<std::string>& order, bool pass,
                   const std::string& detail) { rep.findings.push_back({i, cell_text(f, order), pass, detail}); };
    const std::vector<std::string> kCellOrder{"subject", "config", "condition", "outcome"};
    if (r.kind == "flip_rate_clears_floor") {
      const double level = level_of(results, "fairness");
      for (const auto& row : rows_of(results, "fairness")) {
        std::map<std::string, double> floor_high;
        std::map<std::string, std::string> bound_note;  // action -> what floor_upper_bound used
        if (row.contains("floors"))
          for (const auto& f : row["floors"]) {
            double h = 0;
            if (std::string note; floor_upper_bound(f, level, &h, &note)) {
              floor_high[str(f, "action")] = h;
              if (!note.empty()) bound_note[str(f, "action")] = note;
            }
          }
        for (const auto& fl : row.value("flips", nlohmann::json::array())) {
          if (fl.value("control", false) && !r.include_controls) continue;
          std::map<std::string, std::string> f{{"subject", str(row, "subject")}, {"config", str(row, "config")},
                                               {"condition", str(fl, "condition")}, {"action", str(fl, "action")}};
          if (!selected(r, f)) continue;
          const std::vector<std::string> order{"subject", "config", "condition", "action"};
          double rate = 0;
          const bool have = number(fl, r.use == "lower" ? "flip_low" : "flip_rate", &rate);
          auto fh = floor_high.find(f["action"]);
          if (!have || fh == floor_high.end()) {
            add(f, order, false, "flip rate or floor interval undefined (no pairs)");
            continue;
          }
          const bool pass = rate > fh->second;
          add(f, order, pass,
              fmt::format("flip rate{} {} {} floor upper bound {}{}", r.use == "lower" ? " lower bound" : "",
                          fmt_num(rate), pass ? ">" : "<=", fmt_num(fh->second),
                          bound_note.count(f["action"]) ? " (" + bound_note[f["action"]] + ")" : std::string()));
        }
      }
    } else if (r.kind == "accuracy_difference_clears_floor") {
      std::map<std::string, double> floor_high;  // subject|config|condition|outcome -> ci_high
      std::map<std::string, std::string> bound_note;  // ... -> what floor_upper_bound used
      const double level = level_of(results, "floor");
      for (const auto& row : rows_of(results, "floor")) {
        double h = 0;
        const std::string key = str(row, "subject") + "|" + str(row, "config") + "|" + str(row, "condition") + "|" +
                                str(row, "outcome");
        if (std::string note; floor_upper_bound(row, level, &h, &note)) {
          floor_high[key] = h;
          if (!note.empty()) bound_note[key] = note;
        }
      }
      for (const auto& row : rows_of(results, "paired_subjects")) {
        std::map<std::string, std::string> f{{"a", str(row, "a")}, {"b", str(row, "b")},
                                             {"config", str(row, "config")}, {"condition", str(row, "condition")},
                                             {"outcome", str(row, "outcome")}};
        // The rule may name the pair in either order; rows are stored a < b by name
        // (tester s11 finding 19: `a: candidate, b: baseline` matched no cell).
        double sign = 1;
        if (!selected(r, f)) {
          std::swap(f["a"], f["b"]);
          if (!selected(r, f)) continue;
          sign = -1;
        }
        const std::vector<std::string> order{"a", "b", "config", "condition", "outcome"};
        const std::string tail = "|" + f["config"] + "|" + f["condition"] + "|" + f["outcome"];
        auto ha = floor_high.find(f["a"] + tail), hb = floor_high.find(f["b"] + tail);
        double diff = 0;
        if (!number(row, "difference", &diff) || ha == floor_high.end() || hb == floor_high.end()) {
          add(f, order, false, "accuracy difference or a floor interval undefined (a subject has < 2 replicates?)");
          continue;
        }
        diff *= sign;
        const double bound = std::max(ha->second, hb->second);
        const bool pass = std::fabs(diff) > bound;
        add(f, order, pass,
            fmt::format("|accuracy difference| {} {} larger floor upper bound {} (a - b = {}: {}; {} {}, {} {}){}",
                        fmt_num(std::fabs(diff)), pass ? ">" : "<=", fmt_num(bound), fmt_num(diff),
                        diff > 0 ? "a is ahead" : diff < 0 ? "b is ahead" : "equal", f["a"], fmt_num(ha->second),
                        f["b"], fmt_num(hb->second),
                        bound_note.count(f["a"] + tail)   ? "; " + f["a"] + ": " + bound_note[f["a"] + tail]
                        : bound_note.count(f["b"] + tail) ? "; " + f["b"] + ": " + bound_note[f["b"] + tail]
                                                          : std::string()));
      }
    } else if (r.kind == "max_pooled_floor") {
      for (const auto& row : rows_of(results, "floor")) {
        if (str(row, "outcome") != "pooled") continue;
        std::map<std::string, std::string> f{{"subject", str(row, "subject")}, {"config", str(row, "config")},
                                             {"condition", str(row, "condition")}, {"outcome", "pooled"}};
        if (!selected(r, f)) continue;
        double v = 0;
        if (!number(row, r.use == "upper" ? "ci_high" : "rate", &v)) {
          add(f, kCellOrder, false, "pooled floor undefined (no replicate pairs)");
          continue;
        }
        const bool pass = v <= r.limit;
        add(f, kCellOrder, pass,
            fmt::format("pooled floor{} {} {} {}", r.use == "upper" ? " upper bound" : "", fmt_num(v),
                        pass ? "<=" : ">", fmt_num(r.limit)));
      }
    } else if (r.kind == "max_parse_error_rate" || r.kind == "max_parse_rate") {  // the old name is an alias
      const nlohmann::json& rows = results.contains("draws") && results["draws"].contains("rows")
                                       ? results["draws"]["rows"]
                                       : nlohmann::json::array();
      for (const auto& row : rows) {
        std::map<std::string, std::string> f{{"subject", str(row, "subject")}, {"config", str(row, "config")},
                                             {"condition", str(row, "condition")}};
        if (!selected(r, f)) continue;
        double v = 0;
        // results.json before 2026-12 called the same share `parse_rate`. No number: every draw
        // failed at the API, so there are no answers to parse.
        if (!number(row, "parse_error_rate", &v) && !number(row, "parse_rate", &v)) continue;
        const bool pass = v <= r.limit;
        add(f, kCellOrder, pass, fmt::format("parse error rate {} {} {}", fmt_num(v), pass ? "<=" : ">", fmt_num(r.limit)));
      }
    } else if (r.kind == "min_clusters") {
      auto check = [&](const char* analysis, const char* field, const char* what) {
        for (const auto& row : rows_of(results, analysis)) {
          std::map<std::string, std::string> f{{"subject", str(row, "subject")}, {"config", str(row, "config")},
                                               {"condition", str(row, "condition")}, {"outcome", str(row, "outcome")},
                                               {"a", str(row, "a")}, {"b", str(row, "b")}};
          if (!selected(r, f)) continue;
          double v = 0;
          if (!number(row, field, &v)) continue;
          const bool pass = v >= r.limit;
          f["analysis"] = analysis;
          add(f, {"analysis", "subject", "a", "b", "config", "condition", "outcome"}, pass,
              fmt::format("{} {} {} {}", what, fmt_num(v), pass ? ">=" : "<", fmt_num(r.limit)));
        }
      };
      check("floor", "clusters", "clusters");
      check("fairness", "vignettes", "vignettes (clusters)");
      check("paired_subjects", "items", "items (clusters)");
    }
    if (rep.findings.size() == before)
      return InvalidArgument(fmt::format(
          "rule {} ({}): matched no cell of the results{}", i + 1, r.describe(),
          r.kind == "flip_rate_clears_floor" ? " (is there a fairness analysis, and do the selectors name a contrast?)"
                                             : " (check the selectors and that the analysis ran)"));
  }
  return rep;
}

}  // namespace nf
