#include "stats/cluster_interval.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "stats/bootstrap.h"
#include "util/prefault.h"
#include "util/rng.h"
#include "stats/order_stats.h"
#include "stats/parallel_for.h"

namespace nf::stats {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// One resample of a block of B ratios (cluster_ratio_intervals): `base` holds per cluster
/// B numerators then B denominators, as doubles or (T = int32_t, when every one is an
/// integer in range: half the memory, which is what the random gathers cost with many
/// clusters) as 32-bit integers, each converted exactly to the same double on load. Writes
/// each ratio's sum(num)/sum(den), sum(den) and sum((num - ratio den)^2) over the drawn
/// clusters idx[0..n), in idx order. Portable code (the compiler's baseline vectors: SSE2
/// on x86-64).
template <size_t B, typename T>
void resample_block(const uint32_t* idx, size_t n, const void* base_in, double* ratio, double* sd_out,
                    double* ss_out, size_t /*int_run*/) {
  const T* base = static_cast<const T*>(base_in);
  double sn[B] = {}, sd[B] = {}, rr[B], ss[B] = {};
  for (size_t j = 0; j < n; ++j) {
    const T* p = base + 2 * B * static_cast<size_t>(idx[j]);
    for (size_t k = 0; k < B; ++k) {
      sn[k] += static_cast<double>(p[k]);
      sd[k] += static_cast<double>(p[B + k]);
    }
  }
  for (size_t k = 0; k < B; ++k) rr[k] = sd[k] == 0.0 ? std::nan("") : sn[k] / sd[k];
  if (n >= 2) {
    for (size_t j = 0; j < n; ++j) {
      const T* p = base + 2 * B * static_cast<size_t>(idx[j]);
      for (size_t k = 0; k < B; ++k) {
        const double e = static_cast<double>(p[k]) - rr[k] * static_cast<double>(p[B + k]);
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

#if defined(__x86_64__) && defined(__GNUC__)
#define NF_HAVE_AVX2_KERNEL 1

/// Clusters ahead of the one being summed whose rows are prefetched: with tens of
/// thousands of clusters a block's rows leave the cache, and the drawn clusters are random,
/// so the hardware prefetcher cannot guess them (issue 14: 100M values, 100,000 clusters:
/// 75 -> 53 ns per drawn cluster for 24 ratios in a micro-benchmark). Prefetching changes
/// no arithmetic.
constexpr size_t kPrefetchAhead = 12;

/// Prefetches the 2 B values of cluster idx[j + kPrefetchAhead], if any.
template <size_t B, typename T>
inline void prefetch_cluster(const uint32_t* idx, size_t n, size_t j, const T* base) {
  if (j + kPrefetchAhead >= n) return;
  const char* p = reinterpret_cast<const char*>(base + 2 * B * static_cast<size_t>(idx[j + kPrefetchAhead]));
  for (size_t off = 0; off < 2 * B * sizeof(T); off += 64) __builtin_prefetch(p + off, 0, 3);
}

// 4 values as doubles (exact for int32).
__attribute__((target("avx2"))) inline __m256d load4(const double* p) { return _mm256_loadu_pd(p); }
__attribute__((target("avx2"))) inline __m256d load4(const int32_t* p) {
  return _mm256_cvtepi32_pd(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

/// resample_block with 256-bit vectors (4 ratios per instruction instead of 2): the same
/// IEEE additions, subtractions and multiplications on the same operands in the same
/// order, so bit-identical results. The target is "avx2" alone, without "fma": no
/// multiply-add is contracted into one rounding. Called only when the CPU has AVX2.
template <size_t B, typename T>
__attribute__((target("avx2"))) void resample_block_avx2(const uint32_t* idx, size_t n, const void* base_in,
                                                         double* ratio, double* sd_out, double* ss_out,
                                                         size_t /*int_run*/) {
  static_assert(B % 4 == 0, "blocks are whole 256-bit vectors");
  const T* base = static_cast<const T*>(base_in);
  constexpr size_t V = B / 4;
  __m256d sn[V], sd[V], rr[V], ss[V];
  for (size_t v = 0; v < V; ++v) {
    sn[v] = _mm256_setzero_pd();
    sd[v] = _mm256_setzero_pd();
    ss[v] = _mm256_setzero_pd();
  }
  for (size_t j = 0; j < n; ++j) {
    prefetch_cluster<B>(idx, n, j, base);
    const T* p = base + 2 * B * static_cast<size_t>(idx[j]);
    for (size_t v = 0; v < V; ++v) {
      sn[v] = _mm256_add_pd(sn[v], load4(p + 4 * v));
      sd[v] = _mm256_add_pd(sd[v], load4(p + B + 4 * v));
    }
  }
  double tn[B], td[B], tr[B];
  for (size_t v = 0; v < V; ++v) {
    _mm256_storeu_pd(tn + 4 * v, sn[v]);
    _mm256_storeu_pd(td + 4 * v, sd[v]);
  }
  for (size_t k = 0; k < B; ++k) tr[k] = td[k] == 0.0 ? std::nan("") : tn[k] / td[k];
  for (size_t v = 0; v < V; ++v) rr[v] = _mm256_loadu_pd(tr + 4 * v);
  if (n >= 2) {
    for (size_t j = 0; j < n; ++j) {
      prefetch_cluster<B>(idx, n, j, base);
      const T* p = base + 2 * B * static_cast<size_t>(idx[j]);
      for (size_t v = 0; v < V; ++v) {
        const __m256d e = _mm256_sub_pd(load4(p + 4 * v), _mm256_mul_pd(rr[v], load4(p + B + 4 * v)));
        ss[v] = _mm256_add_pd(ss[v], _mm256_mul_pd(e, e));
      }
    }
  }
  for (size_t k = 0; k < B; ++k) {
    ratio[k] = tr[k];
    sd_out[k] = td[k];
  }
  for (size_t v = 0; v < V; ++v) _mm256_storeu_pd(ss_out + 4 * v, ss[v]);
}

// GCC 12's _mm512_*_round_pd pass an intentionally undefined vector (_mm512_undefined_pd)
// as the unused merge source, which -Wmaybe-uninitialized reports in every instantiation.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
// 8 values as doubles (exact for int32).
__attribute__((target("avx512f"))) inline __m512d load8(const double* p) { return _mm512_loadu_pd(p); }
__attribute__((target("avx512f"))) inline __m512d load8(const int32_t* p) {
  return _mm512_cvtepi32_pd(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

/// resample_block with 512-bit vectors for blocks of 8, 16, 24 or 32 ratios (AVX-512F), the
/// same operations in the same order as resample_block. The `_round_` intrinsics with the
/// current rounding mode are opaque to the compiler, so no multiply and add is contracted
/// into a fused multiply-add (which "avx512f" would otherwise allow): bit-identical results.
template <size_t B, typename T>
__attribute__((target("avx512f"))) void resample_block_avx512(const uint32_t* idx, size_t n, const void* base_in,
                                                             double* ratio, double* sd_out, double* ss_out,
                                                             size_t int_run) {
  static_assert(B % 8 == 0 && B <= 32, "blocks are whole 512-bit vectors, at most 4");
  const T* base = static_cast<const T*>(base_in);
  constexpr size_t V = B / 8;
  constexpr int kRound = _MM_FROUND_CUR_DIRECTION;
  __m512d sn[V], sd[V], rr[V], ss[V];
  for (size_t v = 0; v < V; ++v) {
    sn[v] = _mm512_setzero_pd();
    sd[v] = _mm512_setzero_pd();
    ss[v] = _mm512_setzero_pd();
  }
  if constexpr (std::is_same_v<T, int32_t>) {
    if (int_run > 0) {
      // The sums in 32-bit integer lanes (one integer add per 16 values instead of two
      // conversions and two double adds per 8), over runs of int_run drawn clusters that
      // cannot overflow, each run's sums then added as doubles. Every partial sum is an
      // integer below 2^53 (the caller checks), so each double sum is exact whatever the
      // grouping: the very values the double additions below give.
      constexpr size_t W = 2 * B / 16;  // 512-bit integer vectors per cluster row
      for (size_t j0 = 0; j0 < n; j0 += int_run) {
        const size_t j1 = std::min(n, j0 + int_run);
        __m512i acc[W];
        for (size_t w = 0; w < W; ++w) acc[w] = _mm512_setzero_si512();
        for (size_t j = j0; j < j1; ++j) {
          prefetch_cluster<B>(idx, n, j, base);
          const T* p = base + 2 * B * static_cast<size_t>(idx[j]);
          for (size_t w = 0; w < W; ++w) acc[w] = _mm512_add_epi32(acc[w], _mm512_loadu_si512(p + 16 * w));
        }
        alignas(64) int32_t run[2 * B];
        for (size_t w = 0; w < W; ++w) _mm512_store_si512(run + 16 * w, acc[w]);
        for (size_t v = 0; v < V; ++v) {
          sn[v] = _mm512_add_round_pd(sn[v], load8(run + 8 * v), kRound);
          sd[v] = _mm512_add_round_pd(sd[v], load8(run + B + 8 * v), kRound);
        }
      }
    }
  }
  if (!std::is_same_v<T, int32_t> || int_run == 0) {
    for (size_t j = 0; j < n; ++j) {
      prefetch_cluster<B>(idx, n, j, base);
      const T* p = base + 2 * B * static_cast<size_t>(idx[j]);
      for (size_t v = 0; v < V; ++v) {
        sn[v] = _mm512_add_round_pd(sn[v], load8(p + 8 * v), kRound);
        sd[v] = _mm512_add_round_pd(sd[v], load8(p + B + 8 * v), kRound);
      }
    }
  }
  double tn[B], td[B], tr[B];
  for (size_t v = 0; v < V; ++v) {
    _mm512_storeu_pd(tn + 8 * v, sn[v]);
    _mm512_storeu_pd(td + 8 * v, sd[v]);
  }
  for (size_t k = 0; k < B; ++k) tr[k] = td[k] == 0.0 ? std::nan("") : tn[k] / td[k];
  for (size_t v = 0; v < V; ++v) rr[v] = _mm512_loadu_pd(tr + 8 * v);
  if (n >= 2) {
    for (size_t j = 0; j < n; ++j) {
      prefetch_cluster<B>(idx, n, j, base);
      const T* p = base + 2 * B * static_cast<size_t>(idx[j]);
      for (size_t v = 0; v < V; ++v) {
        const __m512d e =
            _mm512_sub_round_pd(load8(p + 8 * v), _mm512_mul_round_pd(rr[v], load8(p + B + 8 * v), kRound), kRound);
        ss[v] = _mm512_add_round_pd(ss[v], _mm512_mul_round_pd(e, e, kRound), kRound);
      }
    }
  }
  for (size_t k = 0; k < B; ++k) {
    ratio[k] = tr[k];
    sd_out[k] = td[k];
  }
  for (size_t v = 0; v < V; ++v) _mm512_storeu_pd(ss_out + 8 * v, ss[v]);
}
#pragma GCC diagnostic pop
#endif

/// A resample kernel: (idx, n, block base, ratio, sd, ss, int_run). int_run (int32 layouts
/// only; 0 = none) is how many drawn clusters' values an int32 sum holds without overflow,
/// when the whole sum stays below 2^53 (then a kernel may add in integers: exact).
using BlockKernel = void (*)(const uint32_t*, size_t, const void*, double*, double*, double*, size_t);

/// How a kernel splits K ratios into blocks: widths are multiples of `granule` up to `max`.
struct BlockShape {
  size_t granule, max;
};

BlockShape block_shape(ResampleKernel kind) {
  return kind == ResampleKernel::kAvx512 ? BlockShape{8, 32} : BlockShape{4, 16};
}

template <size_t B, typename T>
BlockKernel block_kernel(ResampleKernel kind) {
#ifdef NF_HAVE_AVX2_KERNEL
  if constexpr (B % 8 == 0) {
    if (kind == ResampleKernel::kAvx512) return &resample_block_avx512<B, T>;
  }
  if constexpr (B <= 16) {
    if (kind == ResampleKernel::kAvx2) return &resample_block_avx2<B, T>;
  }
#endif
  (void)kind;
  return &resample_block<B, T>;
}

template <typename T>
BlockKernel block_kernel(size_t width, ResampleKernel kind) {
  switch (width) {
    case 4: return block_kernel<4, T>(kind);
    case 8: return block_kernel<8, T>(kind);
    case 12: return block_kernel<12, T>(kind);
    case 16: return block_kernel<16, T>(kind);
    case 24: return block_kernel<24, T>(kind);
    default: return block_kernel<32, T>(kind);
  }
}

/// Every ratio's numerators and denominators in blocks (cluster_ratio_intervals), as T.
template <typename T>
std::vector<T> block_layout(const std::vector<std::vector<double>>& nums, const std::vector<std::vector<double>>& dens,
                            size_t blocks, size_t width, size_t n) {
  std::vector<T> nd(blocks * n * 2 * width, T{0});
  for (size_t k = 0; k < nums.size(); ++k) {
    T* base = nd.data() + (k / width) * n * 2 * width;
    for (size_t i = 0; i < n; ++i) {
      base[2 * width * i + k % width] = static_cast<T>(nums[k][i]);
      base[2 * width * i + width + k % width] = static_cast<T>(dens[k][i]);
    }
  }
  return nd;
}

/// True when every value is an integer that an int32_t holds exactly (then the int32
/// layout converts back to the very same doubles).
bool all_int32(const std::vector<std::vector<double>>& vs) {
  for (const auto& v : vs)
    for (double x : v)
      if (!(x >= -2147483648.0 && x <= 2147483647.0) || x != std::trunc(x)) return false;
  return true;
}

std::atomic<ResampleKernel> g_kernel{ResampleKernel::kAuto};

// Type-7 quantile that tolerates +-infinity (an infinite neighbour gives an infinite bound),
// from the order statistics {v_(lo), v_(lo+1)} (order_pair) of n values.
double quantile_with_inf(size_t n, double q, size_t lo, std::pair<double, double> v) {
  if (lo + 1 >= n) return v.first;
  const double frac = static_cast<double>(n - 1) * q - static_cast<double>(lo);
  const double a = v.first, b = v.second;
  if (std::isinf(a) || std::isinf(b)) return frac == 0.0 ? a : (std::isinf(b) ? b : a);
  return a + frac * (b - a);
}

size_t quantile_lo(size_t n, double q) { return static_cast<size_t>(std::floor(static_cast<double>(n - 1) * q)); }

}  // namespace

namespace {

bool kernel_available(ResampleKernel kind) {
#ifdef NF_HAVE_AVX2_KERNEL
  if (kind == ResampleKernel::kAvx512) return __builtin_cpu_supports("avx512f");
  if (kind == ResampleKernel::kAvx2) return __builtin_cpu_supports("avx2");
#else
  if (kind == ResampleKernel::kAvx512 || kind == ResampleKernel::kAvx2) return false;
#endif
  return true;
}

}  // namespace

ResampleKernel resample_kernel() {
  const ResampleKernel chosen = g_kernel.load();
  if (chosen != ResampleKernel::kAuto) return chosen;
  static const ResampleKernel best = kernel_available(ResampleKernel::kAvx512) ? ResampleKernel::kAvx512
                                     : kernel_available(ResampleKernel::kAvx2) ? ResampleKernel::kAvx2
                                                                               : ResampleKernel::kPortable;
  return best;
}

bool set_resample_kernel(ResampleKernel kind) {
  if (!kernel_available(kind)) return false;
  g_kernel = kind;
  return true;
}

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
  const double alpha = 1.0 - level;
  // Selection instead of a sort: the same order statistics (stats/order_stats.h).
  const size_t n = t.size(), lo1 = quantile_lo(n, alpha / 2.0), lo2 = quantile_lo(n, 1.0 - alpha / 2.0);
  const auto [p1, p2] = order_pairs(t, lo1, lo2);
  const double t_lo = quantile_with_inf(n, alpha / 2.0, lo1, p1), t_hi = quantile_with_inf(n, 1.0 - alpha / 2.0, lo2, p2);
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
  // blocks are as few as the kernel's widest block allows (16 ratios, 32 with AVX-512), and
  // as narrow as holds the ratios (a multiple of 4, or 8): with many clusters the gathers
  // miss the cache, and one pass per block is what they cost; padding lanes cost as much as
  // ratios (22 ratios: one block of 24, or two of 12, not 16 + 16). Integer sums (floors:
  // discordant pairs and comparisons) are stored as int32 (half the bytes per gather).
  const ResampleKernel kind = resample_kernel();
  const BlockShape shape = block_shape(kind);
  const size_t blocks = (k_ratios + shape.max - 1) / shape.max;
  const size_t width = ((k_ratios + blocks - 1) / blocks + shape.granule - 1) / shape.granule * shape.granule;
  const bool ints = all_int32(nums) && all_int32(dens);
  std::vector<double> nd_double;
  std::vector<int32_t> nd_int;
  if (ints) {
    nd_int = block_layout<int32_t>(nums, dens, blocks, width, n);
  } else {
    nd_double = block_layout<double>(nums, dens, blocks, width, n);
  }
  const size_t elem = ints ? sizeof(int32_t) : sizeof(double);
  const char* nd = ints ? reinterpret_cast<const char*>(nd_int.data()) : reinterpret_cast<const char*>(nd_double.data());
  // Integer sums (AVX-512 kernel): runs of int_run clusters fit an int32, and the whole
  // sum (at most n * max |value|) stays below 2^53, where doubles add integers exactly.
  size_t int_run = 0;
  if (ints) {
    int64_t max_abs = 0;
    for (int32_t v : nd_int) max_abs = std::max<int64_t>(max_abs, v < 0 ? -static_cast<int64_t>(v) : v);
    if (max_abs == 0) {
      int_run = n;
    } else if (static_cast<double>(max_abs) * static_cast<double>(n) < 9007199254740992.0) {
      int_run = static_cast<size_t>(INT32_MAX / max_abs);
    }
  }
  const size_t nres = static_cast<size_t>(resamples);
  // Every element is written below: left uninitialised (no 3.5 MB memset for 22 ratios x
  // 10,000 resamples), and made present in one call, not a fault per page.
  std::unique_ptr<double[]> reps(new double[k_ratios * nres]), ses(new double[k_ratios * nres]);
  prefault_for_write(reps.get(), k_ratios * nres * sizeof(double));
  prefault_for_write(ses.get(), k_ratios * nres * sizeof(double));
  const double scale = static_cast<double>(n) / static_cast<double>(n - 1);
  // Replicate r draws exactly what cluster_ratio_interval's replicate r draws, and each sum
  // below adds the same terms in the same order as ratio_of_sums / ratio_linearized_se, so
  // every ratio's replicates are bit-identical to its own cluster_ratio_interval call.
  const BlockKernel kernel = ints ? block_kernel<int32_t>(width, kind) : block_kernel<double>(width, kind);
  // One worker per thread, each over a contiguous range of replicates with one index buffer
  // (not one allocation per replicate); replicate r's draws depend on r alone.
  const int workers = std::max(1, std::min(threads, resamples));
  parallel_for(workers, workers, [&](int w) {
    const int begin = static_cast<int>(static_cast<int64_t>(resamples) * w / workers);
    const int end = static_cast<int>(static_cast<int64_t>(resamples) * (w + 1) / workers);
    std::vector<uint32_t> idx(n);
    for (int r = begin; r < end; ++r) {
      Rng rng = Rng::stream(seed, {static_cast<uint64_t>(r)});
      for (auto& i : idx) i = static_cast<uint32_t>(rng.uniform_int(n));
      for (size_t b = 0; b < blocks; ++b) {
        const void* base = nd + b * n * 2 * width * elem;
        double ratio[32], sd[32], ss[32];
        kernel(idx.data(), n, base, ratio, sd, ss, int_run);
        for (size_t k = 0; k < width && b * width + k < k_ratios; ++k) {
          const size_t row = b * width + k;
          reps[row * nres + static_cast<size_t>(r)] = ratio[k];
          ses[row * nres + static_cast<size_t>(r)] =
              sd[k] == 0.0 ? std::nan("") : n < 2 ? 0.0 : std::sqrt(scale * ss[k]) / sd[k];
        }
      }
    }
  });
  // Each ratio's interval from its own replicates only, over the same threads (the order
  // statistics of 10,000 replicates per ratio, a fifth of the work at 1,000 clusters, ran on
  // one core); the first error in ratio order, as one ratio at a time would return it.
  std::vector<std::optional<Result<ClusterRatioInterval>>> ivs(k_ratios);
  parallel_for(static_cast<int>(k_ratios), threads, [&](int ki) {
    const size_t k = static_cast<size_t>(ki);
    ivs[k].emplace(interval_from_replicates(estimate[k], se[k], n, resamples, seed, level, clamp_low, clamp_high,
                                            reps.get() + k * nres, ses.get() + k * nres));
  });
  std::vector<ClusterRatioInterval> out;
  out.reserve(k_ratios);
  for (size_t k = 0; k < k_ratios; ++k) {
    NF_ASSIGN_OR_RETURN(auto iv, std::move(*ivs[k]));
    out.push_back(std::move(iv));
  }
  return out;
}

}  // namespace nf::stats
