#include "stats/planning.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace nf::stats {

Result<VignettePlan> vignettes_needed(double floor, int64_t target_pairs, int draws_per_condition) {
  if (!(floor > 0.0 && floor <= 1.0)) {
    return InvalidArgument("vignettes_needed: floor must be in (0, 1], got " + std::to_string(floor));
  }
  if (target_pairs < 1) {
    return InvalidArgument("vignettes_needed: target pairs must be >= 1, got " + std::to_string(target_pairs));
  }
  if (draws_per_condition < 1) {
    return InvalidArgument("vignettes_needed: draws per condition must be >= 1, got " +
                           std::to_string(draws_per_condition));
  }
  VignettePlan out;
  const double d = static_cast<double>(draws_per_condition);
  out.pairs_per_vignette = floor * d * d;
  out.expected_vignettes = static_cast<double>(target_pairs) / out.pairs_per_vignette;
  const double rounded = std::round(out.expected_vignettes);
  const bool integral = std::fabs(out.expected_vignettes - rounded) <= 1e-9 * std::max(1.0, rounded);
  out.vignettes = static_cast<int64_t>(integral ? rounded : std::ceil(out.expected_vignettes));
  return out;
}

}  // namespace nf::stats
