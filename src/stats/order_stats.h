// Internal to stats/: the two neighbouring order statistics a type-7 quantile needs, by
// selection (std::nth_element, O(n)) instead of a full sort (O(n log n)): the bootstrap's
// intervals take two quantiles of 10,000 replicates per row (issue 14). The values are the
// ones a full ascending sort would put at those positions, so the quantiles are identical.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <utility>
#include <vector>

namespace nf::stats {

/// {v_(lo), v_(lo+1)}: the 0-based ascending order statistics at lo and lo + 1 (both
/// v_(lo) when lo is the last position) of `v`, which must be non-empty, free of NaN, with
/// lo < v.size(). Reorders `v`: afterwards every element before index lo + 1 is <= every
/// element from lo + 1 on. Only [from, end) is searched, so a caller asking for a second,
/// higher pair passes from = the previous lo + 1 (requires lo >= from and every element
/// before `from` <= every element from `from` on, as a previous call leaves it).
inline std::pair<double, double> order_pair(std::vector<double>& v, size_t from, size_t lo) {
  std::nth_element(v.begin() + static_cast<std::ptrdiff_t>(from), v.begin() + static_cast<std::ptrdiff_t>(lo),
                   v.end());
  const double a = v[lo];
  const double b = lo + 1 < v.size() ? *std::min_element(v.begin() + static_cast<std::ptrdiff_t>(lo) + 1, v.end()) : a;
  return {a, b};
}

/// {v_(lo), v_(lo+1)} for lo near an end of `v` (as order_pair, without reordering `v`):
/// one pass keeping the k = lo + 2 smallest values (`low`; the n - lo largest otherwise) in
/// a heap, so a value that cannot be among them costs one comparison. For the tails of a
/// bootstrap interval (lo = 249 of 10,000 values) this is several times faster than a
/// selection over all of them. Same requirements as order_pair.
inline std::pair<double, double> tail_order_pair(const std::vector<double>& v, size_t lo, bool low) {
  const size_t n = v.size();
  if (lo + 1 >= n) {  // v_(lo) is the maximum, and is both values
    const double m = *std::max_element(v.begin(), v.end());
    return {m, m};
  }
  // low: the k smallest in a max-heap, whose top is v_(k-1) = v_(lo+1), and v_(lo) is the
  // larger child of the top. high: the k = n - lo largest in a min-heap, whose top is v_(lo)
  // and v_(lo+1) the smaller child of the top (the top itself when k == 1).
  const size_t k = low ? lo + 2 : n - lo;
  std::vector<double> heap(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k));
  auto run = [&](auto before) {
    std::make_heap(heap.begin(), heap.end(), before);
    for (size_t i = k; i < n; ++i) {
      if (before(v[i], heap.front())) {
        std::pop_heap(heap.begin(), heap.end(), before);
        heap.back() = v[i];
        std::push_heap(heap.begin(), heap.end(), before);
      }
    }
    const double top = heap.front();
    if (k == 1) return std::pair<double, double>{top, top};
    const double child = k == 2 ? heap[1] : (before(heap[1], heap[2]) ? heap[2] : heap[1]);
    return low ? std::pair<double, double>{child, top} : std::pair<double, double>{top, child};
  };
  return low ? run(std::less<double>()) : run(std::greater<double>());
}

/// The order-statistic pairs of two quantile positions lo1 <= lo2 (each as order_pair)
/// from one reordering of `v` (or none: both positions in the outer sixteenths of `v`
/// take tail_order_pair).
inline std::pair<std::pair<double, double>, std::pair<double, double>> order_pairs(std::vector<double>& v, size_t lo1,
                                                                                    size_t lo2) {
  const size_t n = v.size();
  if (n >= 64 && lo1 + 2 <= n / 16 && n - lo2 <= n / 16)
    return {tail_order_pair(v, lo1, true), tail_order_pair(v, lo2, false)};
  const auto first = order_pair(v, 0, lo1);
  if (lo2 == lo1) return {first, first};
  return {first, order_pair(v, lo1 + 1, lo2)};
}

}  // namespace nf::stats
