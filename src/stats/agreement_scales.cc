#include "stats/agreement_scales.h"

#include <cmath>
#include <string>

#include <fmt/format.h>

namespace nf::stats {

namespace {

// Items x categories counts of `ratings` on a scale of k categories; InvalidArgument for
// a code outside it.
Result<std::vector<int64_t>> declared_counts(const char* fn, const RatingTable& ratings, int64_t k) {
  if (k < 1) return InvalidArgument(fmt::format("{}: number of categories ({}) must be >= 1", fn, k));
  std::vector<int64_t> counts(ratings.size() * static_cast<size_t>(k), 0);
  for (size_t i = 0; i < ratings.size(); ++i) {
    for (size_t r = 0; r < ratings[i].size(); ++r) {
      const auto& v = ratings[i][r];
      if (!v) continue;
      if (*v < 0 || *v >= k)
        return InvalidArgument(fmt::format("{}: item {} rater {}: category code {} is outside the declared scale of {} "
                                           "categories",
                                           fn, i + 1, r + 1, *v, k));
      ++counts[i * static_cast<size_t>(k) + static_cast<size_t>(*v)];
    }
  }
  return counts;
}

}  // namespace

Result<Agreement> weighted_kappa(const std::vector<std::optional<int64_t>>& a,
                                 const std::vector<std::optional<int64_t>>& b,
                                 const std::vector<double>& scale_values, KappaWeights weights) {
  if (a.size() != b.size())
    return InvalidArgument(fmt::format("weighted_kappa: rater columns differ in length ({} vs {})", a.size(), b.size()));
  const size_t k = scale_values.size();
  if (k < 2) return InvalidArgument(fmt::format("weighted_kappa: the scale needs at least two values, got {}", k));
  for (size_t i = 0; i < k; ++i) {
    if (!std::isfinite(scale_values[i]))
      return InvalidArgument(fmt::format("weighted_kappa: scale value {} is not finite", i + 1));
    if (i > 0 && !(scale_values[i] > scale_values[i - 1]))
      return InvalidArgument(fmt::format("weighted_kappa: scale values must be strictly increasing ({} then {})",
                                         scale_values[i - 1], scale_values[i]));
  }
  std::vector<double> o(k * k, 0.0);
  int64_t n = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!a[i] || !b[i]) continue;
    for (const int64_t v : {*a[i], *b[i]}) {
      if (v < 0 || v >= static_cast<int64_t>(k))
        return InvalidArgument(fmt::format("weighted_kappa: item {}: code {} is outside the scale of {} values", i + 1,
                                           v, k));
    }
    o[static_cast<size_t>(*a[i]) * k + static_cast<size_t>(*b[i])] += 1.0;
    ++n;
  }
  if (n == 0) return Undefined("weighted_kappa: no item has both ratings");
  std::vector<double> row(k, 0.0), col(k, 0.0);
  for (size_t i = 0; i < k; ++i) {
    for (size_t j = 0; j < k; ++j) {
      o[i * k + j] /= static_cast<double>(n);
      row[i] += o[i * k + j];
      col[j] += o[i * k + j];
    }
  }
  auto d = [&](size_t i, size_t j) {
    const double diff = std::fabs(scale_values[i] - scale_values[j]);
    switch (weights) {
      case KappaWeights::kNone: return i == j ? 0.0 : 1.0;
      case KappaWeights::kLinear: return diff;
      case KappaWeights::kQuadratic: return diff * diff;
    }
    return 0.0;
  };
  double d_obs = 0.0, d_exp = 0.0, d_max = 0.0;
  for (size_t i = 0; i < k; ++i) {
    for (size_t j = 0; j < k; ++j) {
      d_obs += d(i, j) * o[i * k + j];
      d_exp += d(i, j) * row[i] * col[j];
      d_max = std::max(d_max, d(i, j));
    }
  }
  if (!(d_exp > 0.0)) return Undefined("weighted_kappa: chance disagreement is 0 (every rating at one scale value)");
  Agreement out;
  out.estimate = 1.0 - d_obs / d_exp;
  out.observed = 1.0 - d_obs / d_max;
  out.expected = 1.0 - d_exp / d_max;
  out.units = n;
  out.ratings = 2 * n;
  out.categories = static_cast<int64_t>(k);
  return out;
}

Result<Agreement> fleiss_kappa_declared(const RatingTable& ratings, int64_t n_categories) {
  NF_ASSIGN_OR_RETURN(const std::vector<int64_t> counts, declared_counts("fleiss_kappa", ratings, n_categories));
  return fleiss_kappa_counts(counts, n_categories);
}

Result<Agreement> gwet_ac1_declared(const RatingTable& ratings, int64_t n_categories) {
  NF_ASSIGN_OR_RETURN(const std::vector<int64_t> counts, declared_counts("gwet_ac1", ratings, n_categories));
  const auto q = static_cast<size_t>(n_categories);
  if (q < 2) return Undefined("gwet_ac1: needs a rating scale of at least two categories");
  double pa = 0.0;
  int64_t n_pa = 0, n_pi = 0, ratings_used = 0;
  std::vector<double> pi(q, 0.0);
  for (size_t i = 0; i < ratings.size(); ++i) {
    const int64_t* c = &counts[i * q];
    int64_t ri = 0;
    for (size_t k = 0; k < q; ++k) ri += c[k];
    if (ri >= 1) {
      ++n_pi;
      for (size_t k = 0; k < q; ++k) pi[k] += static_cast<double>(c[k]) / static_cast<double>(ri);
    }
    if (ri >= 2) {
      ++n_pa;
      ratings_used += ri;
      double s = 0.0;
      for (size_t k = 0; k < q; ++k) s += static_cast<double>(c[k]) * static_cast<double>(c[k] - 1);
      pa += s / (static_cast<double>(ri) * static_cast<double>(ri - 1));
    }
  }
  if (n_pa == 0) return Undefined("gwet_ac1: no item has two or more ratings");
  pa /= static_cast<double>(n_pa);
  double pe = 0.0;
  for (size_t k = 0; k < q; ++k) {
    const double p = pi[k] / static_cast<double>(n_pi);
    pe += p * (1.0 - p);
  }
  pe /= static_cast<double>(q - 1);
  if (pe >= 1.0) return Undefined("gwet_ac1: chance agreement is 1");
  Agreement out;
  out.estimate = (pa - pe) / (1.0 - pe);
  out.observed = pa;
  out.expected = pe;
  out.units = n_pa;
  out.ratings = ratings_used;
  out.categories = n_categories;
  return out;
}

}  // namespace nf::stats
