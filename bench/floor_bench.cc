// Floor analysis on a synthetic store of 1,000,000 draws with a 10,000-resample
// item-cluster bootstrap (issue 2). Reports draws/s and the process's peak RSS.
//
//   cmake --build --preset release --target floor_bench && build/release/bench/floor_bench
//
// The synthetic store (10,000 items x 100 replicates, one binary outcome per draw, a
// per-item propensity so the floor is about 0.2) is built once under $TMPDIR and reused.
#include <sys/resource.h>

#include <cstdio>
#include <filesystem>

#include <benchmark/benchmark.h>

#include "metrics/floor.h"
#include "store/store.h"
#include "util/rng.h"

namespace {

constexpr int kItems = 10000;
constexpr int kReplicates = 100;

std::string store_path() {
  return (std::filesystem::temp_directory_path() / "noisefloor-floor-bench-1M-v1.sqlite").string();
}

void ensure_store() {
  const std::string path = store_path();
  if (std::filesystem::exists(path)) return;
  auto store = nf::Store::open(path + ".building");
  if (!store.ok()) {
    std::fprintf(stderr, "%s\n", store.status().to_string().c_str());
    std::exit(1);
  }
  nf::Rng rng(2026);
  std::vector<nf::Draw> batch;
  for (int i = 0; i < kItems; ++i) {
    const double p = 0.5 * rng.uniform();
    for (int r = 0; r < kReplicates; ++r) {
      nf::Draw d;
      d.key = {"bench", "item" + std::to_string(i), "none", "default", r};
      d.cluster = d.key.item;
      d.outcomes.push_back({"correct", rng.uniform() < p ? 1.0 : 0.0, ""});
      batch.push_back(std::move(d));
    }
    if (batch.size() >= 100000) {
      if (!(*store)->put_draws(batch).ok()) std::exit(1);
      batch.clear();
    }
  }
  if (!batch.empty() && !(*store)->put_draws(batch).ok()) std::exit(1);
  store->reset();
  std::filesystem::rename(path + ".building", path);
}

void BM_FloorWithClusterBootstrap(benchmark::State& state) {
  ensure_store();
  auto store = nf::Store::open_existing(store_path());
  if (!store.ok()) {
    state.SkipWithError(store.status().to_string().c_str());
    return;
  }
  int64_t draws = 0;
  for (auto _ : state) {
    auto rows = (*store)->outcome_rows();
    auto fr = nf::compute_floor(*rows, 1, {10000, 1, 0.95});
    benchmark::DoNotOptimize(fr);
    draws += static_cast<int64_t>(rows->size());
  }
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  state.counters["draws_per_s"] = benchmark::Counter(static_cast<double>(draws), benchmark::Counter::kIsRate);
  state.counters["peak_rss_MiB"] = static_cast<double>(ru.ru_maxrss) / 1024.0;
}
BENCHMARK(BM_FloorWithClusterBootstrap)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
