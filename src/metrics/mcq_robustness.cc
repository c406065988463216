#include "metrics/mcq_robustness.h"

#include <map>
#include <tuple>

#include <fmt/format.h>

#include "stats/paired.h"
#include "stats/proportion.h"

namespace nf {

namespace {

// (subject, config) -> condition -> item -> replicate -> correct
using CorrectMap =
    std::map<std::pair<std::string, std::string>, std::map<std::string, std::map<std::string, std::map<int, double>>>>;

}  // namespace

Result<std::vector<McqRobustnessRow>> compute_mcq_robustness(const std::vector<OutcomeRow>& rows, double level) {
  CorrectMap m;
  for (const auto& r : rows) {
    if (r.outcome != "correct") continue;
    m[{r.subject, r.config}][r.condition][r.item][r.replicate] = r.value;
  }
  std::vector<McqRobustnessRow> out;
  for (const auto& [sc, conds] : m) {
    const auto& [subject, config] = sc;
    auto single = [&](const std::string& cond, const std::string& metric, bool count_wrong) -> Status {
      auto it = conds.find(cond);
      if (it == conds.end()) return Status::Ok();
      int64_t x = 0, n = 0, x_all = 0, n_all = 0;
      int rep_used = -1;
      std::map<int, int64_t> rep_items;
      for (const auto& [item, reps] : it->second) {
        const auto& [rep, v] = *reps.begin();
        if (rep_used < 0 || rep < rep_used) rep_used = rep;
        ++rep_items[rep];
        ++n;
        const bool correct = v >= 0.5;
        if (count_wrong ? !correct : correct) ++x;
        for (const auto& [r_all, v_all] : reps) {
          ++n_all;
          if (count_wrong ? !(v_all >= 0.5) : v_all >= 0.5) ++x_all;
        }
      }
      if (n == 0) return Status::Ok();
      NF_ASSIGN_OR_RETURN(auto w, stats::wilson(x, n, level));
      McqRobustnessRow row{subject, config, metric};
      row.x = x;
      row.n = n;
      row.rate = w.estimate;
      row.ci_low = w.low;
      row.ci_high = w.high;
      row.replicate = rep_used;
      row.replicate_items = std::move(rep_items);
      row.x_all = x_all;
      row.n_all = n_all;
      out.push_back(row);
      return Status::Ok();
    };
    NF_RETURN_IF_ERROR(single("none", "accuracy_none", false));
    NF_RETURN_IF_ERROR(single("shuffle", "accuracy_shuffle", false));
    auto none = conds.find("none");
    auto shuf = conds.find("shuffle");
    if (none != conds.end() && shuf != conds.end()) {
      int64_t b = 0, c = 0, n = 0, none_correct = 0, shuffle_correct = 0;
      int rep_used = -1;
      std::map<int, int64_t> rep_items;
      for (const auto& [item, reps_none] : none->second) {
        auto s = shuf->second.find(item);
        if (s == shuf->second.end()) continue;
        // lowest replicate present in both
        int rep = -1;
        for (const auto& [r, v] : reps_none) {
          if (s->second.count(r)) {
            rep = r;
            break;
          }
        }
        if (rep < 0) continue;
        if (rep_used < 0 || rep < rep_used) rep_used = rep;
        ++rep_items[rep];
        const bool a = reps_none.at(rep) >= 0.5;
        const bool z = s->second.at(rep) >= 0.5;
        ++n;
        none_correct += a;
        shuffle_correct += z;
        if (a && !z) ++b;
        if (!a && z) ++c;
      }
      if (n > 0) {
        NF_ASSIGN_OR_RETURN(double p, stats::mcnemar_exact(b, c));
        McqRobustnessRow row{subject, config, "shuffle_mcnemar"};
        row.n = n;
        row.b = b;
        row.c = c;
        row.rate = static_cast<double>(b - c) / static_cast<double>(n);
        row.p_value = p;
        row.replicate = rep_used;
        row.replicate_items = std::move(rep_items);
        row.none_correct = none_correct;
        row.shuffle_correct = shuffle_correct;
        out.push_back(row);
      }
    }
    NF_RETURN_IF_ERROR(single("remove_answer", "inappropriate_remove_answer", true));
    NF_RETURN_IF_ERROR(single("remove_context", "inappropriate_remove_context", true));
  }
  return out;
}

nlohmann::json mcq_robustness_row_to_json(const McqRobustnessRow& r) {
  nlohmann::json j = {{"subject", r.subject}, {"config", r.config}, {"metric", r.metric}, {"rate", r.rate}};
  if (r.x) j["x"] = *r.x;
  if (r.n) j["n"] = *r.n;
  if (r.ci_low) j["ci_low"] = *r.ci_low;
  if (r.ci_high) j["ci_high"] = *r.ci_high;
  if (r.b) j["b"] = *r.b;
  if (r.c) j["c"] = *r.c;
  if (r.p_value) j["p_value"] = *r.p_value;
  j["replicate"] = r.replicate;
  // "replicate_note": "0" when every item used replicate 0; "0 for 20 items, 1 for 3, 2 for
  // 1" when failed draws sent some items to later replicates.
  nlohmann::json items = nlohmann::json::object();
  std::string note;
  for (const auto& [rep, count] : r.replicate_items) {
    items[std::to_string(rep)] = count;
    note += fmt::format("{}{} for {} item{}", note.empty() ? "" : ", ", rep, count, count == 1 ? "" : "s");
  }
  j["replicate_items"] = items;
  j["replicate_note"] = r.replicate_items.size() <= 1 ? std::to_string(r.replicate) : note;
  if (r.none_correct && r.shuffle_correct && r.n && *r.n > 0)
    j["paired"] = {{"n", *r.n},
                   {"none_correct", *r.none_correct},
                   {"shuffle_correct", *r.shuffle_correct},
                   {"none_rate", static_cast<double>(*r.none_correct) / static_cast<double>(*r.n)},
                   {"shuffle_rate", static_cast<double>(*r.shuffle_correct) / static_cast<double>(*r.n)}};
  if (r.x_all && r.n_all && *r.n_all > 0)
    j["all_replicates"] = {{"x", *r.x_all},
                           {"n", *r.n_all},
                           {"rate", static_cast<double>(*r.x_all) / static_cast<double>(*r.n_all)}};
  return j;
}

}  // namespace nf
