// Study planning: vignettes needed to observe enough discordant pairs. Layer 1.
#pragma once

#include <cstdint>

#include "util/status.h"

namespace nf::stats {

/// Expected sample size to reach a target number of discordant pairs.
struct VignettePlan {
  double pairs_per_vignette = 0.0;  // expected discordant pairs per vignette = floor * d^2
  double expected_vignettes = 0.0;  // target / pairs_per_vignette (unrounded)
  int64_t vignettes = 0;            // ceil of expected_vignettes
};

/// Expected number of vignettes to reach `target_pairs` discordant pairs under no effect
/// (seed 000 S2 "Full sample-size derivation"). With d draws per condition, a vignette
/// gives d * d reference-vs-counterfactual pairs, each discordant with probability
/// `floor` (the instability floor: under no effect the expected flip rate equals the
/// floor, seed 000 §III.B), so E[pairs per vignette] = floor * d^2 and
/// V = ceil(target / (floor * d^2)); the ceiling ignores a relative excess below 1e-9 so
/// 25 / (16/720) = 1125 is not rounded up by floating-point error. Reproduces the
/// published 289 (pooled floor 374/4320), 140 (cs_caution 129/720) and 1,125
/// (escalate_icu 16/720) for 25 pairs and d = 1. Expected counts, not power.
/// Errors: InvalidArgument if floor is outside (0, 1], target_pairs < 1 or
/// draws_per_condition < 1.
Result<VignettePlan> vignettes_needed(double floor, int64_t target_pairs, int draws_per_condition = 1);

}  // namespace nf::stats
