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

// The exact two-sided permutation p-value of Spearman's rho over all n! pairings of the
// y ranks with the x ranks (Heap's algorithm). rho is increasing in S = sum rx_i ry_pi(i)
// (the rank variances do not change under pairing), and doubled average ranks are
// integers, so S is compared exactly in integers.
double permutation_p(const std::vector<double>& rx, const std::vector<double>& ry) {
  const size_t n = rx.size();
  std::vector<int64_t> a(n), b(n);
  for (size_t i = 0; i < n; ++i) {
    a[i] = std::llround(2.0 * rx[i]);
    b[i] = std::llround(2.0 * ry[i]);
  }
  int64_t s = 0;
  for (size_t i = 0; i < n; ++i) s += a[i] * b[i];
  const int64_t observed = s;
  int64_t ge = 0, le = 0, total = 0;
  auto count = [&] {
    ++total;
    if (s >= observed) ++ge;
    if (s <= observed) ++le;
  };
  count();
  std::vector<size_t> c(n, 0);
  size_t i = 1;
  while (i < n) {
    if (c[i] < i) {
      const size_t j = i % 2 == 0 ? 0 : c[i];
      // Swapping b[j] and b[i] changes S by (a[j] - a[i]) (b[i] - b[j]).
      s += (a[j] - a[i]) * (b[i] - b[j]);
      std::swap(b[j], b[i]);
      count();
      ++c[i];
      i = 1;
    } else {
      c[i] = 0;
      ++i;
    }
  }
  return std::min(1.0, 2.0 * static_cast<double>(std::min(ge, le)) / static_cast<double>(total));
}

}  // namespace

Result<double> kendall_exact_p_value(int64_t n, int64_t discordant) {
  if (n < 1) return InvalidArgument("kendall_exact_p_value: n must be positive, got " + std::to_string(n));
  const int64_t n0 = n * (n - 1) / 2;
  if (discordant < 0 || discordant > n0) {
    return InvalidArgument("kendall_exact_p_value: " + std::to_string(discordant) +
                           " discordant pairs is outside [0, " + std::to_string(n0) + "]");
  }
  const int64_t c = std::min(discordant, n0 - discordant);  // the smaller tail
  if (n <= 2 || 2 * c == n0) return 1.0;
  if (static_cast<double>(n) * static_cast<double>(c) > 2.0e9) {
    return InvalidArgument("kendall_exact_p_value: n = " + std::to_string(n) + " with " + std::to_string(c) +
                           " pairs in the smaller tail is too large for the exact distribution (n x tail > 2e9); use "
                           "the asymptotic p-value");
  }
  // f[k] = P[K_j = k] for the inversions K_j of a random permutation of j, k = 0..c:
  // f_j(k) = (1/j) sum_{i=0}^{min(k, j-1)} f_{j-1}(k - i), a sliding window over f_{j-1}.
  // In the lower tail f_{j-1} is non-decreasing in k, so the window's subtraction loses no
  // relative precision.
  std::vector<double> f(static_cast<size_t>(c) + 1, 0.0), g(f.size());
  f[0] = 1.0;  // j = 1
  for (int64_t j = 2; j <= n; ++j) {
    double window = 0.0;
    for (int64_t k = 0; k <= c; ++k) {
      window += f[static_cast<size_t>(k)];
      if (k - j >= 0) window -= f[static_cast<size_t>(k - j)];
      g[static_cast<size_t>(k)] = window / static_cast<double>(j);
    }
    std::swap(f, g);
  }
  const double tail = std::accumulate(f.begin(), f.end(), 0.0);
  return std::min(1.0, 2.0 * tail);
}

Result<Correlation> kendall_tau_b(const std::vector<double>& x, const std::vector<double>& y, RankPMethod method) {
  NF_RETURN_IF_ERROR(check_pair("kendall_tau_b", x, y));
  if (constant(x) || constant(y)) return Undefined("kendall_tau_b: x or y is constant, so tau-b is undefined");
  const size_t n = x.size();
  int64_t concordant = 0, discordant = 0;
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = i + 1; j < n; ++j) {
      const double dx = x[i] - x[j], dy = y[i] - y[j];
      const int prod = (dx > 0 ? 1 : dx < 0 ? -1 : 0) * (dy > 0 ? 1 : dy < 0 ? -1 : 0);  // signs: no underflow
      if (prod > 0) ++concordant;
      else if (prod < 0) ++discordant;
    }
  }
  const double s = static_cast<double>(concordant - discordant);  // C - D
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
  const bool ties = tx.pairs > 0 || ty.pairs > 0;
  const int64_t pairs = out.n * (out.n - 1) / 2;
  if (method == RankPMethod::kExact && ties) {
    return InvalidArgument("kendall_tau_b: x or y has ties, so the exact p-value is not available (use the "
                           "asymptotic one)");
  }
  const bool exact = method == RankPMethod::kExact ||
                     (method == RankPMethod::kAuto && !ties &&
                      (out.n <= 33 || std::min(discordant, pairs - discordant) <= 1));
  if (exact) {
    NF_ASSIGN_OR_RETURN(out.p_value, kendall_exact_p_value(out.n, discordant));
    out.exact = true;
    out.p_method = "exact null distribution of the discordant pairs (no ties";
    out.p_method += method == RankPMethod::kExact ? "; exact requested)"
                    : out.n <= 33                 ? ", n <= 33: scipy kendalltau's default)"
                                                  : ", at most one discordant or concordant pair: scipy's default)";
    return out;
  }
  try {
    out.p_value = 2.0 * boost::math::cdf(boost::math::complement(boost::math::normal_distribution<double>(),
                                                                 std::fabs(out.statistic)));
  } catch (const std::exception& e) {
    return Internal(std::string("kendall_tau_b: ") + e.what());
  }
  out.p_value = std::min(1.0, out.p_value);
  out.p_method = method == RankPMethod::kAsymptotic ? "tie-corrected normal approximation (asymptotic requested)"
                 : ties ? "tie-corrected normal approximation (ties: no exact distribution; scipy's default)"
                        : "normal approximation (n > 33: scipy kendalltau's default)";
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

Result<Correlation> spearman(const std::vector<double>& x, const std::vector<double>& y, RankPMethod method) {
  NF_RETURN_IF_ERROR(check_pair("spearman", x, y));
  if (constant(x) || constant(y)) return Undefined("spearman: x or y is constant, so rho is undefined");
  const size_t n = x.size();
  if (method == RankPMethod::kExact && static_cast<int64_t>(n) > kSpearmanExactMaxN) {
    return InvalidArgument("spearman: the exact permutation p-value enumerates n! pairings and is offered up to n = " +
                           std::to_string(kSpearmanExactMaxN) + "; got n = " + std::to_string(n));
  }
  const std::vector<double> rx = average_ranks(x), ry = average_ranks(y);
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
  const bool perfect = std::fabs(rho) >= 1.0;
  if (perfect) {
    out.statistic = rho > 0 ? INFINITY : -INFINITY;
  } else {
    out.statistic = rho * std::sqrt(std::max(0.0, dof / ((rho + 1.0) * (1.0 - rho))));
  }
  const bool enumerate = method == RankPMethod::kExact ||
                         (method == RankPMethod::kAuto && static_cast<int64_t>(n) <= kSpearmanExactMaxN);
  if (enumerate) {
    out.p_value = permutation_p(rx, ry);
    out.exact = true;
    out.p_method = "exact permutation p over all " + std::to_string(n) + "! pairings" +
                   (method == RankPMethod::kExact ? " (exact requested)"
                                                  : " (n <= " + std::to_string(kSpearmanExactMaxN) + ")");
    return out;
  }
  if (perfect && method == RankPMethod::kAuto) {
    // P[rho* = rho] = (pairings that leave the y ranks in place) / n! = prod_g t_g! / n!.
    std::map<double, double> groups;
    for (double v : ry) groups[v] += 1.0;
    double log_mass = -std::lgamma(nd + 1.0);
    for (const auto& [value, t] : groups) {
      (void)value;
      log_mass += std::lgamma(t + 1.0);
    }
    out.p_value = std::min(1.0, 2.0 * std::exp(log_mass));
    out.exact = true;
    out.p_method = "exact permutation p of a perfect ranking, 2 prod(ties!) / n! (the t approximation gives 0 here)";
    return out;
  }
  out.p_method = method == RankPMethod::kAsymptotic ? "t distribution with n-2 df (asymptotic requested)"
                                                    : "t distribution with n-2 df (n > " +
                                                          std::to_string(kSpearmanExactMaxN) + ": scipy spearmanr)";
  if (perfect) {
    out.p_value = 0.0;
    return out;
  }
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
