#include "stats/multiplicity.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

namespace nf::stats {

namespace {

// Indices of the non-NaN p-values sorted by value (stable), after range checks.
Result<std::vector<size_t>> sorted_valid(const char* fn, const std::vector<double>& p) {
  std::vector<size_t> idx;
  for (size_t i = 0; i < p.size(); ++i) {
    if (std::isnan(p[i])) continue;
    if (p[i] < 0.0 || p[i] > 1.0) {
      return InvalidArgument(std::string(fn) + ": p-value " + std::to_string(i + 1) + " (" + std::to_string(p[i]) +
                             ") is outside [0, 1]");
    }
    idx.push_back(i);
  }
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return p[a] < p[b]; });
  return idx;
}

}  // namespace

Result<std::vector<double>> benjamini_hochberg(const std::vector<double>& p) {
  NF_ASSIGN_OR_RETURN(const std::vector<size_t> idx, sorted_valid("benjamini_hochberg", p));
  std::vector<double> out(p.size(), std::nan(""));
  const double m = static_cast<double>(idx.size());
  double running = 1.0;
  for (size_t k = idx.size(); k-- > 0;) {
    const double q = std::min(1.0, m * p[idx[k]] / static_cast<double>(k + 1));
    running = std::min(running, q);
    out[idx[k]] = running;
  }
  return out;
}

Result<std::vector<double>> holm(const std::vector<double>& p) {
  NF_ASSIGN_OR_RETURN(const std::vector<size_t> idx, sorted_valid("holm", p));
  std::vector<double> out(p.size(), std::nan(""));
  const double m = static_cast<double>(idx.size());
  double running = 0.0;
  for (size_t k = 0; k < idx.size(); ++k) {
    const double q = std::min(1.0, (m - static_cast<double>(k)) * p[idx[k]]);
    running = std::max(running, q);
    out[idx[k]] = running;
  }
  return out;
}

}  // namespace nf::stats
