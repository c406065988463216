// Checks over the logs of one harness import. See harness_log.h.
#include "data/harness_log.h"

#include <map>
#include <set>
#include <tuple>

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

void keep_item_identity(HarnessLog* log) {
  for (auto& [item, data] : log->item_data.items()) {
    const auto id = log->item_identity.find(item);
    if (id == log->item_identity.end() || id->second.same.empty() || !data.is_object()) continue;
    nlohmann::json keep = {{"task", log->condition}, {"where", id->second.where}};
    for (const auto& [field, value] : id->second.same) keep[field] = value;
    data["identity"] = keep;
  }
}

Status check_same_items_as_stored(const std::vector<HarnessLog>& logs,
                                  const std::map<std::string, nlohmann::json>& stored, const std::string& store_name) {
  for (const HarnessLog& log : logs)
    for (const auto& [item, id] : log.item_identity) {
      const auto it = stored.find(item);
      if (it == stored.end() || !it->second.is_object() || !it->second.contains("identity")) continue;
      const nlohmann::json& keep = it->second["identity"];
      if (!keep.is_object() || keep.value("task", nlohmann::json()) != log.condition) continue;
      for (const auto& [field, value] : id.same) {
        if (!keep.contains(field) || !keep[field].is_string() || keep[field].get<std::string>() == value) continue;
        const std::string what = log.source == "inspect" ? "sample" : "document";
        return InvalidArgument(fmt::format(
            "{}: {}: {} {} differs from the item stored in {} ({} {}, from {}): a different dataset version under the "
            "same {} id, so this {} cannot be a replicate of the stored item (nor be paired with the models stored). "
            "Write it to another store or import one version",
            id.where, id.label, field, value, store_name, field, keep[field].get<std::string>(),
            keep.value("where", std::string("an earlier import")), what, what));
      }
    }
  return Status::Ok();
}

std::string identity_mismatch_message(const ItemIdentity& a, const ItemIdentity& b, const std::string& field,
                                      const std::string& what) {
  return fmt::format(
      "{}: {}: {} {} differs from {} ({} {}): a different dataset version under the same {} id, so the two records "
      "did not answer the same {} and cannot be replicates of one item (nor be paired across models). Write it to "
      "another store or import one version",
      b.where, b.label, field, b.same.at(field), a.where, field, a.same.at(field), what, what);
}

Result<std::vector<std::string>> check_same_items(const std::vector<HarnessLog>& logs) {
  std::vector<std::string> warnings;
  // condition -> item -> first identity met (with its log's source, for the message)
  std::map<std::string, std::map<std::string, std::pair<const ItemIdentity*, const HarnessLog*>>> first;
  for (const HarnessLog& log : logs) {
    auto& items = first[log.condition];
    for (const auto& [item, id] : log.item_identity) {
      auto [it, inserted] = items.emplace(item, std::make_pair(&id, &log));
      if (inserted) continue;
      const ItemIdentity& a = *it->second.first;
      for (const auto& [field, value] : id.same) {
        const auto other = a.same.find(field);
        if (other != a.same.end() && other->second != value)
          return InvalidArgument(
              identity_mismatch_message(a, id, field, log.source == "inspect" ? "sample" : "document"));
      }
    }
  }
  using Cell = std::tuple<std::string, std::string, std::string>;
  std::map<Cell, std::vector<const HarnessLog*>> cells;
  for (const HarnessLog& log : logs) cells[{log.subject, log.condition, log.config}].push_back(&log);
  for (const auto& [cell, cell_logs] : cells) {
    if (cell_logs.size() < 2) continue;
    const std::string what = cell_logs.front()->source == "inspect" ? "sample" : "document";
    // A differing `warn` field (lm-eval prompt_hash), counted per log against the first
    // earlier log of the cell holding the item.
    std::map<std::string, const ItemIdentity*> seen;
    for (const HarnessLog* log : cell_logs) {
      std::map<std::string, size_t> differing;  // field -> items
      std::map<std::string, std::pair<const ItemIdentity*, const ItemIdentity*>> example;
      for (const auto& [item, id] : log->item_identity) {
        auto [it, inserted] = seen.emplace(item, &id);
        if (inserted) continue;
        for (const auto& [field, value] : id.warn) {
          const auto other = it->second->warn.find(field);
          if (other == it->second->warn.end() || other->second == value) continue;
          if (differing[field]++ == 0) example[field] = {it->second, &id};
        }
      }
      for (const auto& [field, n] : differing) {
        const auto& [a, b] = example[field];
        warnings.push_back(fmt::format(
            "{}: {} of its {} {}s {} a {} other than in an earlier run of ({}, {}, {}) (first: {}, {}: {}, {}: {}): "
            "the same {}s under another prompt (few-shot examples or template changed); imported as replicates all "
            "the same",
            log->path, n, log->item_identity.size(), what, n == 1 ? "has" : "have", field, std::get<0>(cell), std::get<1>(cell),
            std::get<2>(cell), b->label, b->where, b->warn.at(field), a->where, a->warn.at(field), what));
      }
    }
    // Items held by some runs of the cell but not by others.
    std::set<std::string> all;
    std::vector<std::set<std::string>> held(cell_logs.size());
    for (size_t k = 0; k < cell_logs.size(); ++k)
      for (const HarnessDraw& d : cell_logs[k]->draws) held[k].insert(d.item), all.insert(d.item);
    for (size_t k = 0; k < cell_logs.size(); ++k) {
      if (held[k].size() == all.size()) continue;
      std::string missing;
      size_t shown = 0, n = 0;
      for (const auto& item : all) {
        if (held[k].count(item)) continue;
        ++n;
        if (shown++ < 5) missing += (missing.empty() ? "" : ", ") + item;
      }
      if (n > shown) missing += ", ...";
      missing = (what == "sample" ? "sample " : "doc_id ") + missing;
      warnings.push_back(fmt::format(
          "run {} holds {} of the {} {}s the runs of ({}, {}, {}) in this import hold (missing {}): {} item{} fewer "
          "replicates than the others",
          cell_logs[k]->path, held[k].size(), all.size(), what, std::get<0>(cell), std::get<1>(cell),
          std::get<2>(cell), missing, n, n == 1 ? " has" : "s have"));
    }
  }
  return warnings;
}

}  // namespace nf
