#include "runner/import_plan.h"

#include <algorithm>

#include <fmt/format.h>

namespace nf {

namespace {

// "a, b and c" for up to 5 names, else the first 5 and how many more.
std::string list(const std::vector<std::string>& names) {
  std::string out;
  const size_t shown = std::min<size_t>(names.size(), 5);
  for (size_t i = 0; i < shown; ++i) out += (i == 0 ? "" : ", ") + ("'" + names[i] + "'");
  if (names.size() > shown) out += fmt::format(" and {} more", names.size() - shown);
  return out;
}

}  // namespace

Result<std::optional<StoredPlan>> StoredPlan::of(Store& store) {
  auto rec = store.get_study();
  if (!rec.ok()) {
    if (rec.status().code() == StatusCode::kNotFound) return std::optional<StoredPlan>();
    return rec.status();
  }
  const nlohmann::json& spec = rec->spec;
  if (!spec.is_object() || spec.value("imported", false)) return std::optional<StoredPlan>();
  auto subjects = spec.find("subjects"), configs = spec.find("configs"), conditions = spec.find("conditions"),
       replicates = spec.find("replicates");
  if (subjects == spec.end() || !subjects->is_array() || subjects->empty() || configs == spec.end() ||
      !configs->is_array() || conditions == spec.end() || !conditions->is_array() || replicates == spec.end() ||
      !replicates->is_number_integer())
    return std::optional<StoredPlan>();
  StoredPlan p;
  p.study_ = rec->name;
  p.store_ = store.path();
  for (const auto& s : *subjects)
    if (s.is_object() && s.contains("name") && s["name"].is_string()) p.subjects_.push_back(s["name"].get<std::string>());
  for (const auto& c : *configs)
    if (c.is_object() && c.contains("id") && c["id"].is_string()) p.configs_.push_back(c["id"].get<std::string>());
  for (const auto& c : *conditions)
    if (c.is_string()) p.conditions_.push_back(c.get<std::string>());
  p.replicates_ = replicates->get<int>();
  // A record this build cannot read as a plan is not kept to (better no check than a false refusal).
  if (p.subjects_.size() != subjects->size() || p.configs_.size() != configs->size() || p.configs_.empty() ||
      p.conditions_.size() != conditions->size() || p.conditions_.empty() || p.replicates_ < 1)
    return std::optional<StoredPlan>();
  NF_ASSIGN_OR_RETURN(auto items, store.items());
  if (items.empty()) return std::optional<StoredPlan>();
  for (const auto& it : items) p.items_.insert(it.item);
  p.subject_set_.insert(p.subjects_.begin(), p.subjects_.end());
  p.config_set_.insert(p.configs_.begin(), p.configs_.end());
  p.condition_set_.insert(p.conditions_.begin(), p.conditions_.end());
  return std::optional<StoredPlan>(std::move(p));
}

int64_t StoredPlan::size() const {
  return static_cast<int64_t>(subjects_.size() * configs_.size() * conditions_.size() * items_.size()) * replicates_;
}

Status StoredPlan::check(const DrawKey& key, const std::string& where) const {
  std::string field, value, has;
  if (!subject_set_.count(key.subject)) {
    field = "subject", value = "'" + key.subject + "'", has = "its subjects are " + list(subjects_);
  } else if (!config_set_.count(key.config)) {
    field = "config", value = "'" + key.config + "'", has = "its configs are " + list(configs_);
  } else if (!condition_set_.count(key.condition)) {
    field = "condition", value = "'" + key.condition + "'", has = "its conditions are " + list(conditions_);
  } else if (!items_.count(key.item)) {
    field = "item", value = "'" + key.item + "'", has = fmt::format("it has {} items, and this is not one", items_.size());
  } else if (key.replicate < 0 || key.replicate >= replicates_) {
    field = "replicate", value = std::to_string(key.replicate),
    has = fmt::format("its replicates are 0..{}", replicates_ - 1);
  } else {
    return Status::Ok();
  }
  return InvalidArgument(fmt::format(
      "{}: {}: {} is not in the plan of study '{}' recorded in store {} ({}; {} planned draws). The store's "
      "coverage counts draws against that plan, so draws beyond it are refused: import them into a store of their "
      "own (--store OTHER.sqlite), or extend the study file and `noisefloor run` it; nothing was imported",
      where, field, value, study_, store_, has, size()));
}

}  // namespace nf
