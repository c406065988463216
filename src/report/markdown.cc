#include "report/markdown.h"

#include <cmath>

#include <fmt/format.h>

#include "util/file.h"

namespace nf {

namespace {

std::string num(const nlohmann::json& v, int digits = 3) {
  if (v.is_null()) return "n/a";
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  if (v.is_number()) return fmt::format("{:.{}f}", v.get<double>(), digits);
  return v.dump();
}

std::string ci(const nlohmann::json& row, const char* lo = "ci_low", const char* hi = "ci_high") {
  if (!row.contains(lo) || row[lo].is_null()) return "n/a";
  return fmt::format("[{}, {}]", num(row[lo]), num(row[hi]));
}

std::string esc(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else out += c;
  }
  return out;
}

void floor_table(std::string& md, const nlohmann::json& rows, bool majority) {
  md += majority ? "| subject | config | condition | outcome | R' | discordant / comparisons | floor | 95% CI (cluster bootstrap) | Wilson | unanimous cells |\n"
                   "|---|---|---|---|---|---|---|---|---|---|\n"
                 : "| subject | config | condition | outcome | discordant / comparisons | floor | 95% CI (cluster bootstrap) | Wilson | unanimous cells |\n"
                   "|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& r : rows) {
    const bool pooled = r.value("outcome", "") == "pooled";
    const std::string outcome = pooled ? "**pooled**" : esc(r.value("outcome", ""));
    md += fmt::format("| {} | {} | {} | {} | ", esc(r.value("subject", "")), esc(r.value("config", "")),
                      esc(r.value("condition", "")), outcome);
    if (majority) md += fmt::format("{} | ", num(r.value("vote_size", nlohmann::json(1))));
    md += fmt::format("{}/{} | {} | {} | {} | {} |\n", num(r["discordant"]), num(r["comparisons"]), num(r["rate"]),
                      ci(r), ci(r, "wilson_low", "wilson_high"), num(r.value("unanimous_cells", nlohmann::json(0))));
  }
}

}  // namespace

std::string render_markdown(const nlohmann::json& results) {
  std::string md;
  const auto& study = results.contains("study") ? results["study"] : nlohmann::json();
  md += fmt::format("# noisefloor report: {}\n\n", study.is_object() ? study.value("name", "study") : "store");
  md += fmt::format("Store `{}` · noisefloor {}", results.value("store", ""), results.value("tool_version", ""));
  if (study.is_object() && !study.value("hash", "").empty())
    md += fmt::format(" · study hash `{}`", study.value("hash", "").substr(0, 16));
  md += "\n\n";

  md += "## Draws\n\nAPI errors are never scored; parse errors are reported and left out of every rate "
        "(parse rate = parse errors / answered draws).\n\n"
        "| subject | config | condition | total | ok | parse_error | api_error | refused | parse rate |\n"
        "|---|---|---|---|---|---|---|---|---|\n";
  if (results.contains("draws")) {
    for (const auto& r : results["draws"]["rows"]) {
      md += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", esc(r.value("subject", "")),
                        esc(r.value("config", "")), esc(r.value("condition", "")), num(r["total"]), num(r["ok"]),
                        num(r["parse_error"]), num(r["api_error"]), num(r["refused"]), num(r["parse_rate"]));
    }
  }
  md += "\n";

  const auto& an = results.contains("analyses") ? results["analyses"] : nlohmann::json::object();
  if (an.contains("floor")) {
    const auto& f = an["floor"];
    md += "## Instability floor\n\n";
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
  if (an.contains("majority_floor")) {
    const auto& f = an["majority_floor"];
    md += "## Majority-vote floor\n\n";
    md += "The floor left after answering with the majority of R' draws: every pair of disjoint R'-subsets of an "
          "item's replicates, ties undetermined and excluded (" + f.value("source", "") + ").\n\n";
    if (f.contains("warnings"))
      for (const auto& w : f["warnings"]) md += "> **Warning:** " + w.get<std::string>() + "\n\n";
    floor_table(md, f["rows"], true);
    md += "\n";
  }
  if (an.contains("mcq_robustness")) {
    const auto& f = an["mcq_robustness"];
    md += "## MCQ robustness\n\n";
    md += "Accuracy without and with shuffled options on the same items (exact two-sided McNemar on the "
          "discordant counts b = right then wrong, c = wrong then right), and the inappropriate-confident rate "
          "when the correct answer or the clinical context is removed (" + f.value("source", "") +
          "). One draw per item and condition.\n\n"
          "| subject | config | metric | x / n | rate | 95% CI | b | c | p |\n|---|---|---|---|---|---|---|---|---|\n";
    for (const auto& r : f["rows"]) {
      const std::string xn = r.contains("x") ? fmt::format("{}/{}", num(r["x"]), num(r["n"]))
                                             : (r.contains("n") ? fmt::format("n = {}", num(r["n"])) : "");
      md += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", esc(r.value("subject", "")),
                        esc(r.value("config", "")), r.value("metric", ""), xn, num(r["rate"]), ci(r),
                        r.contains("b") ? num(r["b"]) : "", r.contains("c") ? num(r["c"]) : "",
                        r.contains("p_value") ? num(r["p_value"], 4) : "");
    }
    md += "\n";
  }
  md += "---\nMachine-readable results: `results.json` (schema in docs/results.md).\n";
  return md;
}

Status write_report(const std::string& out_dir, const nlohmann::json& results) {
  NF_RETURN_IF_ERROR(make_dirs(out_dir));
  NF_RETURN_IF_ERROR(write_file_atomic(out_dir + "/results.json", results.dump(2) + "\n"));
  NF_RETURN_IF_ERROR(write_file_atomic(out_dir + "/report.md", render_markdown(results)));
  return Status::Ok();
}

}  // namespace nf
