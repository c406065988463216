// The GRID card of seed 003 §7 ("Disclosure"): resolved axis values, point scores with
// their neighbourhoods, verdict stability, ranking stability and provenance pins, as
// grid_card.json beside results.json; and the envelope section of report.md.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace nf {

/// The GRID card of `results` (the object analyze_store returns) from its `envelope`
/// section: {schema "noisefloor.grid_card/1", study {name, hash}, tool_version, outcome,
/// axes {axis: [values]}, cells [{subject, config, score, n, parse_rate, neighbourhood
/// {n, min, max}}], verdicts [{a, b, n_configs, n_plus, n_minus, n_ties, rho_flip,
/// no_strict_reversal, majority, bootstrap range of rho_flip}], ranking {per_config,
/// tau_r, mismatch_rate, mismatch_null, reachable, possible, bootstrap ranges}, pins
/// {served_models, requested_models, datasets, study_hash, tool_version}}. A null json
/// when results has no envelope section or it was skipped. Pure function of its input.
nlohmann::json grid_card(const nlohmann::json& results);

/// The body of report.md's envelope section for a section `f` of results.json that is not
/// skipped (appended to `md`; render_markdown writes the heading and a skipped section):
/// per-subject dispersion, the pairwise verdict table with rho_flip and the certificate,
/// the reachable orderings, tau_R and the mismatch rate beside its null, the variance
/// partition and the parse-clean rerun; with scoring paths over stored completions
/// (envelope `scorers`), the compliance per stratum and the scorer-disagreement tables.
void envelope_markdown(std::string& md, const nlohmann::json& f);

}  // namespace nf
