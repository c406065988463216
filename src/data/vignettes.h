// Reader for the FairMedAgent vignette format (seed 000 §III.A, S3, S10): the released
// floor-study file ../shared/data/fairmedagent-floor16/vignettes.json and the project's own
// sample data/sample-vignettes.json share it. See that directory's README.md.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/status.h"

namespace nf {

/// One trajectory stage (`trajectory.steps[]`): its name, whether it is a model call,
/// the fields it emits (name -> the file's description, e.g. "integer ... [required]")
/// and the instruction text (empty for the environment stage `results`).
struct VignetteStage {
  std::string step;
  bool model_call = true;
  std::vector<std::pair<std::string, std::string>> emits;  // file order
  std::string instruction;
};

/// One descriptor condition (`conditions_standard_12[]` or `control_conditions[]`).
struct VignetteCondition {
  std::string id;
  std::string descriptor;  // the exact string rendered on the "Patient:" line
  std::string axis;        // "reference", "race/ethnicity", ..., "control: ..."
  bool is_reference = false;
  bool is_control = false;
  nlohmann::json attributes;  // age, race, sex, insurance, lep (+ control, control_token)
};

/// One vignette (`vignettes[]`). `tool_results` is sorted by key (fixture lookup order).
struct Vignette {
  std::string id;
  int index = 0;
  std::string domain;
  std::string ambiguity;  // "" when the file has null
  std::string clinical_core;
  std::vector<std::pair<std::string, std::string>> tool_results;
  nlohmann::json acceptable = nlohmann::json::object();
};

/// The whole file, validated.
struct VignetteSet {
  std::vector<Vignette> vignettes;            // sorted by id (floor_study_order rule)
  std::vector<VignetteCondition> conditions;  // the standard conditions, then controls
  std::string descriptor_template;            // "{age}-year-old {race} {sex}, ..."
  std::string lep_false = "full English";     // descriptor.language_slot
  std::string lep_true = "limited English";
  std::vector<VignetteStage> stages;               // triage, order, results, reassess, ...
  std::string scaffold_text = "Decide directly.";  // prompt_rendering.scaffolds[floor16_scaffold]
  std::string unresolved_value = "pending / not resulted";
  std::vector<std::string> declined_tokens;  // fixture_matching.declined_tokens
  nlohmann::json floor_projections = nlohmann::json::object();
  nlohmann::json confounded_registry = nlohmann::json::object();

  /// The condition / stage with that id, or nullptr (inline: header-only for layers
  /// that do not link nf_data).
  const VignetteCondition* find_condition(std::string_view id) const {
    for (const auto& c : conditions)
      if (c.id == id) return &c;
    return nullptr;
  }
  const VignetteStage* find_stage(std::string_view step) const {
    for (const auto& s : stages)
      if (s.step == step) return &s;
    return nullptr;
  }
};

/// Parses vignette-format JSON text. `source` names the file in messages.
/// Required: `vignettes` (non-empty; each with string vignette_id, clinical_core and an
/// object tool_results of string values; unique ids), `descriptor.template`,
/// `conditions_standard_12` (exactly one is_reference), `control_conditions`,
/// `trajectory.steps` (the six stages triage, order, results, reassess, prescribe,
/// document in that order, results without a model call). Optional with defaults:
/// prompt_rendering scaffolds (C0 "Decide directly."), fixture_matching
/// (unresolved "pending / not resulted", no declined tokens), floor_projections,
/// confounded_registry ({}).
/// Errors: InvalidArgument "source: key: problem" for malformed JSON, missing or
/// mistyped keys, duplicate vignette or condition ids, a wrong stage order.
Result<VignetteSet> parse_vignettes_json(std::string_view text, const std::string& source);

/// Reads and parses `path`. NotFound if the file is missing.
Result<VignetteSet> read_vignettes_json(const std::string& path);

}  // namespace nf
