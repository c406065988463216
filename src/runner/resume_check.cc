// See resume_check.h.
#include "runner/resume_check.h"

#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "runner/runner.h"

namespace nf {
namespace {

// The subject fields that change what a draw asks or how it is answered (runner.cc
// subject_to_json); the others are operational.
constexpr const char* kSubjectDrawFields[] = {"backend", "model", "sim", "extra_body", "logprobs"};

std::string shown(const nlohmann::json& v) {
  std::string s = v.is_string() ? v.get<std::string>() : v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (s.size() > 80) s = s.substr(0, 77) + "...";
  return v.is_string() ? "'" + s + "'" : s;
}

// The first difference between two JSON values: the field (a dotted path inside
// objects, `top` for a difference at the top), the old and the new value; nullopt when
// equal. At the top level a key the old record lacks is not a difference (an older store
// recorded fewer fields); below it, a key on either side only is one.
struct Difference {
  std::string field, old_value, new_value;
};
std::optional<Difference> first_difference(const nlohmann::json& old_v, const nlohmann::json& new_v,
                                           const std::string& where, const std::string& top) {
  if (old_v == new_v) return std::nullopt;
  if (old_v.is_object() && new_v.is_object()) {
    for (const auto& [k, ov] : old_v.items()) {
      const std::string sub = where.empty() ? k : where + "." + k;
      auto it = new_v.find(k);
      if (it == new_v.end()) return Difference{sub, shown(ov), "(absent)"};
      if (auto d = first_difference(ov, *it, sub, top)) return d;
    }
    if (where.empty()) return std::nullopt;  // only top-level keys the old record lacks
    for (const auto& [k, nv] : new_v.items())
      if (!old_v.contains(k)) return Difference{where + "." + k, "(absent)", shown(nv)};
  }
  return Difference{where.empty() ? top : where, shown(old_v), shown(new_v)};
}

Status refuse(const Store& store, int64_t n, const std::string& what, const Difference& d) {
  return FailedPrecondition(fmt::format(
      "{}: the store holds {} finished draw{} of {} made with {} {}; the study now says {}: resuming would "
      "count them as done under the new setting (or mix them with new draws). Write to a new store (--out DIR "
      "or --store PATH), or draw them all again with --refresh",
      store.path(), n, n == 1 ? "" : "s", what, d.field, d.old_value, d.new_value));
}

}  // namespace

Status check_stored_draws_match(const Study& study, const std::vector<TaskItem>& items,
                                const std::vector<Config>& configs, Store& store) {
  auto rec = store.get_study();
  if (!rec.ok()) return rec.status().code() == StatusCode::kNotFound ? Status::Ok() : rec.status();
  if (rec->hash.empty()) return Status::Ok();  // written by an import: its draws have no study

  NF_ASSIGN_OR_RETURN(auto counts, store.status_counts());
  int64_t total = 0;
  std::map<std::string, int64_t> by_subject, by_config;
  for (const auto& c : counts) {
    if (c.status == "api_error") continue;
    total += c.count;
    by_subject[c.subject] += c.count;
    by_config[c.config] += c.count;
  }
  if (total == 0) return Status::Ok();

  const nlohmann::json& old_spec = rec->spec;
  if (static_cast<uint64_t>(rec->seed) != study.seed)
    return refuse(store, total, "this study", {"study seed", std::to_string(rec->seed), std::to_string(study.seed)});
  if (auto t = old_spec.find("task"); t != old_spec.end() && t->is_string() && *t != study.task)
    return refuse(store, total, "this study", {"task", shown(*t), shown(study.task)});

  NF_ASSIGN_OR_RETURN(auto subject_specs, store.subject_specs());
  const nlohmann::json new_study = study_to_json(study);
  for (const auto& sub : new_study["subjects"]) {
    const std::string name = sub.value("name", "");
    auto n = by_subject.find(name);
    auto old_sub = subject_specs.find(name);
    if (n == by_subject.end() || old_sub == subject_specs.end()) continue;
    for (const char* field : kSubjectDrawFields) {
      auto ov = old_sub->second.find(field);
      if (ov == old_sub->second.end()) continue;
      if (auto d = first_difference(*ov, sub.value(field, nlohmann::json()), field, field))
        return refuse(store, n->second, fmt::format("subject '{}'", name), *d);
    }
  }

  if (auto oc = old_spec.find("configs"); oc != old_spec.end() && oc->is_array()) {
    std::unordered_map<std::string, const nlohmann::json*> old_configs;
    for (const auto& c : *oc)
      if (c.is_object() && c.contains("id") && c["id"].is_string()) old_configs[c["id"].get<std::string>()] = &c;
    for (const auto& c : configs) {
      auto n = by_config.find(c.id);
      auto old_c = old_configs.find(c.id);
      if (n == by_config.end() || old_c == old_configs.end()) continue;
      if (auto d = first_difference(*old_c->second, c.to_json(), "", "spec"))
        return refuse(store, n->second, fmt::format("config '{}'", c.id), *d);
    }
  }

  // Items: only when some item's data changed are the finished keys read (the common
  // resume has none).
  NF_ASSIGN_OR_RETURN(auto stored_items, store.items());
  std::unordered_map<std::string, const nlohmann::json*> stored;
  stored.reserve(stored_items.size());
  for (const auto& r : stored_items) stored[r.item] = &r.data;
  std::vector<std::pair<const TaskItem*, Difference>> changed;
  for (const auto& it : items) {
    auto s = stored.find(it.id);
    if (s == stored.end()) continue;
    if (auto d = first_difference(*s->second, it.data, "", "data")) changed.emplace_back(&it, *d);
  }
  if (changed.empty()) return Status::Ok();
  NF_ASSIGN_OR_RETURN(auto done, store.finished_keys());
  for (const auto& [it, diff] : changed) {
    int64_t n = 0;
    for (const auto& sub : study.subjects)
      for (const auto& c : configs)
        for (const auto& cond : study.conditions)
          for (int r = 0; r < study.replicates; ++r)
            n += done.count(DrawKey{sub.name, it->id, cond, c.id, r}.to_string());
    if (n > 0) return refuse(store, n, fmt::format("item '{}'", it->id), diff);
  }
  return Status::Ok();
}

Status check_store_holds_this_study(const Study& study, Store& store) {
  auto rec = store.get_study();
  if (!rec.ok()) return rec.status().code() == StatusCode::kNotFound ? Status::Ok() : rec.status();
  const bool imported = rec->hash.empty();
  if (!imported && rec->name == study.name) return Status::Ok();  // the common resume: no count
  NF_ASSIGN_OR_RETURN(int64_t n, store.draw_count());
  if (n == 0) return Status::Ok();
  if (imported)
    return FailedPrecondition(fmt::format(
        "{}: the store holds {} draw{} written by an import (`noisefloor import ...`), not made by a study: "
        "running study '{}' into it would mix its draws with them, and the report would count both as one study. "
        "Write to a new store (--out DIR or --store PATH)",
        store.path(), n, n == 1 ? "" : "s", study.name));
  if (rec->name != study.name)
    return FailedPrecondition(fmt::format(
        "{}: the store holds {} draw{} of another study, '{}' (this one is '{}'): running it into that store "
        "would mix the two studies, with --refresh too. Write to a new store (--out DIR or --store PATH); if "
        "this is the same study renamed, put back `name: {}`",
        store.path(), n, n == 1 ? "" : "s", rec->name, study.name, rec->name));
  return Status::Ok();
}

}  // namespace nf
