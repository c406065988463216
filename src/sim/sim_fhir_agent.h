// The simulated FHIR agent behind the `sim` backend (seed 002 §4, App. B): it answers the
// MedAgentBench-style prompt of task/fhir_agent_task.h with GET / POST / FINISH actions
// drawn from a known policy, so tests know the truth the rerun metrics must recover.
//
// Protocol (rendered by the task, read here): the first user message starts with
// kFhirAgentPreamble, lists the functions as JSON whose names hold the base URL
// ("GET http://.../fhir/Observation"), and ends with "Context: ..." and "Question: ...".
// Every later user message is the environment's answer to the previous action.
//
// Policy. The family is read from the question (blood pressure record -> task3,
// magnesium -> task5, referral -> task8, potassium -> task9, HbA1C -> task10) and the
// patient from its MRN (S + 7 digits). The correct run: for a lab family, one GET of the
// latest value (task5 within the last 24 h; `_sort=-date&_count=1`), then the orders the
// task text prescribes given that value (the reference grader's rules, task/fhir_grader.h),
// one POST per turn, then FINISH with the value read ([-1] when none; [] for task3/8).
// Noise, drawn once per run from (simulator seed, model, first user message, request
// seed, temperature), in this order:
//   omission      the run posts nothing (goes to FINISH after its GETs);
//   extra_get     the run first GETs Patient?identifier=MRN;
//   per order:    misrouting (the POST goes to the base URL instead of its typed
//                 endpoint) and payload_noise (one clinical field changes: the dose, the
//                 code or the recorded value, one of two variants chosen at random).
// Each probability p applies as p * min(1, T) at temperature T (so T = 0 is the correct,
// deterministic run), unless scale_with_temperature is false. Configuration rides in the
// request body as `sim_fhir_agent` (ChatRequest::extra_body), in process and behind
// serve-sim alike:
//   {"omission": 0.3, "misrouting": 0.1, "payload_noise": 0.0, "extra_get": 0.0,
//    "scale_with_temperature": true, "garbage": 0.0}
// `garbage` is the per-turn probability of a reply in no protocol form (a parse error).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "backend/backend.h"
#include "task/prompt_protocol.h"  // kFhirAgentPreamble
#include "util/status.h"

namespace nf {

struct SimFhirAgentParams {
  double omission = 0.0;       // per run, in [0, 1]
  double misrouting = 0.0;     // per order, in [0, 1]
  double payload_noise = 0.0;  // per order, in [0, 1]
  double extra_get = 0.0;      // per run, in [0, 1]
  double garbage = 0.0;        // per turn, in [0, 1]
  bool scale_with_temperature = true;

  /// Reads the `sim_fhir_agent` object (every key optional). Errors: InvalidArgument
  /// naming an unknown key or a value outside [0, 1].
  static Result<SimFhirAgentParams> from_json(const nlohmann::json& j);
  /// p * min(1, T) (or p when scale_with_temperature is false).
  double effective(double p, double temperature) const;
};

/// The hook of SimBackend::complete: nullopt when the first user message is not a FHIR
/// agent prompt; otherwise the next action, or InvalidArgument for a bad
/// `sim_fhir_agent` object.
std::optional<Result<std::string>> sim_fhir_agent_reply(const ChatRequest& request, uint64_t sim_seed);

}  // namespace nf
