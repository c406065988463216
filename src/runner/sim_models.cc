#include "runner/sim_models.h"

#include <map>
#include <vector>

#include <fmt/format.h>

namespace nf {

Result<SimModels> served_sim_models(const Study& study, const std::string& study_path) {
  std::vector<const SubjectSpec*> specs;
  for (const auto& s : study.subjects) specs.push_back(&s);
  if (study.judge.enabled)
    for (const auto& j : study.judge.panel) specs.push_back(&j);
  SimModels models;
  std::map<std::string, std::string> owner;  // model -> the subject that declared it first
  for (const SubjectSpec* s : specs) {
    if (s->backend != "sim") continue;
    auto params = SimParams::from_json(s->sim);
    if (!params.ok()) return params.status().with_context(fmt::format("subject '{}': sim", s->name));
    const auto [it, inserted] = models.emplace(s->model, *params);
    if (inserted) {
      owner[s->model] = s->name;
    } else if (it->second.to_json() != params->to_json()) {
      return InvalidArgument(fmt::format(
          "{}: subjects '{}' and '{}' both have model '{}' but different sim parameters; serve-sim answers by model "
          "name, so give them different model names",
          study_path, owner[s->model], s->name, s->model));
    }
  }
  if (models.empty())
    return InvalidArgument(
        fmt::format("{}: no subject or judge has backend: sim (serve-sim --study serves those)", study_path));
  return models;
}

}  // namespace nf
