// order_pairs (stats/order_stats.h, issue 14): the two order-statistic pairs a type-7
// quantile interval needs, by selection or (positions in the tails) by one pass with a heap,
// must equal what a full ascending sort puts at those positions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "stats/order_stats.h"
#include "util/rng.h"

namespace nf::stats {
namespace {

TEST(OrderStats, OrderPairsEqualAFullSort) {
  const double inf = std::numeric_limits<double>::infinity();
  Rng rng(3);
  for (size_t n : {1, 2, 3, 64, 65, 200, 1000, 10000}) {
    for (int kind = 0; kind < 4; ++kind) {
      std::vector<double> v(n);
      for (size_t i = 0; i < n; ++i) {
        switch (kind) {
          case 0: v[i] = rng.uniform(); break;                            // distinct
          case 1: v[i] = static_cast<double>(rng.uniform_int(5)); break;  // many ties
          case 2: v[i] = static_cast<double>(n - i); break;               // descending: each enters the low heap
          default: v[i] = i % 7 == 0 ? (i % 2 ? inf : -inf) : rng.uniform() - 0.5;  // infinities
        }
      }
      std::vector<double> sorted = v;
      std::sort(sorted.begin(), sorted.end());
      auto expected = [&](size_t lo) {
        return std::pair<double, double>{sorted[lo], lo + 1 < n ? sorted[lo + 1] : sorted[lo]};
      };
      // The 95% and 90% interval positions (tails: the heap pass for n >= 64), the middle, the ends.
      std::vector<std::pair<size_t, size_t>> positions{{0, n - 1}, {n / 4, (3 * n) / 4}, {n / 2, n / 2}};
      for (double alpha : {0.05, 0.1}) {
        positions.emplace_back(static_cast<size_t>(std::floor(static_cast<double>(n - 1) * alpha / 2)),
                               static_cast<size_t>(std::floor(static_cast<double>(n - 1) * (1 - alpha / 2))));
      }
      for (auto [lo1, lo2] : positions) {
        SCOPED_TRACE(testing::Message() << "n " << n << " kind " << kind << " lo " << lo1 << ", " << lo2);
        std::vector<double> w = v;
        const auto [p1, p2] = order_pairs(w, lo1, lo2);
        EXPECT_EQ(p1, expected(lo1));
        EXPECT_EQ(p2, expected(lo2));
        EXPECT_EQ(tail_order_pair(v, lo1, true), expected(lo1));
        EXPECT_EQ(tail_order_pair(v, lo2, false), expected(lo2));
      }
    }
  }
}

}  // namespace
}  // namespace nf::stats
