#include "metrics/coverage.h"

#include <algorithm>
#include <map>
#include <tuple>

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

Result<nlohmann::json> plan_completeness(const StudyRecord& study, Store& store,
                                         const std::vector<StatusCount>& counts) {
  const auto& spec = study.spec;
  if (!spec.is_object() || spec.value("imported", false) || !spec.contains("replicates") ||
      !spec["replicates"].is_number_integer() || !spec.contains("subjects") || !spec["subjects"].is_array() ||
      spec["subjects"].empty() || !spec.contains("configs") || !spec["configs"].is_array() ||
      !spec.contains("conditions") || !spec["conditions"].is_array())
    return nlohmann::json(nullptr);
  std::vector<std::string> subjects, configs, conditions;
  for (const auto& s : spec["subjects"])
    if (s.is_object() && s.contains("name") && s["name"].is_string()) subjects.push_back(s["name"].get<std::string>());
  for (const auto& c : spec["configs"])
    if (c.is_object() && c.contains("id") && c["id"].is_string()) configs.push_back(c["id"].get<std::string>());
  for (const auto& c : spec["conditions"])
    if (c.is_string()) conditions.push_back(c.get<std::string>());
  if (subjects.empty() || configs.empty() || conditions.empty()) return nlohmann::json(nullptr);
  NF_ASSIGN_OR_RETURN(const auto items, store.items());
  const int64_t per_cell = static_cast<int64_t>(items.size()) * spec["replicates"].get<int64_t>();
  std::map<std::tuple<std::string, std::string, std::string>, std::pair<int64_t, int64_t>> held;  // {stored, api}
  for (const auto& c : counts) {
    auto& h = held[{c.subject, c.config, c.condition}];
    h.first += c.count;
    if (c.status == "api_error") h.second += c.count;
  }
  int64_t stored = 0, api = 0, cells = 0, with_draws = 0;
  nlohmann::json empty = nlohmann::json::array();
  for (const auto& s : subjects)
    for (const auto& c : configs)
      for (const auto& k : conditions) {
        ++cells;
        const auto it = held.find({s, c, k});
        if (it == held.end() || it->second.first == 0) {
          empty.push_back({{"subject", s}, {"config", c}, {"condition", k}});
          continue;
        }
        ++with_draws;
        stored += std::min(it->second.first, per_cell);
        api += it->second.second;
      }
  const int64_t planned = cells * per_cell;
  return nlohmann::json{{"planned_draws", planned},
                        {"stored_draws", stored},
                        {"api_error_draws", api},
                        {"share_stored", planned > 0 ? nlohmann::json(static_cast<double>(stored) /
                                                                      static_cast<double>(planned))
                                                     : nlohmann::json(nullptr)},
                        {"partial", stored - api < planned},
                        {"cells_planned", cells},
                        {"cells_with_draws", with_draws},
                        {"cells_without_draws", std::move(empty)}};
}

std::string partial_plan_text(const nlohmann::json& plan) {
  if (!plan.is_object() || !plan.value("partial", false)) return "";
  const int64_t planned = plan.value("planned_draws", int64_t{0}), stored = plan.value("stored_draws", int64_t{0});
  std::string s = fmt::format("partial: {} of {} planned draws stored ({:.1f}%)", stored, planned,
                              planned > 0 ? 100.0 * static_cast<double>(stored) / static_cast<double>(planned) : 0.0);
  const size_t empty = plan.contains("cells_without_draws") && plan["cells_without_draws"].is_array()
                           ? plan["cells_without_draws"].size()
                           : 0;
  if (empty > 0)
    s += fmt::format("; {} of {} planned cells have no draws", empty, plan.value("cells_planned", int64_t{0}));
  const int64_t api = plan.value("api_error_draws", int64_t{0});
  if (api > 0)
    s += fmt::format("; {} of the stored draws are API errors (never answers), so {} of {} planned draws are answered "
                     "({:.1f}%)",
                     api, stored - api, planned,
                     planned > 0 ? 100.0 * static_cast<double>(stored - api) / static_cast<double>(planned) : 0.0);
  return s;
}

}  // namespace nf
