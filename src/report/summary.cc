#include "report/summary.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "util/bound_text.h"

namespace nf {

namespace {

using nlohmann::json;

std::string num(const json& v, int digits = 3) {
  if (v.is_null()) return "n/a";
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  if (v.is_number()) return fmt::format("{:.{}f}", v.get<double>(), digits);
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

std::string str(const json& o, const char* key) {
  return o.is_object() && o.contains(key) && o[key].is_string() ? o[key].get<std::string>() : std::string();
}

// o[key], or null when o is not an object or lacks the key (results from an older or newer
// tool must not crash the renderer).
const json& at(const json& o, const char* key) {
  static const json kNull;
  return o.is_object() && o.contains(key) ? o[key] : kNull;
}

double dbl(const json& o, const char* key, double fallback = NAN) {
  return o.is_object() && o.contains(key) && o[key].is_number() ? o[key].get<double>() : fallback;
}

// " [lo, hi]" when the row carries the interval, plus the flags issue 12 adds to rows.
std::string interval(const json& r, const char* lo, const char* hi) {
  std::string s;
  if (r.contains(lo) && r[lo].is_number() && r.contains(hi) && r[hi].is_number())
    s = fmt::format(" [{}, {}]", format_bound(r[lo].get<double>()), format_bound(r[hi].get<double>()));
  if (r.value("degenerate", false)) {
    s += " (degenerate interval: every resample equal";
    if (r.contains("exact_interval") && r["exact_interval"].is_object()) {
      const auto& e = r["exact_interval"];
      s += fmt::format("; {} [{}, {}]", str(e, "method"), format_bound(dbl(e, "lo")), format_bound(dbl(e, "hi")));
    }
    s += ")";
  }
  if (r.value("few_clusters", false)) s += fmt::format(" (only {} clusters)", num(r.value("clusters", json())));
  return s;
}

// Keeps subjects in first-seen order.
struct Book {
  std::vector<SubjectHeadline> out;
  SubjectHeadline& at(const std::string& subject) {
    for (auto& s : out)
      if (s.subject == subject) return s;
    out.push_back({subject, {}});
    return out.back();
  }
};

// The reference condition per (subject, config): the fairness analysis's, else "none", else
// the first condition the floor rows name for that cell.
std::string reference_condition(const json& an, const json& floor_rows, const std::string& subject,
                                const std::string& config) {
  if (an.contains("fairness") && an["fairness"].contains("rows"))
    for (const auto& r : an["fairness"]["rows"])
      if (str(r, "subject") == subject && str(r, "config") == config && !str(r, "reference").empty())
        return str(r, "reference");
  std::string first;
  for (const auto& r : floor_rows) {
    if (str(r, "subject") != subject || str(r, "config") != config) continue;
    if (str(r, "condition") == "none") return "none";
    if (first.empty()) first = str(r, "condition");
  }
  return first;
}

void floor_lines(Book& book, const json& an) {
  if (!an.contains("floor") || !an["floor"].contains("rows")) return;
  const auto& rows = an["floor"]["rows"];
  // Cells in first-seen order; a cell without a pooled row uses its only outcome.
  std::vector<std::pair<std::string, std::string>> cells;
  for (const auto& r : rows) {
    auto key = std::make_pair(str(r, "subject"), str(r, "config"));
    if (std::find(cells.begin(), cells.end(), key) == cells.end()) cells.push_back(key);
  }
  for (const auto& [subject, config] : cells) {
    const std::string ref = reference_condition(an, rows, subject, config);
    const json* pick = nullptr;
    int outcomes = 0;
    for (const auto& r : rows) {
      if (str(r, "subject") != subject || str(r, "config") != config || str(r, "condition") != ref) continue;
      if (str(r, "outcome") == "pooled") pick = &r;
      else ++outcomes;
    }
    if (pick == nullptr && outcomes == 1)
      for (const auto& r : rows)
        if (str(r, "subject") == subject && str(r, "config") == config && str(r, "condition") == ref) pick = &r;
    if (pick == nullptr) continue;
    const auto& r = *pick;
    book.at(subject).lines.push_back(
        fmt::format("Instability floor at {}, condition {} ({}): {} = {}/{} disagreeing replicate pairs{}.", config, ref,
                    str(r, "outcome") == "pooled" ? pooled_over_text(r) : str(r, "outcome"), num(at(r, "rate")),
                    num(at(r, "discordant")), num(at(r, "comparisons")), interval(r, "ci_low", "ci_high")));
  }
}

void fairness_lines(Book& book, const json& an) {
  if (!an.contains("fairness") || !an["fairness"].contains("rows")) return;
  for (const auto& row : an["fairness"]["rows"]) {
    auto& s = book.at(str(row, "subject"));
    // The pooled action floor is the fairness analysis's own headline number (seed 000 S3).
    // The plain pooled row repeats the floor analysis's line when both ran on the same cell.
    bool floor_line = false;
    if (an.contains("floor") && an["floor"].contains("rows"))
      for (const auto& r : an["floor"]["rows"])
        floor_line = floor_line || (str(r, "subject") == str(row, "subject") && str(r, "config") == str(row, "config") &&
                                    str(r, "condition") == str(row, "reference") && str(r, "outcome") == "pooled");
    for (const auto& a : row.value("floors", json::array()))
      if (str(a, "action").rfind("pooled", 0) == 0 && !(floor_line && str(a, "action") == "pooled"))
        s.lines.push_back(fmt::format("Floor over actions at {}, reference {} ({}): {} = {}/{}{}.", str(row, "config"),
                                      str(row, "reference"), str(a, "action"), num(at(a, "rate")), num(at(a, "discordant")),
                                      num(at(a, "comparisons")), interval(a, "ci_low", "ci_high")));
    const json all_flips = row.value("flips", json::array());
    std::vector<const json*> flips;
    for (const auto& x : all_flips) {
      if (x.value("control", false)) continue;
      if (dbl(x, "flip_rate") > dbl(x, "floor")) flips.push_back(&x);
    }
    std::stable_sort(flips.begin(), flips.end(), [](const json* a, const json* b) {
      return dbl(*a, "flip_rate") - dbl(*a, "floor") > dbl(*b, "flip_rate") - dbl(*b, "floor");
    });
    if (flips.empty()) {
      // No contrast at all (reference draws only) is not a finding that none flips (tester
      // s11 finding 4).
      bool contrasts = false;
      for (const auto& x : all_flips) contrasts = contrasts || !x.value("control", false);
      s.lines.push_back(contrasts ? fmt::format("No descriptor contrast at {} flips more often than its action's floor.",
                                                str(row, "config"))
                                  : fmt::format("No descriptor contrasts at {}: the store holds reference draws only, "
                                                "so no flip rate was tested (floors only).",
                                                str(row, "config")));
      continue;
    }
    for (size_t i = 0; i < std::min<size_t>(3, flips.size()); ++i) {
      const auto& x = *flips[i];
      s.lines.push_back(fmt::format(
          "Contrast {} on {}: flip rate {}{} against a floor of {} (largest control arm on this action {}; q = {}): {}.",
          str(x, "condition"), str(x, "action"), num(at(x, "flip_rate")), interval(x, "flip_low", "flip_high"),
          num(at(x, "floor")), num(at(x, "control_max")),
          num(x.value("q_value", json()), 3), str(x, "reading")));
    }
  }
}

void mcq_lines(Book& book, const json& an) {
  if (!an.contains("mcq_robustness") || !an["mcq_robustness"].contains("rows")) return;
  const auto& rows = an["mcq_robustness"]["rows"];
  for (const auto& r : rows) {
    if (str(r, "metric") != "accuracy_none") continue;
    const std::string subject = str(r, "subject"), config = str(r, "config");
    const json* shuffled = nullptr;
    const json* test = nullptr;
    for (const auto& q : rows) {
      if (str(q, "subject") != subject || str(q, "config") != config) continue;
      if (str(q, "metric") == "accuracy_shuffle") shuffled = &q;
      if (str(q, "metric") == "shuffle_mcnemar") test = &q;
    }
    // With the paired test, the two accuracies are the test's own pairs (tester s11 finding
    // 9: per-condition accuracies from other draws than the test's pointed the other way).
    if (test != nullptr && test->contains("paired") && (*test)["paired"].is_object()) {
      const json& p = (*test)["paired"];
      book.at(subject).lines.push_back(fmt::format(
          "MCQ accuracy at {} on the {} items answered in both conditions (replicate {}): {} = {}/{} as written, {} = "
          "{}/{} with shuffled options (exact McNemar b = {}, c = {}, p = {}).",
          config, num(p.value("n", json())), test->value("replicate_note", num(test->value("replicate", json()))),
          num(p.value("none_rate", json())), num(p.value("none_correct", json())), num(p.value("n", json())),
          num(p.value("shuffle_rate", json())), num(p.value("shuffle_correct", json())), num(p.value("n", json())),
          num(test->value("b", json())), num(test->value("c", json())), num(test->value("p_value", json()), 4)));
      continue;
    }
    std::string line = fmt::format("MCQ accuracy at {} (replicate {}): {} = {}/{} as written", config,
                                   r.value("replicate_note", num(r.value("replicate", json()))), num(at(r, "rate")),
                                   num(r.value("x", json())), num(r.value("n", json())));
    if (shuffled != nullptr)
      line += fmt::format(", {} = {}/{} with shuffled options", num(at((*shuffled), "rate")),
                          num(shuffled->value("x", json())), num(shuffled->value("n", json())));
    if (test != nullptr) line += fmt::format(" (exact McNemar p = {})", num(test->value("p_value", json()), 4));
    book.at(subject).lines.push_back(line + ".");
  }
}

void judge_lines(Book& book, const json& an) {
  if (an.contains("judge_panel") && !an["judge_panel"].contains("skipped")) {
    const auto& f = an["judge_panel"];
    for (const auto& r : f.value("leave_own_provider_out", json::array()))
      book.at(str(r, "subject"))
          .lines.push_back(fmt::format(
              "Judge panel: {} {} (mean of the judges; the judge tables use the same direction).",
              f.value("rate_label", std::string("appropriate-response rate")),
              r.contains("panel_inappropriate") && r["panel_inappropriate"].is_number()
                  ? num(json(1.0 - r["panel_inappropriate"].get<double>()))
                  : num(json())));
    auto& all = book.at("all judges");
    if (f.contains("fleiss") && f["fleiss"].is_object())
      all.lines.push_back(fmt::format("Fleiss kappa across the judges: {}{}.", num(at(f, "fleiss").value("kappa", json())),
                                      interval(f["fleiss"], "low", "high")));
    if (f.contains("logistic"))
      for (const auto& m : f["logistic"].value("models", json::array()))
        if (str(m, "model") == "shared")
          for (const auto& t : m.value("terms", json::array()))
            all.lines.push_back(fmt::format("Same-provider effect (shared log-odds coefficient): {}{}{}.",
                                            num(t.value("coef", json())), interval(t, "low", "high"),
                                            f.contains("permutation") && f["permutation"].contains("p")
                                                ? fmt::format("; exact permutation p = {}",
                                                              num(at(f, "permutation")["p"], 4))
                                                : std::string()));
  }
  if (an.contains("human_validity") && !an["human_validity"].contains("skipped")) {
    const auto& rows = an["human_validity"].value("judge_minus_rater", json::array());
    const json* worst = nullptr;
    for (const auto& r : rows)
      if (r.contains("difference") && r["difference"].is_number() &&
          (worst == nullptr || std::fabs(r["difference"].get<double>()) > std::fabs((*worst)["difference"].get<double>())))
        worst = &r;
    if (worst != nullptr)
      book.at("all judges")
          .lines.push_back(fmt::format("Largest judge-minus-rater difference: {} vs {}: {}{} (positive = judge more lenient).",
                                       str(*worst, "judge"), str(*worst, "reference"), num(at((*worst), "difference")),
                                       interval(*worst, "low", "high")));
  }
}

}  // namespace

std::string pooled_over_text(const nlohmann::json& row) {
  if (!row.is_object() || !row.contains("pooled_over") || !row["pooled_over"].is_array()) return "pooled over outcomes";
  const size_t n = row["pooled_over"].size();
  std::string s = fmt::format("pooled over {} independent outcome{}", n, n == 1 ? "" : "s");
  std::vector<std::string> excluded;
  if (row.contains("derived_excluded") && row["derived_excluded"].is_array())
    for (const auto& e : row["derived_excluded"])
      if (e.is_string()) excluded.push_back(e.get<std::string>());
  if (!excluded.empty()) s += fmt::format(" (derived excluded: {})", fmt::join(excluded, ", "));
  return s;
}

std::vector<SubjectHeadline> headline(const nlohmann::json& results) {
  Book book;
  if (!results.is_object() || !results.contains("analyses") || !results["analyses"].is_object()) return {};
  const auto& an = results["analyses"];
  floor_lines(book, an);
  fairness_lines(book, an);
  mcq_lines(book, an);
  judge_lines(book, an);
  std::erase_if(book.out, [](const SubjectHeadline& s) { return s.lines.empty(); });
  return book.out;
}

std::string render_summary_markdown(const nlohmann::json& results) {
  const auto h = headline(results);
  if (h.empty()) return "";
  bool floors = false;
  for (const auto& s : h)
    for (const auto& l : s.lines) floors = floors || l.rfind("Instability floor", 0) == 0 || l.rfind("Floor over", 0) == 0;
  std::string md = "## Summary\n\n";
  if (floors)
    md += "The floor is how often the system disagrees with itself on the reference condition; an effect is only "
          "evidence when it clearly exceeds it.\n\n";
  for (const auto& s : h) {
    md += "**" + s.subject + "**\n\n";
    for (const auto& l : s.lines) md += "- " + l + "\n";
    md += "\n";
  }
  return md;
}

}  // namespace nf
