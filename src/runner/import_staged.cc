#include "runner/import_staged.h"

#include <array>
#include <unordered_map>

#include <fmt/format.h>

#include "data/import_messages.h"
#include "runner/import_plan.h"

namespace nf {

Result<ImportSummary> import_long_draws_staged(const std::string& path, Store& store, const std::string& study_name,
                                               const LongDrawChecks& checks) {
  ImportSummary sum;
  NF_ASSIGN_OR_RETURN(const std::optional<StoredPlan> plan, StoredPlan::of(store));  // as import_long_draws_file
  if (!store.get_study().ok())
    NF_RETURN_IF_ERROR(
        store.put_study(StudyRecord{study_name, "", 0, {{"name", study_name}, {"imported", true}}}).status());
  std::unordered_map<std::string, std::string> item_cluster;  // grows with the items only
  NF_ASSIGN_OR_RETURN(auto staged, store.begin_staged_import());
  Status store_error = Status::Ok();  // a failed add: returned as is
  Status stop = Status::Ok();         // the first error met while reading (parse, value, cluster)
  DrawKey key;
  Outcome outcome;
  std::array<int64_t, 4> non_ok{};  // the rows (= draws) of each status but ok
  const Status read = for_each_long_draw(path, [&](const LongDrawRow& r, size_t line) -> Status {
    ++sum.rows;
    // Only the fields that changed from the previous row are compared or copied
    // (LongDrawRow::changed; all set on the first row).
    const unsigned ch = r.changed;
    if (ch & LongDrawRow::kChangedSubject) key.subject = r.subject;
    if (ch & LongDrawRow::kChangedItem) key.item = r.item;
    if (ch & LongDrawRow::kChangedCondition) key.condition = r.condition;
    if (ch & LongDrawRow::kChangedConfig) key.config = r.config;
    key.replicate = r.replicate;
    if (plan && !plan->planned(key)) {  // "path:line" formatted only for a row out of the plan
      stop = plan->check(key, fmt::format("{}:{}", path, line));
      return stop;
    }
    if (ch & (LongDrawRow::kChangedItem | LongDrawRow::kChangedCluster)) {  // rows of an item are usually adjacent
      auto [it, inserted] = item_cluster.try_emplace(r.item, r.cluster);
      if (!inserted && it->second != r.cluster) {
        stop = two_clusters_error(path, line, r.item, it->second, r.cluster);
        return stop;
      }
    }
    if (ch & LongDrawRow::kChangedOutcome) outcome.name = r.outcome;
    outcome.value = r.value;
    if (ch & LongDrawRow::kChangedLabel) outcome.label = r.label;
    if (r.status != DrawStatus::kOk) {
      ++non_ok[static_cast<size_t>(r.status)];  // one row, one draw (finish checks)
      store_error = staged->add_draw(key, r.cluster, r.status, static_cast<int64_t>(line), sum.rows);
    } else {
      store_error = staged->add(key, r.cluster, outcome, static_cast<int64_t>(line), sum.rows);
    }
    return store_error;
  }, checks, &sum.warnings);
  NF_RETURN_IF_ERROR(store_error);
  if (!read.ok() && stop.ok()) stop = read;
  // Every staged row comes before the error that stopped the reading (if any), so a
  // problem among them is met first in file order, as a row-by-row import meets it.
  // Written and committed only when the reading met no error and the rows no problem.
  int64_t draws = 0;
  NF_ASSIGN_OR_RETURN(const Store::StagedImport::Problem problem, staged->finish(stop.ok(), &draws));
  if (problem.seq > 0) {
    if (!problem.stored.ok()) return problem.stored;
    if (!problem.status.empty()) {
      if (problem.status != problem.first_status)
        return status_conflict_error(path, static_cast<size_t>(problem.line), problem.key, problem.status,
                                     static_cast<size_t>(problem.first_line), problem.first_status);
      return second_status_row_error(path, static_cast<size_t>(problem.line), problem.key, problem.status,
                                     static_cast<size_t>(problem.first_line));
    }
    return duplicate_row_error(path, static_cast<size_t>(problem.line), problem.key, problem.outcome,
                               static_cast<size_t>(problem.first_line));
  }
  NF_RETURN_IF_ERROR(stop);
  sum.draws = draws;
  sum.by_status = non_ok;
  sum.by_status[static_cast<size_t>(DrawStatus::kOk)] = draws - non_ok[1] - non_ok[2] - non_ok[3];
  sum.items = static_cast<int64_t>(item_cluster.size());
  return sum;
}

}  // namespace nf
