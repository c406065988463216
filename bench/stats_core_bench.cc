// Benchmark of the statistics core against numpy on the same inputs (bench/compare_core.py
// regenerates the inputs bit for bit and prints the ratios; results in bench/README.md).
//
// BM_ClusterBootstrapFloor/T: a 10,000-resample cluster bootstrap of an instability floor
// over 1,000 vignettes x 100 reference draws (per vignette: discordant replicate pairs
// k(100-k) over 4,950 pairs; seed 000 §III.B, §D), T threads. Counters: estimate, low, high.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "stats/bootstrap.h"

namespace {

constexpr int kClusters = 1000;
constexpr int kDraws = 100;
constexpr int kResamples = 10000;

struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
};

// Per vignette: action probability p = (u % 1000) / 1000 * 0.3, then 100 Bernoulli draws
// (draw = (u % 1000000) < p * 1e6). Same arithmetic in compare_core.py.
void floor_inputs(std::vector<double>& num, std::vector<double>& den) {
  SplitMix64 g{3};
  num.assign(kClusters, 0.0);
  den.assign(kClusters, kDraws * (kDraws - 1) / 2.0);
  for (int i = 0; i < kClusters; ++i) {
    const uint64_t p_millis = (g.next() % 1000) * 300;  // p * 1e6
    int64_t k = 0;
    for (int d = 0; d < kDraws; ++d) k += (g.next() % 1000000) < p_millis ? 1 : 0;
    num[static_cast<size_t>(i)] = static_cast<double>(k * (kDraws - k));
  }
}

void BM_ClusterBootstrapFloor(benchmark::State& state) {
  std::vector<double> num, den;
  floor_inputs(num, den);
  nf::stats::Interval iv;
  for (auto _ : state) {
    auto r = nf::stats::cluster_bootstrap_ratio(num, den, kResamples, 2026, 0.95, static_cast<int>(state.range(0)));
    if (!r.ok()) {
      state.SkipWithError(r.status().to_string().c_str());
      return;
    }
    iv = *r;
    benchmark::DoNotOptimize(iv);
  }
  state.counters["estimate"] = iv.estimate;
  state.counters["low"] = iv.low;
  state.counters["high"] = iv.high;
}
BENCHMARK(BM_ClusterBootstrapFloor)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
