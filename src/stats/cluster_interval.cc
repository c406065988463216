#include "stats/cluster_interval.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <thread>

#include "stats/bootstrap.h"
#include "util/rng.h"
#include "stats/parallel_for.h"

namespace nf::stats {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Type-7 quantile that tolerates +-infinity (an infinite neighbour gives an infinite bound).
double quantile_with_inf(const std::vector<double>& sorted, double q) {
  const double h = static_cast<double>(sorted.size() - 1) * q;
  const size_t lo = static_cast<size_t>(std::floor(h));
  if (lo + 1 >= sorted.size()) return sorted.back();
  const double frac = h - static_cast<double>(lo);
  const double a = sorted[lo], b = sorted[lo + 1];
  if (std::isinf(a) || std::isinf(b)) return frac == 0.0 ? a : (std::isinf(b) ? b : a);
  return a + frac * (b - a);
}

}  // namespace

bool all_equal(const std::vector<double>& values) {
  if (values.empty()) return false;
  return std::all_of(values.begin(), values.end(), [&](double v) { return v == values.front(); });
}

double ratio_linearized_se(const std::vector<double>& num, const std::vector<double>& den,
                           const std::vector<size_t>& idx) {
  double sn = 0.0, sd = 0.0;
  for (size_t i : idx) {
    sn += num[i];
    sd += den[i];
  }
  if (sd == 0.0) return std::nan("");
  const size_t g = idx.size();
  if (g < 2) return 0.0;
  const double r = sn / sd;
  double ss = 0.0;
  for (size_t i : idx) {
    const double e = num[i] - r * den[i];
    ss += e * e;
  }
  return std::sqrt(static_cast<double>(g) / static_cast<double>(g - 1) * ss) / sd;
}

Result<Interval> studentized_interval(double estimate, double se, std::vector<double> t, double level) {
  NF_RETURN_IF_ERROR(check_level("studentized_interval", level));
  if (t.empty()) return InvalidArgument("studentized_interval: no pivot replicates");
  if (!(se >= 0.0)) return InvalidArgument("studentized_interval: se must be >= 0");
  for (double v : t)
    if (std::isnan(v)) return InvalidArgument("studentized_interval: NaN pivot replicate");
  std::sort(t.begin(), t.end());
  const double alpha = 1.0 - level;
  const double t_lo = quantile_with_inf(t, alpha / 2.0), t_hi = quantile_with_inf(t, 1.0 - alpha / 2.0);
  Interval out;
  out.estimate = estimate;
  out.low = std::isinf(t_hi) ? (t_hi > 0 ? -kInf : kInf) : estimate - t_hi * se;
  out.high = std::isinf(t_lo) ? (t_lo < 0 ? kInf : -kInf) : estimate - t_lo * se;
  return out;
}

Result<ClusterRatioInterval> cluster_ratio_interval(const std::vector<double>& num, const std::vector<double>& den,
                                                    int resamples, uint64_t seed, double level, int threads,
                                                    double clamp_low, double clamp_high) {
  if (num.size() != den.size())
    return InvalidArgument("cluster_ratio_interval: num has " + std::to_string(num.size()) + " clusters, den has " +
                           std::to_string(den.size()));
  if (num.empty()) return InvalidArgument("cluster_ratio_interval: no clusters");
  if (resamples < 1) return InvalidArgument("cluster_ratio_interval: resamples must be >= 1");
  if (threads < 1) return InvalidArgument("cluster_ratio_interval: threads must be >= 1");
  NF_RETURN_IF_ERROR(check_level("cluster_ratio_interval", level));
  const size_t n = num.size();
  std::vector<size_t> identity(n);
  for (size_t i = 0; i < n; ++i) identity[i] = i;
  const double estimate = ratio_of_sums(num, den, identity);
  if (std::isnan(estimate)) return InvalidArgument("cluster_ratio_interval: the denominators sum to 0");
  const double se = ratio_linearized_se(num, den, identity);

  std::vector<double> reps(static_cast<size_t>(resamples)), ses(static_cast<size_t>(resamples));
  // The draws of cluster_bootstrap_ratio: one uniform_int(n) per slot from Rng::stream(seed, {r}).
  parallel_for(resamples, threads, [&](int r) {
    Rng rng = Rng::stream(seed, {static_cast<uint64_t>(r)});
    std::vector<size_t> idx(n);
    for (auto& i : idx) i = static_cast<size_t>(rng.uniform_int(n));
    reps[static_cast<size_t>(r)] = ratio_of_sums(num, den, idx);
    ses[static_cast<size_t>(r)] = ratio_linearized_se(num, den, idx);
  });
  ClusterRatioInterval out;
  out.estimate = estimate;
  out.se = se;
  out.clusters = static_cast<int64_t>(n);
  out.resamples = resamples;
  out.seed = seed;
  // A resample drawing only clusters of one ratio (e.g. only unanimous items of a sparse
  // outcome) has se* = 0 and an infinite pivot; with a few such clusters that makes a bound
  // infinite (a [0, 1] interval for 18/720). The pivot's denominator is floored at se / sqrt(G),
  // one cluster's share of the standard error: it never binds in the dense slow-tier design
  // and keeps the sparse one finite (docs/intervals.md gives both coverages).
  const double se_floor = se / std::sqrt(static_cast<double>(n));
  std::vector<double> valid, t;
  for (size_t r = 0; r < reps.size(); ++r) {
    if (!std::isfinite(reps[r])) continue;
    valid.push_back(reps[r]);
    const double d = reps[r] - estimate;
    const double s_r = std::max(ses[r], se_floor);
    t.push_back(s_r > 0.0 ? d / s_r : d == 0.0 ? 0.0 : (d > 0 ? kInf : -kInf));
  }
  out.valid_replicates = static_cast<int>(valid.size());
  if (valid.empty()) return Undefined("cluster_ratio_interval: no bootstrap replicate gave a finite ratio");
  NF_ASSIGN_OR_RETURN(const Interval pct, percentile_interval(valid, level));
  out.percentile_low = pct.low;
  out.percentile_high = pct.high;
  if (all_equal(valid) && valid.front() == estimate) {
    out.degenerate = true;
    out.low = out.high = estimate;
    out.method = "degenerate (all resamples equal)";
    return out;
  }
  NF_ASSIGN_OR_RETURN(const Interval st, studentized_interval(estimate, se, std::move(t), level));
  out.low = std::clamp(st.low, clamp_low, clamp_high);
  out.high = std::clamp(st.high, clamp_low, clamp_high);
  out.method = "studentized cluster bootstrap";
  return out;
}

}  // namespace nf::stats
