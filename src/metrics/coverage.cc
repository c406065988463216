#include "metrics/coverage.h"

#include <fmt/format.h>

namespace nf {

Status add_planned_coverage(nlohmann::json& rows, const AnalysisContext& ctx) {
  nlohmann::json items_planned = nullptr, draws_planned = nullptr;
  std::string note = "unknown: an imported store records no plan (no study); the counts are what the store holds";
  const auto& spec = ctx.study.spec;
  const bool planned = ctx.has_study && spec.is_object() && !spec.value("imported", false) &&
                       spec.contains("replicates") && spec["replicates"].is_number_integer();
  if (planned) {
    NF_ASSIGN_OR_RETURN(const auto items, ctx.store.items());
    const int64_t replicates = spec["replicates"].get<int64_t>();
    items_planned = static_cast<int64_t>(items.size());
    draws_planned = static_cast<int64_t>(items.size()) * replicates;
    note = fmt::format("from the study: {} items x {} replicates per subject x config x condition", items.size(),
                       replicates);
  }
  for (auto& row : rows) {
    if (!row.is_object() || !row.contains("coverage")) continue;
    auto& c = row["coverage"];
    c["items_planned"] = items_planned;
    c["draws_planned"] = draws_planned;
    c["planned_note"] = note;
    const int64_t base = items_planned.is_null() ? c.value("items_observed", int64_t{0}) : items_planned.get<int64_t>();
    c["items_without_pairs"] = base - c.value("items_contributing", int64_t{0});
  }
  return Status::Ok();
}

}  // namespace nf
