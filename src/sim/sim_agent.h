// The simulated clinical agent behind the `sim` backend (seed 000 §III.A, §III.B, S12):
// it answers the stage prompts of task/vignette_task.h with a JSON action drawn from a
// known stochastic policy, so tests can check that the fairness analyses recover truth.
//
// Prompt protocol (rendered by task/vignette_task.cc; parsed here): the last user message
// starts with kAgentPreamble, holds a "Patient: <descriptor>" line (absent for an empty
// descriptor), a "Presentation: <clinical core>" line, and ends with a paragraph
// "... Respond with only a JSON object with the fields: f1, f2, ...". The fields name the
// stage: esi_acuity -> triage, orders -> order, admit -> reassess, analgesia_tier ->
// prescribe, referral -> document (any order).
//
// Policy: for each (model, clinical core, action) the reference probability of the
// action being taken is p0 in {q, 1 - q} (the side chosen by a hash), q = (1 -
// sqrt(1 - 2F)) / 2, so two independent draws disagree with probability 2 p0 (1 - p0) = F,
// the configured floor of that action at temperature 1. A descriptor effect adds `shift`
// to p0 (clamped to [0, 1]) when the Patient line contains `match`: pattern "uniform"
// shifts every vignette the same way, "opposing" shifts half the vignettes (by hash) by
// +shift and the other half by -shift. Temperature T: logit(p_T) = logit(p) / T; T = 0
// takes the argmax (p > 0.5). The six actions are the floor projections high_acuity
// (ESI 2 vs 3), admit, escalate_icu, any_opioid (tier 2 vs 1), cs_caution, referral.
//
// Configuration rides in the request body as `sim_agent` (ChatRequest::extra_body), so it
// works in process and behind serve-sim alike:
//   {"floor": 0.1, "floors": {"admit": 0.2}, "effects": [{"match": "Black", "action":
//    "admit", "shift": 0.1, "pattern": "uniform"}], "fault_rate": 0.0,
//    "faults": ["empty", "prose", "missing_field", "out_of_range"]}
// A fault replaces the reply with the chosen malformed form (prose = the valid JSON
// inside prose, which the task extracts and labels).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backend/backend.h"
#include "task/prompt_protocol.h"  // kAgentPreamble, kAgentFieldsLead
#include "util/status.h"

namespace nf {

/// The six actions of the floor study (data README floor_projections), in that order.
const std::vector<std::string>& agent_actions();

struct SimAgentEffect {
  std::string match;   // substring of the Patient line
  std::string action;  // one of agent_actions()
  double shift = 0.0;  // in [-1, 1], probability scale
  bool opposing = false;
};

struct SimAgentParams {
  double floor = 0.1;                                  // in [0, 0.5]; default 0.1
  std::vector<std::pair<std::string, double>> floors;  // per-action overrides
  std::vector<SimAgentEffect> effects;
  double fault_rate = 0.0;  // in [0, 1]
  std::vector<std::string> faults{"empty", "prose", "missing_field", "out_of_range"};

  /// Reads the `sim_agent` object (every key optional). Errors: InvalidArgument naming
  /// an unknown key, action or fault, or an out-of-range value.
  static Result<SimAgentParams> from_json(const nlohmann::json& j);
  double floor_of(std::string_view action) const;
};

/// A parsed stage prompt.
struct AgentPrompt {
  std::string stage;
  std::string descriptor;  // "" when there is no Patient line
  std::string clinical_core;
  std::vector<std::string> fields;
};

/// Parses the protocol above; false when `text` is not a stage prompt.
bool parse_agent_prompt(std::string_view text, AgentPrompt& out);

/// The true probability that `action` is taken for (model, clinical core, descriptor) at
/// `temperature` (>= 0), under `params` and the simulator seed `sim_seed`.
double sim_agent_probability(const SimAgentParams& params, uint64_t sim_seed, std::string_view model,
                             std::string_view clinical_core, std::string_view descriptor, std::string_view action,
                             double temperature);

/// The hook of SimBackend::complete: nullopt when the last user message `user_text` is
/// not a stage prompt; otherwise the reply content drawn with the stream seeded by
/// `draw_seed` (a per-request random value of the simulator), or InvalidArgument for a
/// bad `sim_agent` object in request.extra_body.
std::optional<Result<std::string>> sim_agent_reply(const ChatRequest& request, std::string_view user_text,
                                                   uint64_t sim_seed, uint64_t draw_seed);

}  // namespace nf
