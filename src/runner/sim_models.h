// The simulated subjects of a study, served by name over HTTP (`noisefloor serve-sim
// --study`; docs/backends.md "serve-sim with the study's subjects"): the same study can
// then run its sim subjects in process (`backend: sim`) or against serve-sim (`backend:
// openai`, the same `model` names), and both see the same simulated models.
#pragma once

#include <string>

#include "sim/sim_server.h"
#include "spec/study.h"
#include "util/status.h"

namespace nf {

/// Every `backend: sim` subject of `study` (and every `backend: sim` judge of its panel)
/// as served model name -> SimParams::from_json(its `sim` block), exactly the params
/// make_backend gives it in process. `study_path` only names the file in errors.
/// Errors: InvalidArgument "<study_path>: no subject or judge has backend: sim (serve-sim
/// --study serves those)"; InvalidArgument naming both subjects when two share a model
/// name with different sim parameters (the server could not tell them apart); the
/// subject-prefixed error of SimParams::from_json.
Result<SimModels> served_sim_models(const Study& study, const std::string& study_path);

}  // namespace nf
