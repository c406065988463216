#include "report/rerun_section.h"

#include <fmt/format.h>

namespace nf {

namespace {

std::string n3(const nlohmann::json& v) {
  if (v.is_null()) return "n/a";
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  if (v.is_number()) return fmt::format("{:.3f}", v.get<double>());
  return v.dump();
}

std::string interval(const nlohmann::json& o) {
  if (!o.is_object() || !o.contains("low") || o["low"].is_null()) return "n/a";
  std::string s = fmt::format("[{}, {}]", n3(o["low"]), n3(o["high"]));
  if (o.contains("warning")) s += " (< 5 clusters)";
  if (o.contains("degenerate")) s += " (all resamples equal)";
  return s;
}

std::string pval(const nlohmann::json& v) {
  if (!v.is_number()) return "n/a";
  const double p = v.get<double>();
  return p < 0.001 ? fmt::format("{:.1e}", p) : fmt::format("{:.3f}", p);
}

std::string esc(std::string s) {
  for (size_t i = 0; (i = s.find('|', i)) != std::string::npos; i += 2) s.replace(i, 1, "\\|");
  return s;
}

}  // namespace

void rerun_section(std::string& md, const nlohmann::json& r) {
  md += "Each task is rerun with every input fixed; the table compares the orders the agent filed across the runs of "
        "a task (a group). Action-level metrics count ordering groups (an order in at least one run); trajectory and "
        "verdict metrics count all groups. Only runs that parsed enter.\n\n";
  static const std::pair<const char*, const char*> kRows[] = {
      {"order_set_divergence", "order-set divergence"},
      {"omission_split", "omission split"},
      {"endpoint_divergence", "endpoint divergence"},
      {"trajectory_divergence", "trajectory divergence"},
      {"verdict_instability", "verdict instability"},
      {"clinical_content_divergence", "clinical-content divergence"}};
  for (const auto& a : r.value("arms", nlohmann::json::array())) {
    md += fmt::format("### {} / {}\n\n", a.value("subject", ""), a.value("config", ""));
    const auto ex = a.value("excluded_runs", nlohmann::json::object());
    if (a.value("runs", nlohmann::json(0)) == 0) {  // nothing to compare: no table of zeros
      md += fmt::format("No ok run to compare (excluded: {} parse_error, {} api_error runs).\n\n",
                        n3(ex.value("parse_error", nlohmann::json(0))), n3(ex.value("api_error", nlohmann::json(0))));
      continue;
    }
    md += fmt::format("{} groups ({} ordering), {} ok runs ({}-{} per group); excluded: {} parse_error, {} api_error runs.\n\n",
                      n3(a["groups"]), n3(a["ordering_groups"]), n3(a["runs"]), n3(a["runs_per_group"]["min"]),
                      n3(a["runs_per_group"]["max"]), n3(ex.value("parse_error", nlohmann::json(0))),
                      n3(ex.value("api_error", nlohmann::json(0))));
    md += "| metric | count / denominator | rate | Wilson 95% | family-cluster bootstrap |\n|---|---|---|---|---|\n";
    const auto& m = a["metrics"];
    for (const auto& [key, label] : kRows) {
      if (!m.contains(key)) continue;
      const auto& x = m[key];
      std::string extra;
      if (std::string(key) == "trajectory_divergence")
        extra = fmt::format(" (median first divergent turn {}; turns counted from 0 = the first reply)",
                            n3(x.value("first_divergent_turn_median", nlohmann::json(nullptr))));
      md += fmt::format("| {}{} | {}/{} ({}) | {} | {} | {} |\n", label, extra, n3(x["count"]), n3(x["n"]),
                        x.value("denominator", ""), n3(x["rate"]), interval(x), interval(x["family_bootstrap"]));
    }
    const auto& pw = m["pairwise_order_set_disagreement"];
    md += fmt::format("| pairwise order-set disagreement | {}/{} run pairs | {} | n/a | group bootstrap {} |\n\n",
                      n3(pw["pairs_differing"]), n3(pw["pairs"]), n3(pw["rate"]), interval(pw["group_bootstrap"]));
    const auto& d = a["decomposition"];
    md += fmt::format("Of the {} order-set-divergent groups (App. B): {} include omission, {} include misrouting ({} both), "
                      "{} differ in payload only.\n",
                      n3(d["order_set_divergent"]), n3(d["with_omission"]), n3(d["with_misrouting"]),
                      n3(d["omission_and_misrouting"]), n3(d["payload_only"]));
    const auto& s = a["changing_orders_stable_verdict"];
    md += fmt::format("Changing orders but a stable verdict: {} of {} divergent groups ({} pass every run, {} fail every run).\n",
                      n3(s["count"]), n3(s["of_divergent"]), n3(s["all_pass"]), n3(s["all_fail"]));
    const auto& w = a["rejected_writes"];
    md += fmt::format("Writes the record server rejects: {} of {} orders ({}, Wilson {}), in {} groups.\n\n", n3(w["count"]),
                      n3(w["n"]), n3(w["rate"]), interval(w), n3(w["groups_with_a_rejected_write"]));
  }
  const auto comps = r.value("comparisons", nlohmann::json::array());
  if (!comps.empty()) {
    md += "### Paired comparisons between arms (exact McNemar over all groups, Holm across the comparisons)\n\n"
          "| arm A | arm B | metric | groups | b (A only) | c (B only) | p | p (Holm) |\n|---|---|---|---|---|---|---|---|\n";
    for (const auto& c : comps)
      md += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", esc(c.value("arm_a", "")), esc(c.value("arm_b", "")),
                        c.value("metric", ""), n3(c["groups"]), n3(c["b"]), n3(c["c"]), pval(c["p"]),
                        pval(c.value("p_holm", nlohmann::json(nullptr))));
    md += "\n";
  }
  for (const auto& w : r.value("warnings", nlohmann::json::array())) md += "- warning: " + w.get<std::string>() + "\n";
  md += "\n";
}

}  // namespace nf
