#include "stats/bootstrap.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <thread>

#include "util/rng.h"
#include "stats/order_stats.h"
#include "stats/parallel_for.h"

namespace nf::stats {

namespace {

Status check_bootstrap_args(const char* fn, size_t n_clusters, int resamples, double level, int threads) {
  if (n_clusters == 0) return InvalidArgument(std::string(fn) + ": no clusters");
  if (resamples < 1) return InvalidArgument(std::string(fn) + ": resamples must be >= 1, got " + std::to_string(resamples));
  if (threads < 1) return InvalidArgument(std::string(fn) + ": threads must be >= 1, got " + std::to_string(threads));
  return check_level(fn, level);
}

Result<BootstrapResult> finish(double estimate, std::vector<double> reps, int resamples, uint64_t seed,
                               double level, const char* fn) {
  BootstrapResult out;
  out.estimate = estimate;
  out.resamples = resamples;
  out.seed = seed;
  for (double v : reps) {
    if (std::isfinite(v)) out.replicates.push_back(v);
  }
  out.valid_replicates = static_cast<int>(out.replicates.size());
  if (out.replicates.empty()) return Undefined(std::string(fn) + ": no bootstrap replicate gave a finite statistic");
  NF_ASSIGN_OR_RETURN(const Interval iv, percentile_interval(out.replicates, level));
  out.low = iv.low;
  out.high = iv.high;
  return out;
}

}  // namespace

namespace {

Status check_quantile_values(const std::vector<double>& values) {
  if (values.empty()) return InvalidArgument("quantile_linear: no values");
  for (double v : values) {
    if (std::isnan(v)) return InvalidArgument("quantile_linear: NaN value");
  }
  return Status::Ok();
}

// Type-7 position of q in n values: lo = floor(h) and the fraction h - lo, h = (n-1) q.
std::pair<size_t, double> quantile_position(size_t n, double q) {
  const double h = static_cast<double>(n - 1) * q;
  const size_t lo = static_cast<size_t>(std::floor(h));
  return {lo, h - static_cast<double>(lo)};
}

// The quantile from its order-statistic pair (order_pair): v[lo] + frac (v[lo+1] - v[lo]),
// or v[lo] when lo is the last position.
double interpolate(size_t n, size_t lo, double frac, std::pair<double, double> v) {
  if (lo + 1 >= n) return v.first;
  return v.first + frac * (v.second - v.first);
}

}  // namespace

Result<double> quantile_linear(std::vector<double> values, double q) {
  if (values.empty()) return InvalidArgument("quantile_linear: no values");
  if (!(q >= 0.0 && q <= 1.0)) return InvalidArgument("quantile_linear: q must be in [0, 1]");
  NF_RETURN_IF_ERROR(check_quantile_values(values));
  // Selection, not a sort: the same two order statistics (stats/order_stats.h).
  const auto [lo, frac] = quantile_position(values.size(), q);
  return interpolate(values.size(), lo, frac, order_pair(values, 0, lo));
}

Result<Interval> percentile_interval(const std::vector<double>& values, double level) {
  NF_RETURN_IF_ERROR(check_level("percentile_interval", level));
  NF_RETURN_IF_ERROR(check_quantile_values(values));
  const double alpha = 1.0 - level;
  // One copy and one selection for both ends; the same values as quantile_linear at
  // alpha/2 and 1 - alpha/2.
  std::vector<double> v = values;
  const auto [lo1, frac1] = quantile_position(v.size(), alpha / 2.0);
  const auto [lo2, frac2] = quantile_position(v.size(), 1.0 - alpha / 2.0);
  const auto [p1, p2] = order_pairs(v, lo1, lo2);
  Interval out;
  out.low = interpolate(v.size(), lo1, frac1, p1);
  out.high = interpolate(v.size(), lo2, frac2, p2);
  return out;
}

double ratio_of_sums(const std::vector<double>& num, const std::vector<double>& den,
                     const std::vector<size_t>& clusters) {
  double sn = 0.0, sd = 0.0;
  for (size_t i : clusters) {
    sn += num[i];
    sd += den[i];
  }
  return sd == 0.0 ? std::nan("") : sn / sd;
}

Result<BootstrapResult> cluster_bootstrap(size_t n_clusters, const ClusterStatistic& statistic, int resamples,
                                          uint64_t seed, double level, int threads) {
  NF_RETURN_IF_ERROR(check_bootstrap_args("cluster_bootstrap", n_clusters, resamples, level, threads));
  std::vector<size_t> identity(n_clusters);
  for (size_t i = 0; i < n_clusters; ++i) identity[i] = i;
  const double estimate = statistic(identity);
  if (std::isnan(estimate)) return Undefined("cluster_bootstrap: the statistic is undefined on the original sample");
  std::vector<double> reps(static_cast<size_t>(resamples));
  parallel_for(resamples, threads, [&](int r) {
    Rng rng = Rng::stream(seed, {static_cast<uint64_t>(r)});
    std::vector<size_t> idx(n_clusters);
    for (auto& i : idx) i = static_cast<size_t>(rng.uniform_int(n_clusters));
    reps[static_cast<size_t>(r)] = statistic(idx);
  });
  return finish(estimate, std::move(reps), resamples, seed, level, "cluster_bootstrap");
}

Result<Interval> cluster_bootstrap_ratio(const std::vector<double>& num, const std::vector<double>& den,
                                         int resamples, uint64_t seed, double level, int threads) {
  NF_ASSIGN_OR_RETURN(const BootstrapResult br,
                      cluster_bootstrap_ratio_replicates(num, den, resamples, seed, level, threads));
  Interval out;
  out.estimate = br.estimate;
  out.low = br.low;
  out.high = br.high;
  return out;
}

Result<BootstrapResult> cluster_bootstrap_ratio_replicates(const std::vector<double>& num,
                                                           const std::vector<double>& den, int resamples,
                                                           uint64_t seed, double level, int threads) {
  if (num.size() != den.size()) {
    return InvalidArgument("cluster_bootstrap_ratio: num has " + std::to_string(num.size()) + " clusters, den has " +
                           std::to_string(den.size()));
  }
  NF_RETURN_IF_ERROR(check_bootstrap_args("cluster_bootstrap_ratio", num.size(), resamples, level, threads));
  double sn = 0.0, sd = 0.0;
  for (size_t i = 0; i < num.size(); ++i) {
    sn += num[i];
    sd += den[i];
  }
  if (sd == 0.0) return InvalidArgument("cluster_bootstrap_ratio: the denominators sum to 0");
  const size_t n = num.size();
  std::vector<double> reps(static_cast<size_t>(resamples));
  // Same draws as cluster_bootstrap(n, ratio_of_sums): one uniform_int(n) per cluster slot
  // from Rng::stream(seed, {r}); inlined for speed.
  parallel_for(resamples, threads, [&](int r) {
    Rng rng = Rng::stream(seed, {static_cast<uint64_t>(r)});
    double a = 0.0, b = 0.0;
    for (size_t k = 0; k < n; ++k) {
      const size_t i = static_cast<size_t>(rng.uniform_int(n));
      a += num[i];
      b += den[i];
    }
    reps[static_cast<size_t>(r)] = b == 0.0 ? std::nan("") : a / b;
  });
  return finish(sn / sd, std::move(reps), resamples, seed, level, "cluster_bootstrap_ratio");
}

}  // namespace nf::stats
