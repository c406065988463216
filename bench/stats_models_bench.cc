// Benchmarks for the agreement and model parts of the statistics core, on inputs that
// bench/compare_models.py regenerates bit for bit (SplitMix64 streams below) to time the
// statsmodels/numpy equivalent:
//  BM_FleissKappa100k      Fleiss kappa over 100,000 items x 5 raters x 3 categories;
//  BM_LogitBootstrap1000   1,000 bootstrap refits of an 800-row fixed-effects logistic
//                          regression (label ~ subject + judge + same_provider, the vote-level
//                          model of seed 004 §2.6), rows resampled with replacement.
// Counters report the computed values so the comparison script can check that both
// sides computed the same thing.
#include <cstdint>
#include <vector>

#include <benchmark/benchmark.h>

#include "stats/agreement.h"
#include "stats/logistic.h"

namespace {

// SplitMix64 (Steele, Lea & Flood 2014); mirrored in compare_models.py.
struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
};

constexpr int kItems = 100000;
constexpr int kRaters = 5;
constexpr int kCategories = 3;
constexpr int kRows = 800;
constexpr int kRefits = 1000;

std::vector<int64_t> fleiss_counts() {
  SplitMix64 g{1};
  std::vector<int64_t> counts(static_cast<size_t>(kItems) * kCategories, 0);
  for (int i = 0; i < kItems; ++i) {
    const uint64_t truth = g.next() % kCategories;
    for (int r = 0; r < kRaters; ++r) {
      const uint64_t u = g.next();
      const uint64_t cat = (u % 100) < 60 ? truth : (u >> 32) % kCategories;
      ++counts[static_cast<size_t>(i) * kCategories + cat];
    }
  }
  return counts;
}

// Design: intercept, subject[T.1..3], judge[T.1..3], same_provider; y from the stream.
void logit_data(Eigen::MatrixXd& x, Eigen::VectorXd& y, std::vector<int>& idx) {
  SplitMix64 g{2};
  x = Eigen::MatrixXd::Zero(kRows, 8);
  y.resize(kRows);
  for (int i = 0; i < kRows; ++i) {
    const int subject = i % 4;
    const int judge = (i / 4) % 4;
    x(i, 0) = 1.0;
    if (subject > 0) x(i, subject) = 1.0;
    if (judge > 0) x(i, 3 + judge) = 1.0;
    x(i, 7) = subject == judge ? 1.0 : 0.0;
    const double p = 0.35 + 0.1 * subject - 0.05 * judge + 0.1 * x(i, 7);
    y(i) = static_cast<double>(g.next() % 1000) < p * 1000.0 ? 1.0 : 0.0;
  }
  idx.resize(static_cast<size_t>(kRefits) * kRows);
  for (auto& v : idx) v = static_cast<int>(g.next() % kRows);
}

void BM_FleissKappa100k(benchmark::State& state) {
  const auto counts = fleiss_counts();
  double kappa = 0.0;
  for (auto _ : state) {
    auto r = nf::stats::fleiss_kappa_counts(counts, kCategories);
    if (!r.ok()) {
      state.SkipWithError(r.status().to_string().c_str());
      return;
    }
    kappa = r->estimate;  // (no DoNotOptimize on a double: GCC's "+m,r" asm garbles it)
  }
  state.counters["kappa"] = kappa;
}
BENCHMARK(BM_FleissKappa100k)->Unit(benchmark::kMillisecond);

void BM_LogitBootstrap1000(benchmark::State& state) {
  Eigen::MatrixXd x;
  Eigen::VectorXd y;
  std::vector<int> idx;
  logit_data(x, y, idx);
  const std::vector<std::string> names = {"Intercept", "subject[T.1]", "subject[T.2]", "subject[T.3]",
                                          "judge[T.1]", "judge[T.2]", "judge[T.3]", "same_provider"};
  Eigen::MatrixXd xb(kRows, 8);
  Eigen::VectorXd yb(kRows);
  double mean_same = 0.0;
  int failed = 0;
  for (auto _ : state) {
    double sum = 0.0;
    int ok = 0;
    failed = 0;
    for (int b = 0; b < kRefits; ++b) {
      for (int i = 0; i < kRows; ++i) {
        const int src = idx[static_cast<size_t>(b) * kRows + i];
        xb.row(i) = x.row(src);
        yb(i) = y(src);
      }
      auto fit = nf::stats::logit_fit(xb, yb, names);
      if (!fit.ok()) {
        ++failed;
        continue;
      }
      sum += fit->beta(7);
      ++ok;
    }
    mean_same = ok > 0 ? sum / ok : 0.0;
  }
  state.counters["mean_same_provider"] = mean_same;
  state.counters["failed_refits"] = failed;
}
BENCHMARK(BM_LogitBootstrap1000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
