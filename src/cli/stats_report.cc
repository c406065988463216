#include "cli/stats_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <fmt/format.h>

#include "util/exit_code.h"

namespace nf::cli {

nlohmann::json json_number(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

std::string human_number(double v) {
  if (std::isnan(v)) return "n/a";
  return fmt::format("{:.6g}", v);
}

const char* const kDegenerateNote =
    "every bootstrap resample gave (almost) the same value, so the percentile interval has no width; that is not a "
    "statement of certainty: the sample may simply lack the variation to resample (docs/intervals.md)";

bool degenerate_interval(const StatsReport& r) {
  return r.bootstrap && r.interval && std::isfinite(r.interval->first) && r.interval->first == r.interval->second;
}

namespace {

// A JSON value in text form: numbers as human_number, strings bare, arrays "[a, b]".
std::string human_value(const nlohmann::ordered_json& v) {
  if (v.is_null()) return "n/a";
  if (v.is_number_float()) return human_number(v.get<double>());
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("lo") && v.contains("hi")) {
    std::string s = "[" + human_value(v["lo"]) + ", " + human_value(v["hi"]) + "]";
    if (v.contains("x") && v.contains("n")) s += " (" + human_value(v["x"]) + "/" + human_value(v["n"]) + ")";
    if (v.contains("note")) s += "; " + human_value(v["note"]);
    return s;
  }
  if (v.is_array()) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + human_value(v[i]);
    return s + "]";
  }
  return v.dump();
}

}  // namespace

int print_report(const StatsReport& r, bool json) {
  if (json) {
    nlohmann::ordered_json j;
    j["test"] = r.test;
    j["method"] = r.method;
    j["input"] = r.input;
    j["estimate"] = r.estimate ? json_number(*r.estimate) : nlohmann::json(nullptr);
    if (r.interval) {
      j["interval"] = {json_number(r.interval->first), json_number(r.interval->second)};
      j["level"] = r.level;
    } else {
      j["interval"] = nullptr;
    }
    if (r.bootstrap && r.interval) {
      j["degenerate"] = degenerate_interval(r);
      if (degenerate_interval(r)) j["degenerate_note"] = kDegenerateNote;
    }
    j["p_value"] = r.p_value ? json_number(*r.p_value) : nlohmann::json(nullptr);
    j["n"] = r.n ? nlohmann::json(*r.n) : nlohmann::json(nullptr);
    for (const auto& [k, v] : r.extra.items()) j[k] = v;
    std::printf("%s\n", j.dump().c_str());
    return 0;
  }
  std::printf("%s: %s\n", r.test.c_str(), r.input.c_str());
  int width = 10;  // the label column fits the longest label
  for (const auto& [k, v] : r.extra.items()) width = std::max(width, static_cast<int>(k.size()));
  auto line = [width](const std::string& name, const std::string& value) {
    std::printf("  %-*s %s\n", width, name.c_str(), value.c_str());
  };
  line("estimate", r.estimate ? human_number(*r.estimate) : "n/a");
  if (r.interval) {
    line(fmt::format("{:g}% CI", r.level * 100),
         "[" + human_number(r.interval->first) + ", " + human_number(r.interval->second) + "]");
  } else {
    line("CI", "n/a");
  }
  if (degenerate_interval(r)) line("degenerate", std::string("yes: ") + kDegenerateNote);
  std::string p_text = r.p_value ? human_number(*r.p_value) : "n/a";
  if (r.p_value && *r.p_value == 0.0) {
    // A p-value is never exactly 0: an exact one underflowed, an approximation hit its limit.
    const bool exact = r.extra.contains("p_method") && r.extra["p_method"] == "exact";
    p_text = exact ? "< 2.2e-308 (the exact value underflows a double)"
                   : "0 (the approximation's limit, not a real probability; see the method line)";
  }
  line("p-value", p_text);
  line("n", r.n ? std::to_string(*r.n) : "n/a");
  line("method", r.method);
  for (const auto& [k, v] : r.extra.items()) line(k, human_value(v));
  return 0;
}

int stats_fail(const std::string& test, const Status& s) {
  std::fprintf(stderr, "noisefloor stats %s: %s\n", test.c_str(), s.message().c_str());
  return static_cast<int>(exit_code_for(s));
}

}  // namespace nf::cli
