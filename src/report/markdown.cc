#include "report/markdown.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "metrics/coverage.h"
#include "report/html.h"
#include "report/summary.h"
#include "report/rerun_section.h"
#include "report/grid_card.h"
#include "util/file.h"
#include "util/bound_text.h"
#include "util/strings.h"

namespace nf {

namespace {

std::string num(const nlohmann::json& v, int digits = 3) {
  if (v.is_null()) return "n/a";
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  if (v.is_number()) return fmt::format("{:.{}f}", v.get<double>(), digits);
  return v.dump();
}

// An interval bound: 3 decimals, more when they would hide a non-zero bound (0.00043).
std::string bound(const nlohmann::json& v) {
  return v.is_number_float() ? format_bound(v.get<double>()) : num(v);
}

std::string ci_plain(const nlohmann::json& row, const char* lo = "ci_low", const char* hi = "ci_high") {
  if (!row.contains(lo) || row[lo].is_null()) return "n/a";
  return fmt::format("[{}, {}]", bound(row[lo]), bound(row[hi]));
}

// 1 - x for a rate stored in the inappropriate direction: every judge table reads in one
// direction, the share of answers judged appropriate (issue 12 item 6).
std::string appropriate_of(const nlohmann::json& inappropriate, int digits = 3) {
  if (!inappropriate.is_number()) return "n/a";
  return num(nlohmann::json(1.0 - inappropriate.get<double>()), digits);
}

// An integer with thousands separators ("1,125"); num() for anything else.
std::string thousands(const nlohmann::json& v) {
  if (!v.is_number_integer() || v.get<int64_t>() < 0) return num(v);
  const std::string d = std::to_string(v.get<int64_t>());
  std::string out;
  for (size_t i = 0; i < d.size(); ++i) {
    if (i > 0 && (d.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(d[i]);
  }
  return out;
}

// The row's main cluster-bootstrap interval with its flags (metrics/interval_flags.h):
// "[0.05, 0.20] · 16 clusters (few)", or for a degenerate one
// "degenerate [0.000, 0.000]; Wilson [0.000, 0.023]† · 16 clusters (few)" (0/9000 pairs:
// Wilson [0.000, 0.00043]).
std::string ci(const nlohmann::json& row, const char* lo = "ci_low", const char* hi = "ci_high") {
  std::string s = ci_plain(row, lo, hi);
  const bool main_interval = std::string(lo) == "ci_low" || std::string(lo) == "flip_low";
  if (!main_interval || !row.contains("ci_method") || s == "n/a") return s;
  if (row.value("degenerate", false) && row.contains("exact_interval"))
    s = fmt::format("degenerate {}; Wilson [{}, {}]†", s, bound(row["exact_interval"]["lo"]),
                    bound(row["exact_interval"]["hi"]));
  if (row.contains("clusters"))
    s += fmt::format(" · {} clusters{}", num(row["clusters"]), row.value("few_clusters", false) ? " (few)" : "");
  return s;
}

// Said once under a table with a degenerate interval or few clusters.
std::string interval_notes(const nlohmann::json& rows) {
  bool degenerate = false, few = false;
  for (const auto& r : rows) {
    degenerate = degenerate || r.value("degenerate", false);
    few = few || r.value("few_clusters", false);
  }
  std::string s;
  if (degenerate)
    s += "\n† Degenerate: every bootstrap resample gave the same value, so the bootstrap interval has no width; that "
         "is not certainty. The Wilson score bound beside it treats pairs as independent, but pairs within an item "
         "are not, so the true uncertainty is wider (docs/intervals.md).\n";
  if (few)
    s += "\n(few) = fewer than 20 clusters: the interval is the studentized cluster bootstrap, which holds its level "
         "at 16 and 33 clusters where the percentile interval under-covers; with very few clusters read it as rough "
         "(docs/intervals.md).\n";
  return s;
}

// "items 16/16 · draws 160/160" (contributing items / planned, valid draws / planned).
std::string coverage_cell(const nlohmann::json& row) {
  if (!row.contains("coverage")) return "";
  const auto& c = row["coverage"];
  auto planned = [](const nlohmann::json& v) { return v.is_null() ? std::string("?") : num(v); };
  return fmt::format("items {}/{} · draws {}/{}", num(c["items_contributing"]), planned(c["items_planned"]),
                     num(c["valid_draws"]), planned(c["draws_planned"]));
}

// Each string of j["warnings"] (absent or not an array: none) as a quoted warning line.
void warning_lines(std::string& md, const nlohmann::json& j) {
  const auto it = j.find("warnings");
  if (it == j.end() || !it->is_array()) return;
  for (const auto& w : *it)
    if (w.is_string()) md += "> **Warning:** " + w.get<std::string>() + "\n\n";
}

std::string esc(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else out += c;
  }
  return out;
}

// "2,724 of 6,300 (43.2%)": the majority floor's comparisons left out as ties.
std::string ties_cell(const nlohmann::json& r) {
  if (!r.contains("tie_excluded") || !r.contains("possible_comparisons")) return "n/a";
  const auto& share = r.contains("tie_excluded_share") ? r["tie_excluded_share"] : nlohmann::json(nullptr);
  return fmt::format("{} of {}{}", num(r["tie_excluded"]), num(r["possible_comparisons"]),
                     share.is_number() ? fmt::format(" ({:.1f}%)", 100.0 * share.get<double>()) : std::string());
}

void floor_table(std::string& md, const nlohmann::json& rows, bool majority) {
  md += majority ? "| subject | config | condition | outcome | R' | discordant / comparisons | ties excluded | floor | 95% CI (cluster bootstrap) | Wilson | unanimous cells | coverage |\n"
                   "|---|---|---|---|---|---|---|---|---|---|---|---|\n"
                 : "| subject | config | condition | outcome | discordant / comparisons | floor | 95% CI (cluster bootstrap) | Wilson | unanimous cells | coverage |\n"
                   "|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& r : rows) {
    const bool pooled = r.value("outcome", "") == "pooled";
    const std::string outcome = pooled ? "**pooled**" : esc(r.value("outcome", ""));
    md += fmt::format("| {} | {} | {} | {} | ", esc(r.value("subject", "")), esc(r.value("config", "")),
                      esc(r.value("condition", "")), outcome);
    if (majority) md += fmt::format("{} | ", num(r.value("vote_size", nlohmann::json(1))));
    md += fmt::format("{}/{} | ", num(r["discordant"]), num(r["comparisons"]));
    if (majority) md += ties_cell(r) + " | ";
    md += fmt::format("{} | {} | {} | {} | {} |\n", num(r["rate"]), ci(r), ci(r, "wilson_low", "wilson_high"),
                      num(r.value("unanimous_cells", nlohmann::json(0))), coverage_cell(r));
  }
  md += interval_notes(rows);
  // What each cell's pooled row sums (a task's derived outcomes are left out).
  std::set<std::string> pooled_notes;
  for (const auto& r : rows)
    if (r.value("outcome", "") == "pooled" && r.contains("pooled_over")) pooled_notes.insert(pooled_over_text(r));
  if (!pooled_notes.empty())
    md += fmt::format(
        "\n**pooled** = {}: a derived outcome (a function of another outcome of the same draw, e.g. MCQ `correct` "
        "from `choice`) repeats its source's replicate pairs, so pooling it would count each pair twice; its own "
        "row is kept above.\n",
        fmt::join(pooled_notes, "; "));
  std::string planned_note;
  for (const auto& r : rows)
    if (r.contains("coverage") && r["coverage"].value("planned_note", "") != "")
      planned_note = r["coverage"]["planned_note"].get<std::string>();
  if (!planned_note.empty())
    md += "\nCoverage = items that contributed pairs / items planned · valid draws / planned draws (planned: " +
          planned_note + "). An item with 0 or 1 valid draws contributes no pair and is never counted unanimous.\n";
}

// "0.123 [0.050, 0.200]" from an object with estimate/coef and low/high.
std::string est_ci(const nlohmann::json& o, const char* est = "estimate", int digits = 2) {
  if (!o.is_object() || !o.contains(est)) return "n/a";
  std::string s = num(o[est], digits);
  if (o.contains("low") && !o["low"].is_null())
    s += fmt::format(" [{}, {}]", num(o["low"], digits), num(o["high"], digits));
  if (o.value("degenerate", false)) s += " (degenerate: every resample gave this value; not certainty)";
  if (o.contains("clusters") && o.contains("few_clusters") && o["few_clusters"].get<bool>())
    s += fmt::format(" · {} clusters (few)", num(o["clusters"]));
  return s;
}

std::string bootstrap_line(const nlohmann::json& b) {
  if (!b.is_object()) return "";
  return fmt::format("Bootstrap CIs: percentile, {} resamples of the {} prompts as clusters (a prompt drawn twice "
                     "counts twice), seed {}, level {}; reproducible from the seed.\n\n",
                     num(b["resamples"]), num(b["clusters"]), num(b["seed"]), num(b["level"], 2));
}

void judge_panel_section(std::string& md, const nlohmann::json& f) {
  const std::string label = f.value("rate_label", std::string("appropriate-response rate"));
  md += "Every judge re-scores the same answers; the rates are the " + label +
        ", the share of votes saying the criterion is met (" + f.value("source", "") +
        "). Parse errors and judge API failures are never votes.\n\n";
  if (f.contains("criterion") && f["criterion"].is_string())
    md += "Criterion (met = 1): " + esc(f["criterion"].get<std::string>()) + "\n\n";
  md += bootstrap_line(f["bootstrap"]);
  md += fmt::format("Votes: {} (not votes: {}", num(f["votes"]), num(f["not_votes"]));
  if (f.contains("not_votes_by_status")) {
    const auto& nv = f["not_votes_by_status"];
    md += fmt::format(": {} parse errors, {} API errors, {} missing votes", num(nv["parse_error"]),
                      num(nv["api_error"]), num(nv["no_label"]));
    if (nv["api_error"].get<int64_t>() > 0)
      md += "; the API errors are retried by the next `noisefloor judge`, so this report is incomplete until then";
  }
  md += ").\n\n";
  // Table 4: subjects x judges.
  std::string cap = label;
  if (!cap.empty()) cap[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(cap[0])));
  md += "### " + cap + " by judge (rows = subject, columns = judge)\n\n| subject |";
  std::string sep = "|---|";
  for (const auto& j : f["judges"]) {
    md += " " + esc(j["judge"].get<std::string>()) + " |";
    sep += "---|";
  }
  md += "\n" + sep + "\n";
  auto cell = [&](const std::string& judge, const std::string& subject) {
    for (const auto& r : f["rates"])
      if (r["judge"] == judge && r["subject"] == subject)
        return fmt::format("{} ({}/{})", num(r["rate"]), num(r["appropriate"]), num(r["n"]));
    return std::string("n/a");
  };
  std::vector<std::string> subjects;
  for (const auto& s : f["subjects"]) subjects.push_back(s["subject"].get<std::string>());
  subjects.push_back("all");
  for (const auto& s : subjects) {
    md += "| " + esc(s) + " |";
    for (const auto& j : f["judges"]) md += " " + cell(j["judge"].get<std::string>(), s) + " |";
    md += "\n";
  }
  if (f.contains("by_condition") && f["by_condition"].is_array() && !f["by_condition"].empty()) {
    md += "\n### " + cap + " by condition\n\nThe probe's comparison (seed 004 §2.3): each conversation "
          "as written and with the latter half of its last user turn removed. CI: prompt-cluster bootstrap (replicates "
          "and judges of one prompt are not independent). Every judge table reads in one direction: the share of "
          "votes saying the criterion is met (for the default criterion, the seed's inappropriate-confident rate is "
          "1 minus it).\n\n"
          "| subject | condition | judge | criterion met | rate [CI] |\n|---|---|---|---|---|\n";
    for (const auto& r : f["by_condition"])
      md += fmt::format("| {} | {} | {} | {}/{} | {} |\n", esc(r["subject"].get<std::string>()),
                        esc(r["condition"].get<std::string>()), esc(r["judge"].get<std::string>()), num(r["met"]),
                        num(r["votes"]), est_ci(r, "rate", 3));
  }
  const auto& fl = f["fleiss"];
  md += fmt::format("\nFleiss kappa over the {} answers rated by every judge: {} (mean pairwise agreement {}).\n\n",
                    num(fl["complete_units"]), est_ci(fl, "kappa", 3), num(fl.value("mean_pairwise_agreement",
                                                                                      nlohmann::json()), 2));
  md += "### Same-provider effect\n\nRaw gap = own-provider judge's rate minus the mean of the other judges; "
        "DiD nets out the own judge's leniency on the other subjects.\n\n"
        "| subject | own judge | own rate | peer mean | raw gap | DiD |\n|---|---|---|---|---|---|\n";
  for (const auto& r : f["same_provider_effect"])
    md += fmt::format("| {} | {} | {} | {} | {:+.3f} | {:+.3f} |\n", esc(r["subject"].get<std::string>()),
                      esc(r["own_judge"].get<std::string>()), num(r["own_rate"]), num(r["peer_rate"]),
                      r["raw_gap"].is_number() ? r["raw_gap"].get<double>() : 0.0,
                      r["did"].is_number() ? r["did"].get<double>() : 0.0);
  md += "\nVote-level logistic regression, " + f["logistic"].value("formula", "") +
        " (log-odds, prompt-clustered bootstrap CI):\n\n| model | term | coefficient [CI] | SE |\n|---|---|---|---|\n";
  for (const auto& m : f["logistic"]["models"]) {
    if (m.contains("error")) {
      md += fmt::format("| {} | — | not fitted: {} | |\n", m["model"].get<std::string>(),
                        esc(m["error"].get<std::string>()));
      continue;
    }
    for (const auto& t : m["terms"]) {
      std::string est = est_ci(t, "coef", 3);
      if (t.contains("ci_withheld")) est += " (CI withheld: " + esc(t["ci_withheld"].get<std::string>()) + ")";
      else if (m.value("failed_replicates", 0) > 0)
        est += fmt::format(" ({} resamples not fitted)", m["failed_replicates"].get<int>());
      md += fmt::format("| {} | {} | {} | {} |\n", m["model"].get<std::string>(), esc(t["term"].get<std::string>()),
                        est, num(t["se"]));
    }
  }
  const auto& p = f["permutation"];
  if (p.contains("p"))
    md += fmt::format("\nExact permutation test over all {} bijections of own judges to subjects: p = {} ({} at least "
                      "as extreme).\n\n", num(p["total"]), num(p["p"], 4), num(p["at_least"]));
  else if (p.contains("note"))
    md += "\nPermutation test: " + p["note"].get<std::string>() + "\n\n";
  md += "### Evaluator dependence\n\n" + cap + ": own judge alone, full panel "
        "(mean of judges), and leave-own-provider-out (a sensitivity analysis, not a common scale).\n\n"
        "| subject | own judge | full panel | leave own provider out | P(best) | P(worst) |\n|---|---|---|---|---|---|\n";
  for (const auto& r : f["leave_own_provider_out"]) {
    std::string pb = "n/a", pw = "n/a";
    for (const auto& q : f["rank_probability"]["rows"])
      if (q["subject"] == r["subject"]) {
        pb = num(q["p_first"], 2);
        pw = num(q["p_last"], 2);
      }
    md += fmt::format("| {} | {} | {} | {} | {} | {} |\n", esc(r["subject"].get<std::string>()),
                      appropriate_of(r.value("own_judge_inappropriate", nlohmann::json())),
                      appropriate_of(r["panel_inappropriate"]), appropriate_of(r["leave_own_provider_out_inappropriate"]),
                      pb, pw);
  }
  const auto& l = f["leave_one_judge_out"];
  md += "\nLeave-one-judge-out: the ranking (highest " + label + " first) is ";
  md += l.value("same_ranking_under_every_deletion", false) ? "the same under every single-judge deletion"
                                                            : "NOT the same under every single-judge deletion";
  if (l.contains("undefined_deletions") && !l["undefined_deletions"].empty()) {
    std::vector<std::string> names;
    for (const auto& n : l["undefined_deletions"]) names.push_back(n.get<std::string>());
    md += " that leaves every subject rated (undefined, a subject without votes, when dropping " +
          esc(join(names, ", ")) + ")";
  }
  md += ". Full panel: ";
  for (size_t i = 0; i < l["full_ranking"].size(); ++i)
    md += (i ? " > " : "") + l["full_ranking"][i].get<std::string>();
  md += ".\n\n";
}

void human_validity_section(std::string& md, const nlohmann::json& f) {
  md += "Human raters and the judge panel on the same answers (" + f.value("source", "") +
        "). Consensus = strict majority of the raters.\n\n";
  md += bootstrap_line(f["bootstrap"]);
  md += fmt::format("{} answers. Rater appropriate rates: ", num(f["units"]));
  for (size_t i = 0; i < f["raters"].size(); ++i)
    md += fmt::format("{}{} {}", i ? ", " : "", esc(f["raters"][i]["rater"].get<std::string>()),
                      num(f["raters"][i]["rate"], 2));
  md += fmt::format(". Fleiss kappa across raters: {}.\n\n", est_ci(f["fleiss"], "kappa"));
  md += "### Pairwise rater agreement\n\n| pair | raw | Cohen kappa [CI] | Gwet AC1 [CI] |\n|---|---|---|---|\n";
  for (const auto& p : f["pairs"])
    md += fmt::format("| {} ↔ {} | {} | {} | {} |\n", esc(p["a"].get<std::string>()), esc(p["b"].get<std::string>()),
                      num(p["raw"]["estimate"], 2), est_ci(p["cohen_kappa"]), est_ci(p["gwet_ac1"]));
  md += "\n### Judge minus rater (paired; positive = judge more lenient)\n\n| judge | reference | judge rate | "
        "reference rate | difference [CI] |\n|---|---|---|---|---|\n";
  for (const auto& r : f["judge_minus_rater"])
    md += fmt::format("| {} | {} | {} | {} | {} |\n", esc(r["judge"].get<std::string>()),
                      esc(r["reference"].get<std::string>()), num(r.value("judge_rate", nlohmann::json()), 2),
                      num(r.value("reference_rate", nlohmann::json()), 2), est_ci(r, "difference"));
  md += "\n### Aggregation rules against each rater\n\nFL = false-lenient (rule appropriate, rater not); FS = "
        "false-strict.\n\n| rule | reference | kappa [CI] | FL | FS |\n|---|---|---|---|---|\n";
  for (const auto& r : f["aggregation"])
    md += fmt::format("| {} | {} | {} | {} | {} |\n", esc(r["rule"].get<std::string>()),
                      esc(r["reference"].get<std::string>()), est_ci(r["kappa"]), num(r["false_lenient"]),
                      num(r["false_strict"]));
  md += "\n### Panel vote-count calibration (answers with every judge's vote)\n\n| appropriate votes | n |";
  std::string sep = "|---|---|";
  std::vector<std::string> refs;
  for (const auto& r : f["raters"]) {
    refs.push_back(r["rater"].get<std::string>());
    md += " " + esc(refs.back()) + " |";
    sep += "---|";
  }
  md += "\n" + sep + "\n";
  for (const auto& c : f["calibration"]) {
    md += fmt::format("| {}/{} | {} |", num(c["appropriate_votes"]), num(c["of"]), num(c["n"]));
    for (const auto& r : refs) md += " " + num(c["rates"].value(r, nlohmann::json()), 2) + " |";
    md += "\n";
  }
  md += "\n### Strata (item metadata, e.g. the perturbation audit)\n\nAppropriate-response rates.\n\n"
        "| stratum | n | judge panel |";
  sep = "|---|---|---|";
  for (const auto& r : refs) {
    md += " " + esc(r) + " |";
    sep += "---|";
  }
  md += " panel − consensus |\n" + sep + "---|\n";
  for (const auto& s : f["strata"]) {
    md += fmt::format("| {} | {} | {} |", esc(s["stratum"].get<std::string>()), num(s["n"]),
                      appropriate_of(s["judge_inappropriate"], 2));
    for (const auto& r : refs) md += " " + num(s["rates"].value(r, nlohmann::json()), 2) + " |";
    md += " " + num(s["panel_minus_consensus"], 2) + " |\n";
  }
  md += "\n";
}

// The fairness audit (metrics/fairness.h; seed 000 §III.B, §IV, S2, S8, S10, S12).
void fairness_section(std::string& md, const nlohmann::json& f) {
  md += "Per-action instability floors on the reference condition (vignette-cluster bootstrap CIs), then each "
        "descriptor contrast's flip rate beside its action's floor: under no effect the expected flip rate IS the "
        "floor. Signed exact McNemar uses one draw per case; q = Benjamini-Hochberg over the non-control contrasts; "
        "a contrast is credible only above the largest control arm (" + f.value("source", "") + ").\n\n";
  for (const auto& r : f["rows"]) {
    md += fmt::format("### {} / {} (reference `{}`, {} vignettes)\n\n", esc(r.value("subject", "")),
                      esc(r.value("config", "")), r.value("reference", ""), num(r["vignettes"]));
    md += "| action | discordant / comparisons | floor | 95% CI | unanimous cells | prevalence-normalised | vignettes for "
          "25 discordant pairs | coverage |\n|---|---|---|---|---|---|---|---|\n";
    for (const auto& a : r["floors"])
      md += fmt::format("| {} | {}/{} | {} | {} | {}/{} | {} | {} | {} |\n", a.value("action", ""), num(a["discordant"]),
                        num(a["comparisons"]), num(a["rate"]), ci(a), num(a["unanimous_cells"]), num(a["cells"]),
                        num(a["normalised_ratio"]), thousands(a["vignettes_needed"]), coverage_cell(a));
    md += interval_notes(r["floors"]);
    if (r["paired_difference"].is_object()) {
      const auto& p = r["paired_difference"];
      const std::string diff = p.contains("difference_discordant")
                                   ? fmt::format("{}/{} = ", num(p["difference_discordant"]), num(p["comparisons"]))
                                   : "";
      md += fmt::format("\nPaired difference {} - {}: ({} - {})/{} = {}{} {} (vignette-cluster percentile bootstrap, {} "
                        "clusters).\n",
                        p.value("a", ""), p.value("b", ""), num(p["discordant_a"]), num(p["discordant_b"]),
                        num(p["comparisons"]), diff, num(p["difference"]), ci_plain(p), num(r["vignettes"]));
    }
    if (!r["subsample"].empty()) {
      md += "\nSubsampling curve (pooled floor over the first K vignettes of the order): ";
      std::string pts;
      for (const auto& k : r["subsample"])
        pts += fmt::format("{}K = {}: {}/{} = {}", pts.empty() ? "" : "; ", num(k["k"]), num(k["discordant"]),
                           num(k["comparisons"]), num(k["rate"]));
      md += pts + ".\n";
    }
    for (const auto& m : r["majority"])
      if (m.value("action", "") == "pooled")
        md += fmt::format("\nMajority vote over R' = {} draws: residual pooled floor {}/{} = {}.\n", num(m["vote_size"]),
                          num(m["discordant"]), num(m["comparisons"]), num(m["rate"]));
    if (!r["flips"].empty()) {
      md += "\n| condition | action | flip rate | 95% CI | floor (expected, no effect) | b | c | p | q | disparity | "
            "95% CI | largest control | reading |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
      for (const auto& x : r["flips"])
        md += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                          x.value("condition", ""), x.value("action", ""), num(x["flip_rate"]),
                          ci(x, "flip_low", "flip_high"), num(x["floor"]), num(x["b"]), num(x["c"]),
                          num(x["p_value"], 4), num(x["q_value"], 4), num(x["disparity"]),
                          ci(x, "disparity_low", "disparity_high"), num(x["control_max"]), x.value("reading", ""));
    }
    if (!r["flips"].empty()) md += interval_notes(r["flips"]);
    if (r.contains("contrasts_skipped") && r["contrasts_skipped"].is_string())
      md += "\n> " + r["contrasts_skipped"].get<std::string>() + "\n";
    if (r["within_range_note"].is_string()) md += "\n> " + r["within_range_note"].get<std::string>() + "\n";
    md += "\n";
  }
  if (f.contains("descriptors") && !f["descriptors"].empty()) {
    md += "Descriptor conditions (exact strings; lengths differ because phrasing cannot be perfectly equalised):\n\n"
          "| condition | descriptor | characters | words |\n|---|---|---|---|\n";
    for (const auto& d : f["descriptors"])
      md += fmt::format("| {} | {} | {} | {} |\n", d.value("id", ""), esc(d.value("descriptor", "")), num(d["chars"]),
                        num(d["words"]));
    md += "\n";
  }
}

// analyses.paired_subjects (metrics/paired_subjects.h): accuracy over all draws per
// subject, then the exact McNemar comparison of every two subjects on the same items.
void paired_subjects_section(std::string& md, const nlohmann::json& f) {
  md += "Mean outcome over all ok draws (the accuracy for a 0/1 outcome), then for every two subjects the items both "
        "answered: each item's strict-majority answer over its replicates (ties undetermined, left out), b = items "
        "only the first gets right, c = items only the second gets right, exact two-sided McNemar, Holm over every "
        "pair (" + f.value("source", "") + ").\n\n"
        "| subject | config | condition | outcome | draws | items | mean |\n|---|---|---|---|---|---|---|\n";
  for (const auto& r : f.value("subjects", nlohmann::json::array()))
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", esc(r.value("subject", "")), esc(r.value("config", "")),
                      esc(r.value("condition", "")), esc(r.value("outcome", "")), num(r["draws"]), num(r["items"]),
                      num(r["mean"]));
  md += "\n| a | b | config | condition | outcome | items | mean a − mean b | b | c | undetermined | p | p (Holm) "
        "|\n|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& r : f.value("rows", nlohmann::json::array()))
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", esc(r.value("a", "")),
                      esc(r.value("b", "")), esc(r.value("config", "")), esc(r.value("condition", "")),
                      esc(r.value("outcome", "")), num(r["items"]), num(r["difference"]), num(r["b_count"]),
                      num(r["c_count"]), num(r["undetermined"]), num(r["p_value"], 4), num(r["p_holm"], 4));
  md += "\n";
  warning_lines(md, f);
}

void floor_section(std::string& md, const nlohmann::json& f) {
  md += "How often the system disagrees with itself on the same item under the same condition: the share of "
        "replicate pairs that disagree (" + f.value("source", "") + "). A flip rate between conditions "
        "is only evidence of an effect when it clearly exceeds this floor. The cluster-bootstrap interval "
        "resamples items (clusters); the Wilson interval treats pairs as independent and is too narrow, shown "
        "for reference.\n\n";
  if (f.contains("bootstrap"))
    md += fmt::format("Bootstrap: {} resamples, seed {}, level {}.\n\n", num(f["bootstrap"]["resamples"]),
                      num(f["bootstrap"]["seed"]), num(f["bootstrap"]["level"], 2));
  floor_table(md, f["rows"], false);
  md += "\n";
}

void majority_floor_section(std::string& md, const nlohmann::json& f) {
  md += "The floor left after answering with the majority of R' draws: every pair of disjoint R'-subsets of an "
        "item's replicates, ties undetermined and excluded (" + f.value("source", "") + "). The floor is a rate "
        "among the comparisons whose two votes were both determined; *ties excluded* counts the rest, of every "
        "possible comparison. A large share makes the floor optimistic: it is measured only where both vote sets "
        "agreed internally.\n\n";
  warning_lines(md, f);
  floor_table(md, f["rows"], true);
  md += "\n";
}

void mcq_robustness_section(std::string& md, const nlohmann::json& f) {
  md += "Accuracy without and with shuffled options on the same items (exact two-sided McNemar on the "
        "discordant counts b = right then wrong, c = wrong then right), and the inappropriate-confident rate "
        "when the correct answer or the clinical context is removed (" + f.value("source", "") +
        "). One draw per item and condition, from the replicate in the `replicate` column (per item the lowest "
        "every compared condition answered: an item whose draw failed there uses a later one, and the column "
        "then says how many items came from each), so the exact test stays valid; the McNemar row's x / n are "
        "the accuracies as written and shuffled on exactly its pairs; `all replicates` gives the same rate over "
        "every ok draw.\n\n"
        "| subject | config | metric | replicate | x / n | rate | 95% CI | b | c | p | all replicates |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& r : f["rows"]) {
    const std::string xn =
        r.contains("x")        ? fmt::format("{}/{}", num(r["x"]), num(r["n"]))
        : r.contains("paired") ? fmt::format("{}/{} vs {}/{}", num(r["paired"]["none_correct"]), num(r["n"]),
                                             num(r["paired"]["shuffle_correct"]), num(r["n"]))
        : r.contains("n")      ? fmt::format("n = {}", num(r["n"]))
                               : "";
    const std::string all = r.contains("all_replicates")
                                ? fmt::format("{}/{} = {}", num(r["all_replicates"]["x"]),
                                              num(r["all_replicates"]["n"]), num(r["all_replicates"]["rate"]))
                                : "";
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", esc(r.value("subject", "")),
                      esc(r.value("config", "")), r.value("metric", ""),
                      r.value("replicate_note", num(r.value("replicate", nlohmann::json()))),
                      xn, num(r["rate"]), ci(r), r.contains("b") ? num(r["b"]) : "",
                      r.contains("c") ? num(r["c"]) : "", r.contains("p_value") ? num(r["p_value"], 4) : "", all);
  }
  md += "\n";
}

void option_probs_section(std::string& md, const nlohmann::json& f) {
  md += "Per ok draw, the probability of each shown option at the answer token from its top logprobs (" +
        f.value("source", "") +
        "). An option absent from the top list is unknown, not zero. *Mean P(gold), listed* averages the draws "
        "whose top list carried the gold option, whatever the model wrote; *mean P(gold), known* also counts a gold "
        "known only as the sampled answer's own probability, so it leans on the draws answered right (n = draws "
        "averaged; *answered gold* = of them, those whose answer is the gold). *Argmax = answer* counts only the "
        "draws with at least two known options: one known option is its own argmax.\n\n"
        "| subject | config | condition | draws | mean P(gold), listed | mean P(gold), known | argmax = answer | "
        "unknown options |\n|---|---|---|---|---|---|---|---|\n";
  for (const auto& r : f["rows"]) {
    const std::string listed = r.value("gold_listed", nlohmann::json()).is_null()
                                   ? std::string("not recorded")
                                   : fmt::format("{} (n = {})", bound(r["mean_gold_prob_listed"]), num(r["gold_listed"]));
    const std::string known = fmt::format("{} (n = {}; answered gold {})", bound(r["mean_gold_prob"]),
                                          num(r["gold_known"]), num(r.value("gold_known_answered", nlohmann::json())));
    const std::string undefined = fmt::format("{} undefined", num(r.value("argmax_undefined", nlohmann::json(0))));
    const std::string argmax =
        r["argmax_match_share"].is_null()
            ? "n/a (" + undefined + ")"
            : fmt::format("{}/{} ({}); {}", num(r["argmax_matches"]), num(r["argmax_defined"]),
                          num(r["argmax_match_share"]), undefined);
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", esc(r.value("subject", "")),
                      esc(r.value("config", "")), esc(r.value("condition", "")), num(r["draws"]), listed, known,
                      argmax, fmt::format("{}/{}", num(r["options_unknown"]), num(r["options_total"])));
  }
  md += "\n";
  warning_lines(md, f);
}

// analyses.bbq_bias (metrics/bbq_bias.h): the BBQ bias scores per cell and context.
void bbq_bias_section(std::string& md, const nlohmann::json& f) {
  md += "One draw per item (the lowest replicate). s_DIS = 2 biased / non-unknown - 1 on the disambiguated contexts, "
        "s_AMB = (1 - accuracy) s_DIS on the ambiguous ones; 0 = no bias, positive = answers follow the stereotype (" +
        f.value("source", "") + ").\n\n"
        "| subject | config | condition | context | items | answered | correct | non-unknown | biased | accuracy | "
        "bias score |\n|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& r : f["rows"])
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", esc(r.value("subject", "")),
                      esc(r.value("config", "")), esc(r.value("condition", "")), esc(r.value("context_condition", "")),
                      num(r["items"]), num(r["answered"]), num(r["correct"]), num(r["non_unknown"]), num(r["biased"]),
                      num(r["accuracy"]), num(r["score"]));
  md += "\n";
}

}  // namespace

const std::vector<ReportSection>& report_sections() {
  static const std::vector<ReportSection> kSections{
      {"floor", "## Instability floor", floor_section},
      {"majority_floor", "## Majority-vote floor", majority_floor_section},
      {"mcq_robustness", "## MCQ robustness", mcq_robustness_section},
      {"option_probs", "## Option probabilities (logprobs)", option_probs_section},
      {"bbq_bias", "## BBQ bias score", bbq_bias_section},
      {"paired_subjects", "## Subjects compared on the same items", paired_subjects_section},
      {"judge_panel", "## Judge panel reliability", judge_panel_section},
      {"human_validity", "## Judges against human raters", human_validity_section},
      {"fairness", "## Fairness audit: descriptor flips read against the floor", fairness_section},
      {"rerun", "## Same-input rerun (seed 002 §4)", rerun_section},            // report/rerun_section.h
      {"envelope", "## Configuration envelope", envelope_markdown},             // report/grid_card.h
  };
  return kSections;
}

std::string render_markdown(const nlohmann::json& results) {
  std::string md;
  const auto& study = results.contains("study") ? results["study"] : nlohmann::json();
  md += fmt::format("# noisefloor report: {}\n\n", study.is_object() ? study.value("name", "study") : "store");
  md += fmt::format("Store `{}` · noisefloor {}", results.value("store", ""), results.value("tool_version", ""));
  if (study.is_object() && !study.value("hash", "").empty())
    md += fmt::format(" · study hash `{}`", study.value("hash", "").substr(0, 16));
  md += "\n\n";
  // A report from part of the plan says so first (results.json `plan`), with the planned
  // cells that have no draws: they appear in no table below.
  if (const std::string partial = partial_plan_text(results.value("plan", nlohmann::json())); !partial.empty()) {
    md += "> **" + partial + ".** Every number below rests on the draws stored.";
    const auto& empty = results["plan"].value("cells_without_draws", nlohmann::json::array());
    if (!empty.empty()) {
      md += " Planned cells with no draws:";
      size_t shown = 0;
      for (const auto& c : empty) {
        if (shown == 20) break;
        md += fmt::format("{} {} · {} · {}", shown == 0 ? "" : ";", esc(c.value("subject", "")),
                          esc(c.value("config", "")), esc(c.value("condition", "")));
        ++shown;
      }
      if (empty.size() > shown) md += fmt::format("; and {} more (results.json plan.cells_without_draws)", empty.size() - shown);
      md += ".";
    }
    md += "\n\n";
  }
  warning_lines(md, results);
  md += render_summary_markdown(results);

  const bool has_draws = results.contains("draws") && !results["draws"]["rows"].empty();
  md += "## Draws\n\n";
  if (!has_draws) md += "The store holds no model draws (imported votes or labels only).\n\n";
  else
    md += "API errors are never scored; parse errors are reported and left out of every rate "
          "(parse error rate = parse errors / answered draws).\n\n"
          "| subject | config | condition | total | ok | parse_error | api_error | refused | parse error rate |\n"
          "|---|---|---|---|---|---|---|---|---|\n";
  if (has_draws) {
    for (const auto& r : results["draws"]["rows"]) {
      md += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", esc(r.value("subject", "")),
                        esc(r.value("config", "")), esc(r.value("condition", "")), num(r["total"]), num(r["ok"]),
                        num(r["parse_error"]), num(r["api_error"]), num(r["refused"]), num(r["parse_error_rate"]));
    }
  }
  md += "\n";
  if (has_draws && results["draws"].contains("by_language") && !results["draws"]["by_language"].empty()) {
    md += "Parse error rate by reply language (the reply's script; answered draws only):\n\n"
          "| subject | config | language | answered | parse_error | parse error rate |\n|---|---|---|---|---|---|\n";
    for (const auto& r : results["draws"]["by_language"])
      md += fmt::format("| {} | {} | {} | {} | {} | {} |\n", esc(r.value("subject", "")), esc(r.value("config", "")),
                        esc(r.value("language", "")), num(r["answered"]), num(r["parse_error"]), num(r["parse_error_rate"]));
    md += "\n";
  }

  const auto& an = results.contains("analyses") ? results["analyses"] : nlohmann::json::object();
  // One section per analysis, in the report's order; an analysis the data could not
  // support says why, the same way for every analysis (results.json `skipped`).
  for (const auto& sec : report_sections()) {
    if (!an.contains(sec.analysis)) continue;
    const auto& f = an[sec.analysis];
    md += std::string(sec.heading) + "\n\n";
    if (f.is_object() && f.contains("skipped")) {
      md += "Skipped: " + (f["skipped"].is_string() ? f["skipped"].get<std::string>() : f["skipped"].dump()) +
            "\n\n";
      continue;
    }
    sec.render(md, f);
  }
  for (const auto& [name, f] : an.items()) {  // an analysis this renderer has no section for
    if (std::any_of(report_sections().begin(), report_sections().end(),
                    [&](const ReportSection& sec) { return name == sec.analysis; }))
      continue;
    md += "## " + name + "\n\n" +
          (f.is_object() && f.contains("skipped") && f["skipped"].is_string()
               ? "Skipped: " + f["skipped"].get<std::string>()
               : "This report has no section for this analysis; its results are in results.json (analyses." + name +
                     ").") +
          "\n\n";
  }
  md += "---\nMachine-readable results: `results.json` (schema in docs/results.md).\n";
  return md;
}

Status write_report(const std::string& out_dir, const nlohmann::json& results, std::vector<std::string>* written) {
  std::vector<std::string> names;
  NF_RETURN_IF_ERROR(make_dirs(out_dir));
  NF_RETURN_IF_ERROR(write_file_atomic(out_dir + "/results.json", results.dump(2) + "\n"));
  names.push_back("results.json");
  NF_RETURN_IF_ERROR(write_file_atomic(out_dir + "/report.md", render_markdown(results)));
  names.push_back("report.md");
  const std::string card_path = out_dir + "/grid_card.json";
  if (const auto card = grid_card(results); !card.is_null()) {  // seed 003 §7
    NF_RETURN_IF_ERROR(write_file_atomic(card_path, card.dump(2) + "\n"));
    names.push_back("grid_card.json");
  } else {
    std::error_code ec;  // a card from an earlier envelope analysis would describe other results
    std::filesystem::remove(card_path, ec);
    if (ec) return DataLoss("cannot remove the stale " + card_path + ": " + ec.message());
  }
  NF_RETURN_IF_ERROR(write_html_report(out_dir, results));
  names.push_back("report.html");
  names.push_back("figures.json");
  if (written != nullptr) *written = std::move(names);
  return Status::Ok();
}

}  // namespace nf
