#include "report/grid_card.h"

#include <fmt/format.h>

#include "util/strings.h"

namespace nf {

namespace {

std::string fnum(const nlohmann::json& v, int digits = 3) {
  if (v.is_null()) return "n/a";
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  if (v.is_number()) return fmt::format("{:.{}f}", v.get<double>(), digits);
  if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
  return v.is_string() ? v.get<std::string>() : v.dump();
}

std::string cell_esc(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

const nlohmann::json& boot_metric(const nlohmann::json& f, const std::string& name) {
  static const nlohmann::json kNull;
  if (!f.contains("bootstrap") || !f["bootstrap"].contains("metrics") || !f["bootstrap"]["metrics"].contains(name))
    return kNull;
  return f["bootstrap"]["metrics"][name];
}

// The section's bootstrap resample count, or null.
nlohmann::json boot_resamples(const nlohmann::json& f) {
  return f.contains("bootstrap") && f["bootstrap"].is_object() ? f["bootstrap"].value("resamples", nlohmann::json())
                                                               : nlohmann::json();
}

// "[lo, hi]", flagged when every resample was equal; with `resamples` (the bootstrap's
// count) also how many resamples defined the metric when some did not (a pairwise metric
// is undefined on a resample with fewer than 2 distinct configurations).
std::string range_text(const nlohmann::json& m, const nlohmann::json& resamples = nullptr) {
  if (m.is_null() || !m.contains("low") || m["low"].is_null()) return "n/a";
  std::string s = fmt::format("[{}, {}]", fnum(m["low"]), fnum(m["high"]));
  if (m.value("all_equal", false)) s += " (all resamples equal)";
  if (resamples.is_number_integer() && m.contains("defined") && m["defined"].is_number_integer() &&
      m["defined"].get<int64_t>() < resamples.get<int64_t>())
    s += fmt::format(" over the {} of {} resamples that define it",
                     m["defined"].get<int64_t>(), resamples.get<int64_t>());
  return s;
}

nlohmann::json boot_range(const nlohmann::json& m) {
  if (m.is_null()) return nullptr;
  return {{"low", m.value("low", nlohmann::json(nullptr))},
          {"high", m.value("high", nlohmann::json(nullptr))},
          {"all_equal", m.value("all_equal", false)}};
}

}  // namespace

nlohmann::json grid_card(const nlohmann::json& results) {
  if (!results.contains("analyses") || !results["analyses"].contains("envelope")) return nullptr;
  const auto& f = results["analyses"]["envelope"];
  if (f.contains("skipped") || !f.contains("subjects")) return nullptr;
  nlohmann::json card;
  card["schema"] = "noisefloor.grid_card/1";
  card["source"] = "seed 003 §7 (GRID card)";
  const auto& study = results.value("study", nlohmann::json(nullptr));
  card["study"] = study.is_object() ? nlohmann::json{{"name", study.value("name", "")}, {"hash", study.value("hash", "")}}
                                    : nlohmann::json(nullptr);
  card["tool_version"] = results.value("tool_version", "");
  card["outcome"] = f.value("outcome", "");
  card["axes"] = f.value("axes", nlohmann::json::object());
  card["cells"] = nlohmann::json::array();
  for (const auto& s : f["subjects"])
    for (const auto& c : s["cells"])
      card["cells"].push_back({{"subject", s["subject"]},
                               {"config", c["config"]},
                               {"score", c["score"]},
                               {"n", c["n"]},
                               {"parse_rate", c.value("parse_rate", nlohmann::json(nullptr))},
                               {"neighbourhood", c.value("neighbourhood", nlohmann::json(nullptr))}});
  card["verdicts"] = nlohmann::json::array();
  for (const auto& p : f["pairs"]) {
    const std::string key = p["a"].get<std::string>() + "|" + p["b"].get<std::string>() + ".rho_flip";
    card["verdicts"].push_back({{"a", p["a"]},
                                {"b", p["b"]},
                                {"n_configs", p["n_configs"]},
                                {"n_plus", p["n_plus"]},
                                {"n_minus", p["n_minus"]},
                                {"n_ties", p["n_ties"]},
                                {"rho_flip", p["rho_flip"]},
                                {"no_strict_reversal", p["no_strict_reversal"]},
                                {"majority", p["majority"]},
                                {"rho_flip_bootstrap", boot_range(boot_metric(f, key))}});
  }
  const auto& rk = f["rankings"];
  card["ranking"] = {{"per_config", rk["per_config"]},
                     {"tau_r", rk["tau_r"]},
                     {"tau_r_bootstrap", boot_range(boot_metric(f, "tau_r"))},
                     {"mismatch_rate", rk["mismatch_rate"]},
                     {"mismatch_null", rk["mismatch_null"]},
                     {"mismatch_rate_bootstrap", boot_range(boot_metric(f, "mismatch_rate"))},
                     {"reachable", rk["reachable"]},
                     {"possible", rk["possible"]},
                     {"orderings", rk["orderings"]}};
  nlohmann::json pins = f.value("pins", nlohmann::json::object());
  pins["study_hash"] = study.is_object() ? study.value("hash", nlohmann::json(nullptr)) : nlohmann::json(nullptr);
  pins["tool_version"] = results.value("tool_version", "");
  card["pins"] = pins;
  return card;
}

namespace {

// The scoring paths over stored completions (metrics/rescore.h): compliance per subject x
// stratum x scorer and the scorer disagreement.
// Names read as text, not JSON: "scorers `strmatch`, `judge_panel`", "the stratum
// `label` = `safe`".
void scorers_markdown(std::string& md, const nlohmann::json& sc) {
  std::vector<std::string> paths;
  for (const auto& p : sc["paths"]) paths.push_back("`" + fnum(p) + "`");
  std::vector<std::string> strata;
  if (sc["stratum"].is_object())
    for (const auto& [field, value] : sc["stratum"].items())
      strata.push_back(fmt::format("`{}` = `{}`", field, fnum(value)));
  md += fmt::format(
      "Scoring paths over the same stored completions (no regeneration): scorers {}. The envelope cells above are "
      "{}; every stratum is listed here (XSTest: on `unsafe` prompts a refusal is correct, so a lower "
      "compliance rate is better there).\n\n",
      join(paths, ", "), strata.empty() ? std::string("all items") : "the stratum " + join(strata, " and "));
  md += "| subject | stratum | configuration | scorer | complied / scored | rate | Wilson 95% | unscored |\n"
        "|---|---|---|---|---|---|---|---|\n";
  for (const auto& r : sc["compliance"])
    md += fmt::format("| {} | {} | {} | {} | {} / {} | {} | {} | {} |\n", cell_esc(r["subject"].get<std::string>()),
                      cell_esc(r["stratum"].get<std::string>()), cell_esc(r["config"].get<std::string>()),
                      r["scorer"].get<std::string>(), fnum(r["positive"]), fnum(r["scored"]), fnum(r["rate"]),
                      r.contains("wilson") ? fmt::format("[{}, {}]", fnum(r["wilson"][0]), fnum(r["wilson"][1]))
                                           : std::string("n/a"),
                      fnum(r["unscored"]));
  md += "\nScorer disagreement (draws both scorers scored; 1 = complies / criterion met):\n\n"
        "| stratum | subject | a vs b | n | both 1 | a only | b only | both 0 | agreement | Cohen kappa |\n"
        "|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& d : sc["disagreement"])
    md += fmt::format("| {} | {} | {} vs {} | {} | {} | {} | {} | {} | {} | {} |\n",
                      cell_esc(d["stratum"].get<std::string>()), cell_esc(d["subject"].get<std::string>()),
                      d["a"].get<std::string>(), d["b"].get<std::string>(), fnum(d["n"]), fnum(d["both_1"]),
                      fnum(d["a_only"]), fnum(d["b_only"]), fnum(d["both_0"]), fnum(d["agreement"]),
                      d["kappa"].is_null() ? std::string("undefined") : fnum(d["kappa"]));
  md += "\n";
}

}  // namespace

// The "Score per configuration" table: every (configuration, subject) cell with its n, parse
// rate and neighbourhood, the rows the envelope-scores figure draws (report/figures.h).
void cells_markdown(std::string& md, const nlohmann::json& f) {
  std::string rows;
  for (const auto& s : f.value("subjects", nlohmann::json::array())) {
    if (!s.is_object()) continue;
    for (const auto& c : s.value("cells", nlohmann::json::array())) {
      if (!c.is_object()) continue;
      const auto nb = c.value("neighbourhood", nlohmann::json::object());
      rows += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", cell_esc(c.value("config", "")),
                          cell_esc(s.value("subject", "")), fnum(c.value("n", nlohmann::json())),
                          fnum(c.value("score", nlohmann::json())), fnum(c.value("parse_rate", nlohmann::json())),
                          fnum(nb.value("min", nlohmann::json())), fnum(nb.value("max", nlohmann::json())),
                          fnum(nb.value("n", nlohmann::json())));
    }
  }
  if (rows.empty()) return;
  md += "Score per configuration (each subject's score in each configuration cell; the neighbourhood is the min and "
        "max of the same subject's scores over the configurations that differ in exactly one axis value, "
        "`neighbours` of them):\n\n| configuration | subject | n | score | parse rate | neighbourhood min | "
        "neighbourhood max | neighbours |\n|---|---|---|---|---|---|---|---|\n" +
        rows + "\n";
}

void envelope_markdown(std::string& md, const nlohmann::json& f) {
  md += fmt::format(
      "Is \"A beats B\" a property of the models or of the harness? {} subjects over {} configurations, outcome "
      "`{}` ({}). A pair is free of strict reversal on this grid iff rho_flip = min(n+, n-) / |C| = 0; that does "
      "not make the full ordering identifiable. Ranges are configuration-bootstrap ranges within this grid, not "
      "population intervals. The GRID card is `grid_card.json`.\n\n",
      fnum(f["n_subjects"]), fnum(f["n_configs"]), f.value("outcome", ""), f.value("source", ""));
  md += "Axes: ";
  bool first = true;
  for (const auto& [a, v] : f["axes"].items()) {
    std::string vals;
    for (const auto& x : v) vals += (vals.empty() ? "" : ", ") + x.get<std::string>();
    md += fmt::format("{}`{}` = {{{}}}", first ? "" : "; ", a, vals);
    first = false;
  }
  md += "\n\n| subject | configs | min | max | range | SDI | CFR |\n|---|---|---|---|---|---|---|\n";
  for (const auto& s : f["subjects"]) {
    std::string cfr;
    for (const auto& c : s["cfr"]) cfr += fmt::format("{}{}: {}", cfr.empty() ? "" : ", ", fnum(c["theta"], 2), fnum(c["value"]));
    md += fmt::format("| {} | {} | {} | {} | {} | {}{} | {} |\n", cell_esc(s["subject"].get<std::string>()),
                      fnum(s["n_configs"]), fnum(s["min"]), fnum(s["max"]), fnum(s["range"]), fnum(s["sdi"]),
                      s.value("sdi_unstable", false) ? " (mean near 0)" : "", cfr);
  }
  md += "\n| pair | \\|C\\| | n+ | n- | ties | rho_flip | bootstrap range | strict-only share | no strict reversal | "
        "majority | reversing configurations |\n|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& p : f["pairs"]) {
    const std::string key = p["a"].get<std::string>() + "|" + p["b"].get<std::string>() + ".rho_flip";
    std::string rev;
    if (p.contains("reversing_configs"))
      for (const auto& c : p["reversing_configs"]) rev += (rev.empty() ? "" : ", ") + c.get<std::string>();
    else
      rev = "no majority: every strict configuration";
    md += fmt::format("| {} vs {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                      cell_esc(p["a"].get<std::string>()), cell_esc(p["b"].get<std::string>()), fnum(p["n_configs"]),
                      fnum(p["n_plus"]), fnum(p["n_minus"]), fnum(p["n_ties"]), fnum(p["rho_flip"]),
                      range_text(boot_metric(f, key)), fnum(p["strict_share"]), fnum(p["no_strict_reversal"]),
                      p["majority"].is_null() ? "tied" : cell_esc(p["majority"].get<std::string>()),
                      rev.empty() ? "none" : cell_esc(rev));
  }
  const auto& rk = f["rankings"];
  md += fmt::format(
      "\nRankings over the {} configurations where every subject has a score: tau_R = {} (bootstrap {}; {} "
      "configuration pairs, {} undefined), total-order mismatch {} (bootstrap {}) against {} under a uniform "
      "null, {} of {} total orders reachable (ties broken alphabetically only for the total order):\n\n"
      "| total order | configurations |\n|---|---|\n",
      fnum(rk["n_configs"]), fnum(rk["tau_r"]), range_text(boot_metric(f, "tau_r"), boot_resamples(f)), fnum(rk["tau_pairs"]),
      fnum(rk["tau_pairs_undefined"]), fnum(rk["mismatch_rate"]), range_text(boot_metric(f, "mismatch_rate"), boot_resamples(f)),
      fnum(rk["mismatch_null"]), fnum(rk["reachable"]), fnum(rk["possible"]));
  for (const auto& o : rk["orderings"]) {
    std::string cs;
    for (const auto& c : o["configs"]) cs += (cs.empty() ? "" : ", ") + c.get<std::string>();
    md += fmt::format("| {} | {} |\n", cell_esc(o["total_order"].get<std::string>()), cell_esc(cs));
  }
  const auto& v = f["variance"];
  md += "\n";
  if (v.contains("skipped")) {
    md += "Variance partition skipped: " + v["skipped"].get<std::string>() + "\n\n";
  } else {
    md += fmt::format(
        "Variance partition (Type-II ANOVA on {}, n = {}, residual df {}): model {}, implementation {}, "
        "interaction {}, residual {}; rho = implementation / model = {} (qualitative: model effects are conditional "
        "on these subjects).",
        v.value("slice", ""), fnum(v["n"]), fnum(v["df_resid"]), fnum(v["shares"]["model"]),
        fnum(v["shares"]["implementation"]), fnum(v["shares"]["interaction"]), fnum(v["shares"]["residual"]),
        fnum(v["rho"]));
    if (v.contains("dropped")) md += " Dropped: " + v["dropped"].get<std::string>() + ".";
    md += " Per-axis omega^2 (Hays):";
    for (const auto& a : v["per_axis_omega_sq"]) md += fmt::format(" {} {};", a["axis"].get<std::string>(), fnum(a["omega_sq"]));
    md += "\n\n";
  }
  const auto& pc = f["parse_clean"];
  if (pc.contains("skipped")) {
    md += "Parse-clean rerun skipped: " + pc["skipped"].get<std::string>() + "\n\n";
  } else {
    std::string rhos;
    for (const auto& p : pc["pairs"])
      rhos += fmt::format("{}{} vs {} {}", rhos.empty() ? "" : ", ", p["a"].get<std::string>(), p["b"].get<std::string>(),
                          fnum(p["rho_flip"]));
    md += fmt::format(
        "Parse-clean rerun (configurations where every subject parses >= {}): {} configurations kept, {} excluded; "
        "rho_flip {}; {} orderings reachable, tau_R {}.\n\n",
        fnum(pc["threshold"], 2), fnum(pc["n_configs"]), pc["excluded_configs"].size(), rhos.empty() ? "n/a" : rhos,
        fnum(pc["rankings"]["reachable"]), fnum(pc["rankings"]["tau_r"]));
  }
  cells_markdown(md, f);
  if (f.contains("scorers")) scorers_markdown(md, f["scorers"]);
}

}  // namespace nf
