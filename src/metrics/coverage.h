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

}  // namespace nf
