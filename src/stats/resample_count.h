// How many bootstrap resamples a percentile interval needs before its ends are quantiles at
// the requested level (issue 37, tester s9 F15).
//
// A two-sided percentile interval at level L takes the alpha/2 and 1 - alpha/2 quantiles of
// B resamples (alpha = 1 - L): each tail holds B * alpha / 2 resamples. Below one resample
// per tail (B < 2 / alpha: 40 at 95%) the tail is empty, the ends are just the smallest and
// largest resample, and the "95% interval" has no defined tails: with one resample it is a
// point that need not contain the estimate. Such counts are refused. Between the minimum
// and kAdvisedResamples the ends rest on a handful of resamples per tail and move from seed
// to seed: allowed, with a warning.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "util/status.h"

namespace nf::stats {

/// Resamples below which analyses and `stats` commands warn (the ends of a 95% interval then
/// rest on fewer than 25 resamples per tail). Source: Efron & Tibshirani (1993) §13.3, who
/// advise about 1,000 resamples for percentile intervals.
inline constexpr int64_t kAdvisedResamples = 1000;

/// The fewest resamples with at least one resample in each tail of a two-sided percentile
/// interval at `level`: ceil(2 / (1 - level)) (0.95 -> 40, 0.99 -> 200, 0.9 -> 20).
/// Errors: InvalidArgument if level is not in (0, 1).
Result<int64_t> min_percentile_resamples(double level);

/// Why `resamples` is too few at `level` ("5 resamples leave the tails ... advised", the
/// problem without the option's name), or nullopt when it is enough or level is not in (0, 1).
std::optional<std::string> resamples_problem(int64_t resamples, double level);

/// Ok when `resamples` >= min_percentile_resamples(level); else InvalidArgument
/// "<what>: 5 resamples leave the tails of a 95% percentile interval empty (each tail holds
/// resamples x 0.025 < 1 of them): use at least 40 (2 / (1 - level)), 1000 or more advised".
/// `what` names the option ("--resamples", "bootstrap.resamples"). Errors: also
/// InvalidArgument if level is not in (0, 1).
Status check_resamples(int64_t resamples, double level, const std::string& what);

/// A warning when `resamples` is below kAdvisedResamples ("<what>: 200 bootstrap resamples
/// (fewer than 1000): interval ends rest on 5 resamples per tail and move with the seed"),
/// else nullopt.
std::optional<std::string> resamples_warning(int64_t resamples, double level, const std::string& what);

}  // namespace nf::stats
