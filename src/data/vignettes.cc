#include "data/vignettes.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "util/file.h"
#include "util/json_depth.h"

namespace nf {

namespace {

const std::vector<std::string> kStageOrder{"triage", "order", "results", "reassess", "prescribe", "document"};

Status bad(const std::string& source, const std::string& key, const std::string& problem) {
  return InvalidArgument(fmt::format("{}: {}: {}", source, key, problem));
}

Result<std::string> get_string(const nlohmann::json& obj, const std::string& field, const std::string& source,
                               const std::string& key) {
  auto it = obj.find(field);
  if (it == obj.end()) return bad(source, key + "." + field, "missing");
  if (!it->is_string()) return bad(source, key + "." + field, "expected a string");
  return it->get<std::string>();
}

Result<VignetteCondition> parse_condition(const nlohmann::json& c, bool control, const std::string& source,
                                          const std::string& key) {
  if (!c.is_object()) return bad(source, key, "expected an object");
  VignetteCondition out;
  NF_ASSIGN_OR_RETURN(out.id, get_string(c, "id", source, key));
  NF_ASSIGN_OR_RETURN(out.descriptor, get_string(c, "descriptor", source, key));
  out.axis = c.value("axis", "");
  out.is_reference = c.value("is_reference", false);
  out.is_control = control;
  if (!c.contains("attributes") || !c["attributes"].is_object()) return bad(source, key + ".attributes", "missing");
  out.attributes = c["attributes"];
  if (out.id.empty()) return bad(source, key + ".id", "empty");
  return out;
}

}  // namespace

Result<VignetteSet> parse_vignettes_json(std::string_view text, const std::string& source) {
  NF_RETURN_IF_ERROR(check_json_depth(text, source));
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) return bad(source, "json", "malformed JSON");
  if (!j.is_object()) return bad(source, "json", "expected an object at the top level");
  VignetteSet out;

  // Vignettes.
  if (!j.contains("vignettes") || !j["vignettes"].is_array() || j["vignettes"].empty())
    return bad(source, "vignettes", "expected a non-empty array");
  std::set<std::string> ids;
  for (size_t i = 0; i < j["vignettes"].size(); ++i) {
    const auto& v = j["vignettes"][i];
    const std::string key = fmt::format("vignettes[{}]", i);
    if (!v.is_object()) return bad(source, key, "expected an object");
    Vignette vg;
    NF_ASSIGN_OR_RETURN(vg.id, get_string(v, "vignette_id", source, key));
    if (vg.id.empty()) return bad(source, key + ".vignette_id", "empty");
    if (!ids.insert(vg.id).second) return bad(source, key + ".vignette_id", fmt::format("duplicate id '{}'", vg.id));
    NF_ASSIGN_OR_RETURN(vg.clinical_core, get_string(v, "clinical_core", source, key));
    if (vg.clinical_core.empty()) return bad(source, key + ".clinical_core", "empty");
    vg.index = v.value("index", static_cast<int>(i));
    vg.domain = v.value("domain", "");
    if (v.contains("ambiguity") && v["ambiguity"].is_string()) vg.ambiguity = v["ambiguity"].get<std::string>();
    if (!v.contains("tool_results") || !v["tool_results"].is_object())
      return bad(source, key + ".tool_results", "expected an object of fixture values");
    for (const auto& [k, val] : v["tool_results"].items()) {
      if (!val.is_string()) return bad(source, key + ".tool_results." + k, "expected a string");
      vg.tool_results.emplace_back(k, val.get<std::string>());
    }
    std::sort(vg.tool_results.begin(), vg.tool_results.end());
    if (v.contains("acceptable") && v["acceptable"].is_object()) vg.acceptable = v["acceptable"];
    out.vignettes.push_back(std::move(vg));
  }
  std::sort(out.vignettes.begin(), out.vignettes.end(),
            [](const Vignette& a, const Vignette& b) { return a.id < b.id; });

  // Descriptor.
  if (!j.contains("descriptor") || !j["descriptor"].is_object()) return bad(source, "descriptor", "missing");
  NF_ASSIGN_OR_RETURN(out.descriptor_template, get_string(j["descriptor"], "template", source, "descriptor"));
  if (j["descriptor"].contains("language_slot") && j["descriptor"]["language_slot"].is_object()) {
    out.lep_false = j["descriptor"]["language_slot"].value("lep=False", out.lep_false);
    out.lep_true = j["descriptor"]["language_slot"].value("lep=True", out.lep_true);
  }

  // Conditions.
  std::set<std::string> cids;
  int references = 0;
  for (const char* list : {"conditions_standard_12", "control_conditions"}) {
    const bool control = std::string_view(list) == "control_conditions";
    if (!j.contains(list) || !j[list].is_array() || j[list].empty())
      return bad(source, list, "expected a non-empty array");
    for (size_t i = 0; i < j[list].size(); ++i) {
      NF_ASSIGN_OR_RETURN(auto c, parse_condition(j[list][i], control, source, fmt::format("{}[{}]", list, i)));
      if (!cids.insert(c.id).second) return bad(source, list, fmt::format("duplicate condition id '{}'", c.id));
      references += c.is_reference ? 1 : 0;
      out.conditions.push_back(std::move(c));
    }
  }
  if (references != 1)
    return bad(source, "conditions_standard_12",
               fmt::format("expected exactly one is_reference, found {}", references));

  // Trajectory.
  if (!j.contains("trajectory") || !j["trajectory"].contains("steps") || !j["trajectory"]["steps"].is_array())
    return bad(source, "trajectory.steps", "missing");
  const auto& steps = j["trajectory"]["steps"];
  if (steps.size() != kStageOrder.size())
    return bad(source, "trajectory.steps",
               fmt::format("expected {} stages, found {}", kStageOrder.size(), steps.size()));
  for (size_t i = 0; i < steps.size(); ++i) {
    const std::string key = fmt::format("trajectory.steps[{}]", i);
    VignetteStage s;
    NF_ASSIGN_OR_RETURN(s.step, get_string(steps[i], "step", source, key));
    if (s.step != kStageOrder[i])
      return bad(source, key + ".step", fmt::format("expected '{}', found '{}'", kStageOrder[i], s.step));
    s.model_call = steps[i].value("model_call", true);
    if ((s.step == "results") == s.model_call)
      return bad(source, key + ".model_call", "only the results stage is an environment lookup");
    if (steps[i].contains("instruction") && steps[i]["instruction"].is_string())
      s.instruction = steps[i]["instruction"].get<std::string>();
    if (s.model_call && s.instruction.empty()) return bad(source, key + ".instruction", "missing");
    if (steps[i].contains("emits") && steps[i]["emits"].is_object())
      for (const auto& [k, v] : steps[i]["emits"].items())
        s.emits.emplace_back(k, v.is_string() ? v.get<std::string>() : "");
    out.stages.push_back(std::move(s));
  }

  // Optional sections.
  if (j.contains("prompt_rendering") && j["prompt_rendering"].is_object()) {
    const auto& pr = j["prompt_rendering"];
    const std::string which = pr.value("floor16_scaffold", "C0");
    if (pr.contains("scaffolds") && pr["scaffolds"].contains(which) && pr["scaffolds"][which].is_string())
      out.scaffold_text = pr["scaffolds"][which].get<std::string>();
  }
  if (j.contains("fixture_matching") && j["fixture_matching"].is_object()) {
    const auto& fm = j["fixture_matching"];
    out.unresolved_value = fm.value("unresolved_value", out.unresolved_value);
    if (fm.contains("declined_tokens") && fm["declined_tokens"].is_array())
      for (const auto& t : fm["declined_tokens"])
        if (t.is_string()) out.declined_tokens.push_back(t.get<std::string>());
  }
  if (j.contains("floor_projections") && j["floor_projections"].is_object())
    out.floor_projections = j["floor_projections"];
  if (j.contains("confounded_registry") && j["confounded_registry"].is_object())
    out.confounded_registry = j["confounded_registry"];
  return out;
}

Result<VignetteSet> read_vignettes_json(const std::string& path) {
  NF_ASSIGN_OR_RETURN(auto text, read_file(path));
  return parse_vignettes_json(text, path);
}

}  // namespace nf
