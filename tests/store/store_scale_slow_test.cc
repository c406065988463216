// Scale (slow tier): an import of 200,000 draws x 5 outcomes through put_draws, then
// outcome_rows over the resulting 1,000,000 rows. The brief: "1,000,000 outcome rows load
// in a few seconds" (release build); the bounds here are loose enough for a Debug build
// on a shared 2-core machine and still catch an accidental O(n^2) or a missing index.
#include <chrono>
#include <ctime>
#include <cstdio>
#include <tuple>

#include <gtest/gtest.h>

#include "store/store.h"
#include "store/store_test_util.h"

namespace nf {
namespace {

using store_test::ScratchDir;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Process CPU seconds (all threads): on a loaded shared machine wall time overstates cost.
double cpu_seconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

TEST(StoreScale, MillionOutcomeRowsImportAndLoad) {
  ScratchDir dir;
  auto opened = Store::open(dir.path("big.db"));
  ASSERT_TRUE(opened.ok()) << opened.status().to_string();
  auto store = std::move(opened).value();

  constexpr int kSubjects = 4, kConfigs = 5, kConditions = 2, kItems = 500, kReplicates = 10, kOutcomes = 5;
  std::vector<Draw> draws;
  draws.reserve(static_cast<size_t>(kSubjects) * kConfigs * kConditions * kItems * kReplicates);
  // Written in plan order reversed by replicate, so the loader must sort.
  for (int r = kReplicates - 1; r >= 0; --r) {
    for (int s = 0; s < kSubjects; ++s) {
      for (int c = 0; c < kConfigs; ++c) {
        for (int k = 0; k < kConditions; ++k) {
          for (int i = 0; i < kItems; ++i) {
            Draw d;
            d.key = DrawKey{"subject" + std::to_string(s), "item" + std::to_string(i), "cond" + std::to_string(k),
                            "config" + std::to_string(c), r};
            d.cluster = "cl" + std::to_string(i / 10);
            for (int o = 0; o < kOutcomes; ++o) {
              d.outcomes.push_back({"outcome" + std::to_string(o), static_cast<double>((i + r + o) % 2), ""});
            }
            draws.push_back(std::move(d));
          }
        }
      }
    }
  }
  auto t0 = std::chrono::steady_clock::now();
  double c0 = cpu_seconds();
  ASSERT_TRUE(store->put_draws(draws).ok());
  const double import_s = seconds_since(t0), import_cpu = cpu_seconds() - c0;
  draws.clear();
  draws.shrink_to_fit();

  t0 = std::chrono::steady_clock::now();
  c0 = cpu_seconds();
  auto rows = store->outcome_rows();
  const double load_s = seconds_since(t0), load_cpu = cpu_seconds() - c0;
  ASSERT_TRUE(rows.ok()) << rows.status().to_string();
  std::printf("put_draws of 200000 draws (1e6 outcomes): %.2f s wall, %.2f s CPU; "
              "outcome_rows of %zu rows: %.2f s wall, %.2f s CPU\n",
              import_s, import_cpu, rows->size(), load_s, load_cpu);
  ASSERT_EQ(rows->size(), 1000000u);
  // Ordered by subject, config, condition, outcome, item, replicate.
  for (size_t i = 1; i < rows->size(); ++i) {
    const OutcomeRow& a = (*rows)[i - 1];
    const OutcomeRow& b = (*rows)[i];
    ASSERT_LE(std::tie(a.subject, a.config, a.condition, a.outcome, a.item, a.replicate),
              std::tie(b.subject, b.config, b.condition, b.outcome, b.item, b.replicate))
        << "row " << i;
  }
  EXPECT_LT(import_s, 120.0);
  EXPECT_LT(load_s, 60.0);
}

}  // namespace
}  // namespace nf
