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
/// One resample of a block of B ratios (cluster_ratio_intervals): `base` holds per cluster
/// B numerators then B denominators. Writes each ratio's sum(num)/sum(den), sum(den) and
/// sum((num - ratio den)^2) over the drawn clusters `idx`, in idx order.
template <size_t B>
void resample_block(const std::vector<uint32_t>& idx, const double* base, double* ratio, double* sd_out,
                    double* ss_out) {
  double sn[B] = {}, sd[B] = {}, rr[B], ss[B] = {};
  for (uint32_t i : idx) {
    const double* p = base + 2 * B * static_cast<size_t>(i);
    for (size_t k = 0; k < B; ++k) {
      sn[k] += p[k];
      sd[k] += p[B + k];
    }
  }
  for (size_t k = 0; k < B; ++k) rr[k] = sd[k] == 0.0 ? std::nan("") : sn[k] / sd[k];
  if (idx.size() >= 2) {
    for (uint32_t i : idx) {
      const double* p = base + 2 * B * static_cast<size_t>(i);
      for (size_t k = 0; k < B; ++k) {
        const double e = p[k] - rr[k] * p[B + k];
        ss[k] += e * e;
      }
    }
  }
  for (size_t k = 0; k < B; ++k) {
    ratio[k] = rr[k];
    sd_out[k] = sd[k];
    ss_out[k] = ss[k];
  }
}

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

namespace {

// The interval from the resamples' ratios and linearized SEs (shared by
// cluster_ratio_interval and cluster_ratio_intervals, so both give identical results).
Result<ClusterRatioInterval> interval_from_replicates(double estimate, double se, size_t n, int resamples,
                                                      uint64_t seed, double level, double clamp_low,
                                                      double clamp_high, const double* reps, const double* ses) {
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
  valid.reserve(static_cast<size_t>(resamples));
  t.reserve(static_cast<size_t>(resamples));
  for (size_t r = 0; r < static_cast<size_t>(resamples); ++r) {
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

}  // namespace

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
  return interval_from_replicates(estimate, se, n, resamples, seed, level, clamp_low, clamp_high, reps.data(),
                                  ses.data());
}

Result<std::vector<ClusterRatioInterval>> cluster_ratio_intervals(const std::vector<std::vector<double>>& nums,
                                                                   const std::vector<std::vector<double>>& dens,
                                                                   int resamples, uint64_t seed, double level,
                                                                   int threads, double clamp_low, double clamp_high) {
  if (nums.size() != dens.size())
    return InvalidArgument("cluster_ratio_intervals: " + std::to_string(nums.size()) + " numerators, " +
                           std::to_string(dens.size()) + " denominators");
  if (nums.empty()) return std::vector<ClusterRatioInterval>{};
  const size_t k_ratios = nums.size(), n = nums.front().size();
  for (size_t k = 0; k < k_ratios; ++k) {
    if (nums[k].size() != dens[k].size())
      return InvalidArgument("cluster_ratio_interval: num has " + std::to_string(nums[k].size()) +
                             " clusters, den has " + std::to_string(dens[k].size()));
    if (nums[k].size() != n)
      return InvalidArgument("cluster_ratio_intervals: ratio " + std::to_string(k) + " has " +
                             std::to_string(nums[k].size()) + " clusters, ratio 0 has " + std::to_string(n));
  }
  if (n == 0) return InvalidArgument("cluster_ratio_interval: no clusters");
  if (resamples < 1) return InvalidArgument("cluster_ratio_interval: resamples must be >= 1");
  if (threads < 1) return InvalidArgument("cluster_ratio_interval: threads must be >= 1");
  NF_RETURN_IF_ERROR(check_level("cluster_ratio_interval", level));
  std::vector<size_t> identity(n);
  for (size_t i = 0; i < n; ++i) identity[i] = i;
  std::vector<double> estimate(k_ratios), se(k_ratios);
  for (size_t k = 0; k < k_ratios; ++k) {
    estimate[k] = ratio_of_sums(nums[k], dens[k], identity);
    if (std::isnan(estimate[k])) return InvalidArgument("cluster_ratio_interval: the denominators sum to 0");
    se[k] = ratio_linearized_se(nums[k], dens[k], identity);
  }
  // Ratios in blocks of `width` (the last padded with empty ratios): per block, cluster-major
  // copies (cluster i's numerators, then its denominators, side by side), so one resample's
  // gathers read one contiguous run per drawn cluster and keep the sums in registers. The
  // width is the smallest of 4, 8, 12, 16 that holds every ratio: with many clusters the
  // gathers miss the cache, and one pass per block is what they cost.
  const size_t width = k_ratios <= 4 ? 4 : k_ratios <= 8 ? 8 : k_ratios <= 12 ? 12 : 16;
  const size_t blocks = (k_ratios + width - 1) / width;
  std::vector<double> nd(blocks * n * 2 * width, 0.0);
  for (size_t k = 0; k < k_ratios; ++k) {
    double* base = nd.data() + (k / width) * n * 2 * width;
    for (size_t i = 0; i < n; ++i) {
      base[2 * width * i + k % width] = nums[k][i];
      base[2 * width * i + width + k % width] = dens[k][i];
    }
  }
  const size_t nres = static_cast<size_t>(resamples);
  std::vector<double> reps(k_ratios * nres), ses(k_ratios * nres);
  const double scale = static_cast<double>(n) / static_cast<double>(n - 1);
  // Replicate r draws exactly what cluster_ratio_interval's replicate r draws, and each sum
  // below adds the same terms in the same order as ratio_of_sums / ratio_linearized_se, so
  // every ratio's replicates are bit-identical to its own cluster_ratio_interval call.
  parallel_for(resamples, threads, [&](int r) {
    Rng rng = Rng::stream(seed, {static_cast<uint64_t>(r)});
    std::vector<uint32_t> idx(n);
    for (auto& i : idx) i = static_cast<uint32_t>(rng.uniform_int(n));
    for (size_t b = 0; b < blocks; ++b) {
      const double* base = nd.data() + b * n * 2 * width;
      double ratio[16], sd[16], ss[16];
      switch (width) {
        case 4: resample_block<4>(idx, base, ratio, sd, ss); break;
        case 8: resample_block<8>(idx, base, ratio, sd, ss); break;
        case 12: resample_block<12>(idx, base, ratio, sd, ss); break;
        default: resample_block<16>(idx, base, ratio, sd, ss); break;
      }
      for (size_t k = 0; k < width && b * width + k < k_ratios; ++k) {
        const size_t row = b * width + k;
        reps[row * nres + static_cast<size_t>(r)] = ratio[k];
        ses[row * nres + static_cast<size_t>(r)] =
            sd[k] == 0.0 ? std::nan("") : n < 2 ? 0.0 : std::sqrt(scale * ss[k]) / sd[k];
      }
    }
  });
  std::vector<ClusterRatioInterval> out;
  out.reserve(k_ratios);
  for (size_t k = 0; k < k_ratios; ++k) {
    NF_ASSIGN_OR_RETURN(auto iv, interval_from_replicates(estimate[k], se[k], n, resamples, seed, level, clamp_low,
                                                          clamp_high, reps.data() + k * nres, ses.data() + k * nres));
    out.push_back(std::move(iv));
  }
  return out;
}

}  // namespace nf::stats
