#include "runner/import.h"

#include <map>

#include <fmt/format.h>

namespace nf {

Result<ImportSummary> import_long_draws(const std::vector<LongDrawRow>& rows, Store& store,
                                        const std::string& study_name) {
  ImportSummary sum;
  sum.rows = static_cast<int64_t>(rows.size());
  std::map<DrawKey, Draw> draws;
  std::map<std::string, std::string> item_cluster;
  for (const auto& r : rows) {
    const std::string cluster = r.cluster.empty() ? r.item : r.cluster;
    auto [it, inserted] = item_cluster.emplace(r.item, cluster);
    if (!inserted && it->second != cluster)
      return InvalidArgument(fmt::format("item '{}' is given two clusters ('{}' and '{}')", r.item, it->second, cluster));
    DrawKey key{r.subject, r.item, r.condition, r.config, r.replicate};
    Draw& d = draws[key];
    d.key = key;
    d.cluster = cluster;
    d.status = DrawStatus::kOk;
    d.extra = {{"imported", true}};
    d.outcomes.push_back({r.outcome, r.value, r.label});
  }
  auto existing = store.get_study();
  if (!existing.ok()) {
    StudyRecord rec{study_name, "", 0, {{"name", study_name}, {"imported", true}}};
    NF_RETURN_IF_ERROR(store.put_study(rec).status());
  }
  for (const auto& [item, cluster] : item_cluster) {
    NF_RETURN_IF_ERROR(store.put_item(item, cluster, {{"imported", true}}));
  }
  std::vector<Draw> all;
  all.reserve(draws.size());
  for (auto& [k, d] : draws) all.push_back(std::move(d));
  NF_RETURN_IF_ERROR(store.put_draws(all));
  sum.draws = static_cast<int64_t>(all.size());
  sum.items = static_cast<int64_t>(item_cluster.size());
  return sum;
}

}  // namespace nf
