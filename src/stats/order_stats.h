// Internal to stats/: the two neighbouring order statistics a type-7 quantile needs, by
// selection (std::nth_element, O(n)) instead of a full sort (O(n log n)): the bootstrap's
// intervals take two quantiles of 10,000 replicates per row (issue 14). The values are the
// ones a full ascending sort would put at those positions, so the quantiles are identical.
#pragma once

#include <algorithm>
#include <cstddef>
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

/// The order-statistic pairs of two quantile positions lo1 <= lo2 (each as order_pair)
/// from one reordering of `v`.
inline std::pair<std::pair<double, double>, std::pair<double, double>> order_pairs(std::vector<double>& v, size_t lo1,
                                                                                    size_t lo2) {
  const auto first = order_pair(v, 0, lo1);
  if (lo2 == lo1) return {first, first};
  return {first, order_pair(v, lo1 + 1, lo2)};
}

}  // namespace nf::stats
