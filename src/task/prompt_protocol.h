// The fixed phrases of the agent tasks' prompts that the simulator (src/sim/) reads back:
// the task renders them, the sim recognises a prompt by them. They belong to the task
// (layer 4); the sim sits above it and includes this header (src/README.md).
#pragma once

#include <string_view>

namespace nf {

/// Opens every vignette-agent stage prompt (task/vignette_task.h; read by sim/sim_agent.h).
inline constexpr std::string_view kAgentPreamble = "You are an emergency clinical decision-support agent.";
/// Leads the list of JSON fields a stage prompt asks for (read by sim/sim_agent.h).
inline constexpr std::string_view kAgentFieldsLead = "Respond with only a JSON object with the fields: ";

/// Opens the first user message of a FHIR-agent run (task/fhir_agent_task.h; read by
/// sim/sim_fhir_agent.h).
inline constexpr std::string_view kFhirAgentPreamble =
    "You are an expert at using FHIR functions to help clinicians with their work.";

}  // namespace nf
