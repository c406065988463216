#include "runner/import.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>

namespace nf {

namespace {

/// The common tail of every import: the study record (if the store has none), the items
/// with their clusters, then every draw in one transaction.
Status write_imported(std::map<DrawKey, Draw>& draws, const std::map<std::string, std::string>& item_cluster,
                      const std::map<std::string, nlohmann::json>& item_data, Store& store, const StudyRecord& study) {
  auto existing = store.get_study();
  if (!existing.ok()) NF_RETURN_IF_ERROR(store.put_study(study).status());
  for (const auto& [item, cluster] : item_cluster) {
    auto d = item_data.find(item);
    NF_RETURN_IF_ERROR(store.put_item(item, cluster, d == item_data.end() ? nlohmann::json{{"imported", true}} : d->second));
  }
  std::vector<Draw> all;
  all.reserve(draws.size());
  for (auto& [k, d] : draws) all.push_back(std::move(d));
  return store.put_draws(all);
}

Status note_cluster(std::map<std::string, std::string>& item_cluster, const std::string& item,
                    const std::string& cluster) {
  auto [it, inserted] = item_cluster.emplace(item, cluster);
  if (!inserted && it->second != cluster)
    return InvalidArgument(fmt::format("item '{}' is given two clusters ('{}' and '{}')", item, it->second, cluster));
  return Status::Ok();
}

}  // namespace

Result<ImportSummary> import_long_draws(const std::vector<LongDrawRow>& rows, Store& store,
                                        const std::string& study_name) {
  ImportSummary sum;
  sum.rows = static_cast<int64_t>(rows.size());
  std::map<DrawKey, Draw> draws;
  std::map<std::string, std::string> item_cluster;
  for (const auto& r : rows) {
    const std::string cluster = r.cluster.empty() ? r.item : r.cluster;
    NF_RETURN_IF_ERROR(note_cluster(item_cluster, r.item, cluster));
    DrawKey key{r.subject, r.item, r.condition, r.config, r.replicate};
    Draw& d = draws[key];
    d.key = key;
    d.cluster = cluster;
    d.status = DrawStatus::kOk;
    d.extra = {{"imported", true}};
    d.outcomes.push_back({r.outcome, r.value, r.label});
  }
  sum.draws = static_cast<int64_t>(draws.size());
  sum.items = static_cast<int64_t>(item_cluster.size());
  NF_RETURN_IF_ERROR(write_imported(draws, item_cluster, {}, store,
                                    StudyRecord{study_name, "", 0, {{"name", study_name}, {"imported", true}}}));
  return sum;
}

Result<ImportSummary> import_long_draws_file(const std::string& path, Store& store, const std::string& study_name,
                                             const LongDrawChecks& checks) {
  ImportSummary sum;
  if (!store.get_study().ok())
    NF_RETURN_IF_ERROR(
        store.put_study(StudyRecord{study_name, "", 0, {{"name", study_name}, {"imported", true}}}).status());
  // item -> cluster: the only state that grows, with the number of items.
  std::unordered_map<std::string, std::string> item_cluster;
  NF_ASSIGN_OR_RETURN(auto bulk, store.begin_bulk_import());
  DrawKey key;
  Outcome outcome;
  std::string last_item, last_cluster;
  const Status scanned = for_each_long_draw(path, [&](const LongDrawRow& r, size_t line) -> Status {
    ++sum.rows;
    if (r.item != last_item || r.cluster != last_cluster) {  // rows of an item are usually adjacent
      auto [it, inserted] = item_cluster.try_emplace(r.item, r.cluster);
      if (!inserted && it->second != r.cluster)
        return InvalidArgument(fmt::format("{}:{}: cluster: item '{}' is given two clusters ('{}' and '{}')", path,
                                           line, r.item, it->second, r.cluster));
      last_item = r.item;
      last_cluster = r.cluster;
    }
    key.subject = r.subject;
    key.item = r.item;
    key.condition = r.condition;
    key.config = r.config;
    key.replicate = r.replicate;
    outcome.name = r.outcome;
    outcome.value = r.value;
    outcome.label = r.label;
    bool duplicate = false;
    NF_RETURN_IF_ERROR(bulk->add_outcome(key, r.cluster, outcome, &duplicate));
    if (duplicate)
      return InvalidArgument(fmt::format("{}:{}: outcome: duplicate row for (subject={}, item={}, condition={}, "
                                         "config={}, replicate={}, outcome={}) (first on line {})",
                                         path, line, r.subject, r.item, r.condition, r.config, r.replicate, r.outcome,
                                         find_long_draw_line(path, r)));
    return Status::Ok();
  }, checks, &sum.warnings);
  NF_RETURN_IF_ERROR(scanned);
  std::vector<const std::pair<const std::string, std::string>*> items;
  items.reserve(item_cluster.size());
  for (const auto& ic : item_cluster) items.push_back(&ic);
  std::sort(items.begin(), items.end(), [](auto* a, auto* b) { return a->first < b->first; });
  for (const auto* ic : items) NF_RETURN_IF_ERROR(bulk->put_item(ic->first, ic->second));
  NF_RETURN_IF_ERROR(bulk->commit());
  sum.draws = bulk->draws();
  sum.items = static_cast<int64_t>(item_cluster.size());
  return sum;
}

Result<HarnessImportSummary> import_harness_logs(const std::vector<HarnessLog>& logs, Store& store,
                                                 const std::string& study_name, const std::string& source,
                                                 const std::vector<std::string>& analyses) {
  HarnessImportSummary sum;
  sum.logs = static_cast<int64_t>(logs.size());
  std::map<DrawKey, Draw> draws;
  std::map<std::string, std::string> item_cluster;
  std::map<std::string, nlohmann::json> item_data;
  std::map<std::tuple<std::string, std::string, std::string>, int> next_replicate;  // (subject, condition, config)
  std::set<std::string> subjects;
  for (const HarnessLog& log : logs) {
    const auto cell = std::make_tuple(log.subject, log.condition, log.config);
    const int offset = next_replicate[cell];
    int top = -1;
    for (const HarnessDraw& h : log.draws) top = std::max(top, h.replicate);
    if (offset > 0 && top >= 0)
      sum.notes.push_back(fmt::format("{}: another run of ({}, {}, {}): its draws are replicates {}..{}", log.path,
                                      log.subject, log.condition, log.config, offset, offset + top));
    next_replicate[cell] = offset + top + 1;
    subjects.insert(log.subject);
    NF_RETURN_IF_ERROR(store.put_subject(log.subject, log.subject_spec));
    NF_RETURN_IF_ERROR(store.put_config(log.config, log.config_spec));
    for (const auto& [item, data] : log.item_data.items()) item_data.emplace(item, data);
    for (const HarnessDraw& h : log.draws) {
      NF_RETURN_IF_ERROR(note_cluster(item_cluster, h.item, h.cluster));
      DrawKey key{log.subject, h.item, log.condition, log.config, h.replicate + offset};
      if (draws.count(key))
        return InvalidArgument(fmt::format("{}: sample {} replicate {} appears twice for ({}, {}, {})", log.path,
                                           h.item, h.replicate, log.subject, log.condition, log.config));
      Draw& d = draws[key];
      d.key = key;
      d.cluster = h.cluster;
      d.status = h.status;
      d.outcomes = h.outcomes;
      d.content = h.content;
      d.error = h.error;
      d.served_model = h.served_model;
      d.finish_reason = h.finish_reason;
      d.prompt_tokens = h.prompt_tokens;
      d.completion_tokens = h.completion_tokens;
      d.extra = h.extra;
      d.extra["imported"] = true;
      if (h.status == DrawStatus::kApiError) ++sum.api_errors;
    }
  }
  std::set<std::string> tasks;
  for (const HarnessLog& log : logs) tasks.insert(log.condition);
  if (tasks.size() > 1)
    sum.notes.push_back(fmt::format(
        "{} tasks in one store ({}...): each is its own condition, but sample ids are per task, so the same id names "
        "one item across tasks; import each task into its own store unless the tasks share their samples",
        tasks.size(), *tasks.begin()));
  nlohmann::json spec = {{"name", study_name}, {"imported", true}, {"source", source}};
  spec["analyses"] = nlohmann::json::array();
  for (const auto& a : analyses) spec["analyses"].push_back({{"name", a}, {"options", nlohmann::json::object()}});
  sum.draws = static_cast<int64_t>(draws.size());
  sum.items = static_cast<int64_t>(item_cluster.size());
  sum.subjects = static_cast<int64_t>(subjects.size());
  NF_RETURN_IF_ERROR(write_imported(draws, item_cluster, item_data, store, StudyRecord{study_name, "", 0, spec}));
  return sum;
}

}  // namespace nf
