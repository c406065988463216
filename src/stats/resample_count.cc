#include "stats/resample_count.h"

#include <cmath>

#include <fmt/format.h>

namespace nf::stats {

namespace {

std::string level_text(double level) { return fmt::format("{:g}%", 100.0 * level); }

}  // namespace

Result<int64_t> min_percentile_resamples(double level) {
  if (!(level > 0.0 && level < 1.0))
    return InvalidArgument(fmt::format("min_percentile_resamples: level must be in (0, 1), got {}", level));
  // The small slack keeps 2 / 0.05 = 40.000000000000007 at 40.
  return static_cast<int64_t>(std::ceil(2.0 / (1.0 - level) - 1e-9));
}

std::optional<std::string> resamples_problem(int64_t resamples, double level) {
  const auto need = min_percentile_resamples(level);
  if (!need.ok() || resamples >= *need) return std::nullopt;
  return fmt::format(
      "{} {} the tails of a {} percentile interval empty (each tail holds resamples x {:g} < 1 "
      "of them, so its ends are no quantiles at that level): use at least {} (2 / (1 - level)); {} or more advised",
      resamples, resamples == 1 ? "resample leaves" : "resamples leave", level_text(level), (1.0 - level) / 2.0, *need, kAdvisedResamples);
}

Status check_resamples(int64_t resamples, double level, const std::string& what) {
  NF_RETURN_IF_ERROR(min_percentile_resamples(level).status());
  if (auto problem = resamples_problem(resamples, level)) return InvalidArgument(what + ": " + *problem);
  return Status::Ok();
}

std::optional<std::string> resamples_warning(int64_t resamples, double level, const std::string& what) {
  if (resamples >= kAdvisedResamples) return std::nullopt;
  return fmt::format(
      "{}: {} bootstrap resamples (fewer than {}): the ends of each {} interval rest on about {:g} resamples per "
      "tail and move with the seed",
      what, resamples, kAdvisedResamples, level_text(level), std::floor(static_cast<double>(resamples) * (1.0 - level) / 2.0));
}

}  // namespace nf::stats
