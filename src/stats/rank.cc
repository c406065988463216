#include "stats/rank.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <map>
#include <numeric>
#include <string>

#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>

namespace nf::stats {

namespace {

Status check_pair(const char* fn, const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size()) {
    return InvalidArgument(std::string(fn) + ": x has " + std::to_string(x.size()) + " values, y has " +
                           std::to_string(y.size()));
  }
  if (x.size() < 3) return InvalidArgument(std::string(fn) + ": need at least 3 pairs, got " + std::to_string(x.size()));
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i]) || std::isnan(y[i])) {
      return InvalidArgument(std::string(fn) + ": pair " + std::to_string(i + 1) + " has a NaN");
    }
  }
  return Status::Ok();
}

bool constant(const std::vector<double>& v) {
  return std::all_of(v.begin(), v.end(), [&](double a) { return a == v.front(); });
}

struct TieSums {
  double pairs = 0;  // sum t(t-1)/2
  double v0 = 0;     // sum t(t-1)(t-2)
  double v1 = 0;     // sum t(t-1)(2t+5)
};

TieSums tie_sums(const std::vector<double>& v) {
  std::map<double, double> counts;
  for (double a : v) counts[a] += 1.0;
  TieSums s;
  for (const auto& [value, t] : counts) {
    (void)value;
    if (t < 2) continue;
    s.pairs += t * (t - 1) / 2;
    s.v0 += t * (t - 1) * (t - 2);
    s.v1 += t * (t - 1) * (2 * t + 5);
  }
  return s;
}

}  // namespace

Result<Correlation> kendall_tau_b(const std::vector<double>& x, const std::vector<double>& y) {
  NF_RETURN_IF_ERROR(check_pair("kendall_tau_b", x, y));
  if (constant(x) || constant(y)) return Undefined("kendall_tau_b: x or y is constant, so tau-b is undefined");
  const size_t n = x.size();
  double s = 0.0;  // C - D
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = i + 1; j < n; ++j) {
      const double dx = x[i] - x[j], dy = y[i] - y[j];
      const double prod = (dx > 0 ? 1 : dx < 0 ? -1 : 0) * (dy > 0 ? 1 : dy < 0 ? -1 : 0);
      s += prod;
    }
  }
  const TieSums tx = tie_sums(x), ty = tie_sums(y);
  const double nd = static_cast<double>(n);
  const double n0 = nd * (nd - 1) / 2;
  Correlation out;
  out.n = static_cast<int64_t>(n);
  out.estimate = std::clamp(s / std::sqrt(n0 - tx.pairs) / std::sqrt(n0 - ty.pairs), -1.0, 1.0);
  const double m = nd * (nd - 1);
  const double var = (m * (2 * nd + 5) - tx.v1 - ty.v1) / 18 + (2 * tx.pairs * ty.pairs) / m +
                     tx.v0 * ty.v0 / (9 * m * (nd - 2));
  out.statistic = s / std::sqrt(var);
  try {
    out.p_value = 2.0 * boost::math::cdf(boost::math::complement(boost::math::normal_distribution<double>(),
                                                                 std::fabs(out.statistic)));
  } catch (const std::exception& e) {
    return Internal(std::string("kendall_tau_b: ") + e.what());
  }
  out.p_value = std::min(1.0, out.p_value);
  return out;
}

std::vector<double> average_ranks(const std::vector<double>& v) {
  const size_t n = v.size();
  std::vector<size_t> idx(n);
  std::iota(idx.begin(), idx.end(), size_t{0});
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> r(n);
  size_t i = 0;
  while (i < n) {
    size_t j = i;
    while (j + 1 < n && v[idx[j + 1]] == v[idx[i]]) ++j;
    const double avg = (static_cast<double>(i) + static_cast<double>(j)) / 2.0 + 1.0;
    for (size_t k = i; k <= j; ++k) r[idx[k]] = avg;
    i = j + 1;
  }
  return r;
}

Result<Correlation> spearman(const std::vector<double>& x, const std::vector<double>& y) {
  NF_RETURN_IF_ERROR(check_pair("spearman", x, y));
  if (constant(x) || constant(y)) return Undefined("spearman: x or y is constant, so rho is undefined");
  const std::vector<double> rx = average_ranks(x), ry = average_ranks(y);
  const size_t n = x.size();
  const double nd = static_cast<double>(n);
  const double mx = std::accumulate(rx.begin(), rx.end(), 0.0) / nd;
  const double my = std::accumulate(ry.begin(), ry.end(), 0.0) / nd;
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < n; ++i) {
    sxy += (rx[i] - mx) * (ry[i] - my);
    sxx += (rx[i] - mx) * (rx[i] - mx);
    syy += (ry[i] - my) * (ry[i] - my);
  }
  Correlation out;
  out.n = static_cast<int64_t>(n);
  out.estimate = std::clamp(sxy / std::sqrt(sxx * syy), -1.0, 1.0);
  const double dof = nd - 2;
  const double rho = out.estimate;
  if (std::fabs(rho) >= 1.0) {
    out.statistic = rho > 0 ? INFINITY : -INFINITY;
    out.p_value = 0.0;
    return out;
  }
  out.statistic = rho * std::sqrt(std::max(0.0, dof / ((rho + 1.0) * (1.0 - rho))));
  try {
    out.p_value = 2.0 * boost::math::cdf(boost::math::complement(boost::math::students_t_distribution<double>(dof),
                                                                 std::fabs(out.statistic)));
  } catch (const std::exception& e) {
    return Internal(std::string("spearman: ") + e.what());
  }
  out.p_value = std::min(1.0, out.p_value);
  return out;
}

}  // namespace nf::stats
