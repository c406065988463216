// What a floor row rests on: items that contributed pairs / items planned, valid draws /
// planned draws (issue 12 item 4). The plan comes from the study recorded in the store;
// an imported store records none, and the rows say so.
#pragma once

#include <nlohmann/json.hpp>

#include "metrics/registry.h"
#include "util/status.h"

namespace nf {

/// Fills `coverage.items_planned`, `coverage.draws_planned` and `coverage.planned_note` of
/// every floor row in `rows` (floor_row_to_json output). With a study in the store:
/// items planned = the items the run stored (its dataset after any `items:` limit), draws
/// planned = items planned x study `replicates` (one draw per item and replicate per
/// subject x config x condition; each draw gives every outcome). Without one (imported
/// draws: the study record says `imported`): both stay null and planned_note says the plan is unknown. Also sets
/// `coverage.items_without_pairs` = items planned (or observed, when the plan is unknown)
/// minus items that contributed pairs: items with 0 or 1 valid draws, which count neither
/// as unanimous ("stable") nor as disagreeing. Errors: the store's read errors.
Status add_planned_coverage(nlohmann::json& rows, const AnalysisContext& ctx);

/// How much of the study's plan the store holds (issue 37, tester s9 F9): results.json
/// `plan` = {planned_draws, stored_draws, api_error_draws, share_stored, partial,
/// cells_planned, cells_with_draws, cells_without_draws: [{subject, config, condition}]}.
/// The plan is the study recorded in the store: subjects x configs x conditions cells, each
/// with items x replicates draws (runner/runner.h plan_draws), items = those the run stored.
/// `counts` are the store's draws by cell and status (every stored draw counts, api_error
/// included; a cell outside the plan is ignored); `partial` is true when fewer than the
/// planned draws are answered (stored minus api_error: an API failure is no answer). Returns null when the store records no
/// plan: no study, an imported study, or a study without subjects (judging only).
/// Errors: the store's read errors.
Result<nlohmann::json> plan_completeness(const StudyRecord& study, Store& store,
                                         const std::vector<StatusCount>& counts);

/// "partial: 100 of 1152 planned draws stored (8.7%); 7 of 8 planned cells have no draws"
/// (and "; K of the stored draws are API errors (never answers), so A of M planned draws
/// are answered (y%)" when there are some) for a `plan` whose `partial` is true, else "".
std::string partial_plan_text(const nlohmann::json& plan);

}  // namespace nf
