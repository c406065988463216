// Paired binary comparisons: exact McNemar and friends. Layer 1.
#pragma once

#include <cstdint>

#include "util/status.h"

namespace nf::stats {

/// Exact two-sided McNemar p-value from the discordant counts b and c: the two-sided
/// binomial test of b successes in b + c trials at p = 0.5 (min(1, 2 * P[X <= min(b,c)])).
/// b + c == 0 gives 1. Never above 1. Source: McNemar (1947); seed 000 §III.B, S12;
/// seed 004 §3.5 (Table 11). Errors: InvalidArgument if b or c is negative.
Result<double> mcnemar_exact(int64_t b, int64_t c);

}  // namespace nf::stats
