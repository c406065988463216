// The BBQ bias score of a study's own draws (Parrish et al. 2022 §4; data/bbq.h), per
// subject x config x condition and context condition. Layer 5.
#pragma once

#include <nlohmann/json.hpp>

#include "util/status.h"

namespace nf {

struct AnalysisContext;

/// The registry runner (metrics/registry.cc; no options): reads the BBQ metadata the
/// `bbq` dataset format stores with each item (context_condition, question_polarity,
/// unknown_letter, target_letter) and each draw's `choice` outcome (the ORIGINAL letter),
/// one draw per item (the lowest replicate), and returns rows {subject, config, condition,
/// context_condition, items, answered, correct, non_unknown, biased, accuracy, score}
/// (data/bbq.h bbq_bias_score: s_DIS on disambiguated, s_AMB on ambiguous contexts).
/// `skipped` when the store has no BBQ items.
Result<nlohmann::json> run_bbq_bias(AnalysisContext& ctx, const nlohmann::json& options);

}  // namespace nf
