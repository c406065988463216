// Checks over the logs of one harness import. See harness_log.h.
#include "data/harness_log.h"

#include <map>

#include <fmt/format.h>

namespace nf {

std::string mixed_scores_message(const std::string& outcome, const ScoreKind& a, const std::string& a_path,
                                 const ScoreKind& b, const std::string& b_path) {
  auto one = [](const ScoreKind& k, const std::string& path) {
    return fmt::format("{}: {} has {} ({})", path, k.first_where, k.first_value,
                       k.labels ? "a label" : "a score Inspect's value_to_float converts");
  };
  return fmt::format(
      "scores.{}: mixes scores and labels: {}, but {}. A scorer's values must be all scores (C, I, P, N as written; "
      "yes, no, true, false; numbers) or all labels (other strings, imported as categories, first seen = 0); a label "
      "among scores is usually a typo ('c' for 'C', 'C ' with a space). Fix the scorer or the log, or convert the "
      "values and import them with `noisefloor import draws`",
      outcome, one(a, a_path), one(b, b_path));
}

Status code_label_scores(std::span<HarnessLog> logs) {
  std::map<std::string, std::pair<const ScoreKind*, const HarnessLog*>> first;  // outcome -> first kind met
  for (const HarnessLog& log : logs)
    for (const auto& [name, kind] : log.score_kinds) {
      auto [it, inserted] = first.emplace(name, std::make_pair(&kind, &log));
      if (!inserted && it->second.first->labels != kind.labels)
        return InvalidArgument(mixed_scores_message(name, *it->second.first, it->second.second->path, kind, log.path));
    }
  std::map<std::string, std::map<std::string, int>> codes;  // outcome -> label -> category
  for (HarnessLog& log : logs)
    for (HarnessDraw& d : log.draws)
      for (Outcome& o : d.outcomes) {
        const auto k = first.find(o.name);
        if (k == first.end() || !k->second.first->labels) continue;
        auto& c = codes[o.name];
        const int next = static_cast<int>(c.size());
        o.value = c.emplace(o.label, next).first->second;
      }
  return Status::Ok();
}

Status check_distinct_runs(const std::vector<HarnessLog>& logs) {
  std::map<std::string, const HarnessLog*> first;  // run_id -> first log holding it
  for (const HarnessLog& log : logs) {
    if (log.run_id.empty()) continue;
    auto [it, inserted] = first.emplace(log.run_id, &log);
    if (!inserted)
      return InvalidArgument(fmt::format(
          "{} and {} hold the same run ({}): the same log given twice, or a copy; its draws would count twice, as extra "
          "replicates. Give each run once",
          it->second->path, log.path, log.run_id));
  }
  return Status::Ok();
}

}  // namespace nf
