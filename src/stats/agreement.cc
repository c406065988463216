// Inter-rater agreement statistics (see agreement.h for conventions and sources).
#include "stats/agreement.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "util/rng.h"

namespace nf::stats {
namespace {

// Chance agreement this close to 1 makes the coefficient 0/0.
constexpr double kDegenerateTol = 1e-12;
// Items with more raters than this are divided one by one in fleiss_kappa_counts().
constexpr int64_t kMaxTabulatedRaters = 4096;

struct PairCounts {
  std::vector<double> table;  // K x K, row = rater a, col = rater b
  int64_t k = 0;
  int64_t n = 0;
};

// Cross-tabulates two raters over the items both rated.
Result<PairCounts> pair_counts(const char* fn, const std::vector<std::optional<int64_t>>& a,
                               const std::vector<std::optional<int64_t>>& b, int64_t min_k = 0) {
  if (a.size() != b.size()) {
    return InvalidArgument(std::string(fn) + ": raters have different numbers of items (" +
                           std::to_string(a.size()) + " vs " + std::to_string(b.size()) + ")");
  }
  int64_t max_code = -1;
  for (size_t i = 0; i < a.size(); ++i) {
    for (const auto* v : {&a[i], &b[i]}) {
      if (!v->has_value()) continue;
      if (**v < 0) {
        return InvalidArgument(std::string(fn) + ": negative category code " + std::to_string(**v) +
                               " at item " + std::to_string(i));
      }
      max_code = std::max(max_code, **v);
    }
  }
  PairCounts pc;
  pc.k = std::max<int64_t>(max_code + 1, min_k);
  pc.table.assign(static_cast<size_t>(pc.k * pc.k), 0.0);
  for (size_t i = 0; i < a.size(); ++i) {
    if (!a[i] || !b[i]) continue;
    pc.table[static_cast<size_t>(*a[i] * pc.k + *b[i])] += 1.0;
    ++pc.n;
  }
  if (pc.n == 0) return Undefined(std::string(fn) + ": no item was rated by both raters");
  return pc;
}

struct Marginals {
  double po = 0.0;
  std::vector<double> pa, pb;
};

Marginals marginals(const PairCounts& pc) {
  Marginals m;
  const auto k = static_cast<size_t>(pc.k);
  m.pa.assign(k, 0.0);
  m.pb.assign(k, 0.0);
  const double n = static_cast<double>(pc.n);
  for (size_t r = 0; r < k; ++r) {
    for (size_t c = 0; c < k; ++c) {
      const double p = pc.table[r * k + c] / n;
      m.pa[r] += p;
      m.pb[c] += p;
      if (r == c) m.po += p;
    }
  }
  return m;
}

Result<Agreement> finish(const char* fn, double po, double pe, int64_t units, int64_t ratings, int64_t k) {
  if (1.0 - pe < kDegenerateTol) {
    return Undefined(std::string(fn) +
                     ": chance agreement is 1 (every rating falls in one category); the coefficient is undefined");
  }
  Agreement out;
  out.observed = po;
  out.expected = pe;
  out.estimate = (po - pe) / (1.0 - pe);
  out.units = units;
  out.ratings = ratings;
  out.categories = k;
  return out;
}

int64_t distinct_used(const std::vector<double>& pa, const std::vector<double>& pb) {
  int64_t used = 0;
  for (size_t j = 0; j < pa.size(); ++j) used += (pa[j] > 0.0 || pb[j] > 0.0) ? 1 : 0;
  return used;
}

}  // namespace

Result<Agreement> fleiss_kappa_counts(const std::vector<int64_t>& counts, int64_t n_categories) {
  if (n_categories < 1) {
    return InvalidArgument("fleiss_kappa: number of categories (" + std::to_string(n_categories) +
                           ") must be >= 1");
  }
  const auto k = static_cast<size_t>(n_categories);
  if (counts.size() % k != 0) {
    return InvalidArgument("fleiss_kappa: count table size (" + std::to_string(counts.size()) +
                           ") is not a multiple of the number of categories (" + std::to_string(k) + ")");
  }
  const size_t items = counts.size() / k;
  // Integer accumulation: agreeing pairs are summed per rater count n_i, and divided by
  // n_i (n_i - 1) once per distinct n_i at the end (exact, and no division per item).
  std::vector<int64_t> col(k, 0);
  std::vector<int64_t> agree_by_n;  // index n_i
  int64_t used = 0;
  int64_t ratings = 0;
  bool negative = false;
  double direct_sum = 0.0;
  for (size_t i = 0; i < items; ++i) {
    const int64_t* row = counts.data() + i * k;
    int64_t ni = 0;
    int64_t agree = 0;
    for (size_t j = 0; j < k; ++j) {
      negative |= row[j] < 0;
      ni += row[j];
      agree += row[j] * (row[j] - 1);
    }
    if (negative) {
      for (size_t j = 0; j < k; ++j) {
        if (row[j] < 0) {
          return InvalidArgument("fleiss_kappa: negative count " + std::to_string(row[j]) + " at item " +
                                 std::to_string(i) + ", category " + std::to_string(j));
        }
      }
    }
    if (ni < 2) continue;
    for (size_t j = 0; j < k; ++j) col[j] += row[j];
    if (ni > kMaxTabulatedRaters) {  // rare: many raters on one item; divide directly
      direct_sum += static_cast<double>(agree) / (static_cast<double>(ni) * static_cast<double>(ni - 1));
    } else {
      if (static_cast<size_t>(ni) >= agree_by_n.size()) agree_by_n.resize(static_cast<size_t>(ni) + 1, 0);
      agree_by_n[static_cast<size_t>(ni)] += agree;
    }
    ++used;
    ratings += ni;
  }
  double sum_pi = direct_sum;
  for (size_t n = 2; n < agree_by_n.size(); ++n) {
    sum_pi += static_cast<double>(agree_by_n[n]) / static_cast<double>(n * (n - 1));
  }
  if (used == 0) return Undefined("fleiss_kappa: no item has at least two ratings");
  double pe = 0.0;
  int64_t present = 0;
  for (size_t j = 0; j < k; ++j) {
    const double p = static_cast<double>(col[j]) / static_cast<double>(ratings);
    pe += p * p;
    present += col[j] > 0 ? 1 : 0;
  }
  return finish("fleiss_kappa", sum_pi / static_cast<double>(used), pe, used, ratings, present);
}

Result<Agreement> fleiss_kappa(const RatingTable& ratings) {
  int64_t max_code = -1;
  for (size_t i = 0; i < ratings.size(); ++i) {
    for (const auto& v : ratings[i]) {
      if (!v) continue;
      if (*v < 0) {
        return InvalidArgument("fleiss_kappa: negative category code " + std::to_string(*v) + " at item " +
                               std::to_string(i));
      }
      max_code = std::max(max_code, *v);
    }
  }
  if (max_code < 0) return Undefined("fleiss_kappa: no ratings");
  const int64_t k = max_code + 1;
  std::vector<int64_t> counts(ratings.size() * static_cast<size_t>(k), 0);
  for (size_t i = 0; i < ratings.size(); ++i) {
    for (const auto& v : ratings[i]) {
      if (v) ++counts[i * static_cast<size_t>(k) + static_cast<size_t>(*v)];
    }
  }
  return fleiss_kappa_counts(counts, k);
}

Result<Agreement> cohen_kappa(const std::vector<std::optional<int64_t>>& a,
                              const std::vector<std::optional<int64_t>>& b) {
  NF_ASSIGN_OR_RETURN(PairCounts pc, pair_counts("cohen_kappa", a, b));
  const Marginals m = marginals(pc);
  double pe = 0.0;
  for (size_t j = 0; j < m.pa.size(); ++j) pe += m.pa[j] * m.pb[j];
  return finish("cohen_kappa", m.po, pe, pc.n, 2 * pc.n, distinct_used(m.pa, m.pb));
}

Result<Agreement> scott_pi(const std::vector<std::optional<int64_t>>& a,
                           const std::vector<std::optional<int64_t>>& b) {
  NF_ASSIGN_OR_RETURN(PairCounts pc, pair_counts("scott_pi", a, b));
  const Marginals m = marginals(pc);
  double pe = 0.0;
  for (size_t j = 0; j < m.pa.size(); ++j) {
    const double pi = 0.5 * (m.pa[j] + m.pb[j]);
    pe += pi * pi;
  }
  return finish("scott_pi", m.po, pe, pc.n, 2 * pc.n, distinct_used(m.pa, m.pb));
}

Result<Agreement> gwet_ac1(const std::vector<std::optional<int64_t>>& a,
                           const std::vector<std::optional<int64_t>>& b, int64_t n_categories) {
  if (n_categories < 0) {
    return InvalidArgument("gwet_ac1: number of categories (" + std::to_string(n_categories) + ") is negative");
  }
  NF_ASSIGN_OR_RETURN(PairCounts pc, pair_counts("gwet_ac1", a, b));
  if (n_categories > 0 && pc.k > n_categories) {
    return InvalidArgument("gwet_ac1: category code " + std::to_string(pc.k - 1) +
                           " is outside a scale of " + std::to_string(n_categories) + " categories");
  }
  const int64_t k = n_categories > 0 ? n_categories : std::max<int64_t>(2, pc.k);
  if (k < 2) return Undefined("gwet_ac1: needs a rating scale of at least two categories");
  const Marginals m = marginals(pc);
  double pe = 0.0;
  for (size_t j = 0; j < m.pa.size(); ++j) {
    const double pi = 0.5 * (m.pa[j] + m.pb[j]);
    pe += pi * (1.0 - pi);
  }
  pe /= static_cast<double>(k - 1);
  return finish("gwet_ac1", m.po, pe, pc.n, 2 * pc.n, k);
}

Result<Agreement> raw_agreement(const std::vector<std::optional<int64_t>>& a,
                                const std::vector<std::optional<int64_t>>& b) {
  NF_ASSIGN_OR_RETURN(PairCounts pc, pair_counts("raw_agreement", a, b));
  const Marginals m = marginals(pc);
  Agreement out;
  out.estimate = m.po;
  out.observed = m.po;
  out.expected = 0.0;
  out.units = pc.n;
  out.ratings = 2 * pc.n;
  out.categories = distinct_used(m.pa, m.pb);
  return out;
}

Result<Agreement> krippendorff_alpha_nominal(const RatingTable& ratings) {
  int64_t max_code = -1;
  for (size_t i = 0; i < ratings.size(); ++i) {
    for (const auto& v : ratings[i]) {
      if (!v) continue;
      if (*v < 0) {
        return InvalidArgument("krippendorff_alpha: negative category code " + std::to_string(*v) +
                               " at item " + std::to_string(i));
      }
      max_code = std::max(max_code, *v);
    }
  }
  if (max_code < 0) return Undefined("krippendorff_alpha: no ratings");
  const auto k = static_cast<size_t>(max_code + 1);
  std::vector<double> o(k * k, 0.0);  // coincidence matrix
  std::vector<int64_t> unit_counts(k);
  int64_t units = 0;
  int64_t values = 0;
  for (const auto& row : ratings) {
    std::fill(unit_counts.begin(), unit_counts.end(), 0);
    int64_t mu = 0;
    for (const auto& v : row) {
      if (v) {
        ++unit_counts[static_cast<size_t>(*v)];
        ++mu;
      }
    }
    if (mu < 2) continue;
    ++units;
    values += mu;
    const double w = 1.0 / static_cast<double>(mu - 1);
    for (size_t c = 0; c < k; ++c) {
      if (unit_counts[c] == 0) continue;
      for (size_t d = 0; d < k; ++d) {
        const double pairs = c == d ? static_cast<double>(unit_counts[c] * (unit_counts[c] - 1))
                                    : static_cast<double>(unit_counts[c] * unit_counts[d]);
        o[c * k + d] += pairs * w;
      }
    }
  }
  if (values < 2) return Undefined("krippendorff_alpha: fewer than two pairable values");
  std::vector<double> nc(k, 0.0);
  double n = 0.0;
  double disagree = 0.0;
  for (size_t c = 0; c < k; ++c) {
    for (size_t d = 0; d < k; ++d) {
      nc[c] += o[c * k + d];
      if (c != d) disagree += o[c * k + d];
    }
    n += nc[c];
  }
  double expected_disagree = 0.0;
  int64_t present = 0;
  for (size_t c = 0; c < k; ++c) {
    present += nc[c] > 0.0 ? 1 : 0;
    for (size_t d = 0; d < k; ++d) {
      if (c != d) expected_disagree += nc[c] * nc[d];
    }
  }
  if (expected_disagree <= 0.0) {
    return Undefined("krippendorff_alpha: only one category occurs; expected disagreement is 0");
  }
  const double d_o = disagree / n;
  const double d_e = expected_disagree / (n * (n - 1.0));
  Agreement out;
  out.estimate = 1.0 - d_o / d_e;
  out.observed = 1.0 - d_o;
  out.expected = 1.0 - d_e;
  out.units = units;
  out.ratings = values;
  out.categories = present;
  return out;
}

namespace {

// The percentile bootstrap shared by agreement_bootstrap() and fleiss_kappa_counts_bootstrap():
// rows (one per item) are grouped by cluster label and whole clusters are drawn with
// replacement, replicate r from Rng::stream(seed, {r}), so two callers given the same items
// in the same order draw the same items.
template <typename Row, typename Stat>
Result<AgreementInterval> rows_bootstrap(const char* fn, const std::vector<Row>& rows, const Stat& stat, int resamples,
                                         uint64_t seed, double level, const std::vector<std::string>& clusters) {
  if (resamples < 1) return InvalidArgument(std::string(fn) + ": resamples (" + std::to_string(resamples) + ") must be >= 1");
  if (!(level > 0.0 && level < 1.0)) {
    return InvalidArgument(std::string(fn) + ": level (" + std::to_string(level) + ") must be in (0, 1)");
  }
  if (!clusters.empty() && clusters.size() != rows.size()) {
    return InvalidArgument(std::string(fn) + ": " + std::to_string(clusters.size()) + " cluster labels for " +
                           std::to_string(rows.size()) + " items");
  }
  NF_ASSIGN_OR_RETURN(Agreement full, stat(rows));
  std::vector<std::vector<size_t>> groups;
  if (clusters.empty()) {
    for (size_t i = 0; i < rows.size(); ++i) groups.push_back({i});
  } else {
    std::map<std::string, size_t> index;
    for (size_t i = 0; i < clusters.size(); ++i) {
      auto [it, fresh] = index.emplace(clusters[i], groups.size());
      if (fresh) groups.emplace_back();
      groups[it->second].push_back(i);
    }
  }
  std::vector<double> values;
  values.reserve(static_cast<size_t>(resamples));
  AgreementInterval out;
  out.estimate = full.estimate;
  out.resamples = resamples;
  out.seed = seed;
  std::vector<Row> sample;
  for (int r = 0; r < resamples; ++r) {
    Rng rng = Rng::stream(seed, {static_cast<uint64_t>(r)});
    sample.clear();
    for (size_t g = 0; g < groups.size(); ++g) {
      const auto& pick = groups[rng.uniform_int(groups.size())];
      for (size_t i : pick) sample.push_back(rows[i]);
    }
    auto v = stat(sample);
    if (!v.ok()) {
      if (v.status().code() != StatusCode::kUndefined) return v.status();
      ++out.undefined;
      continue;
    }
    values.push_back(v->estimate);
  }
  if (values.empty()) return Undefined(std::string(fn) + ": the statistic is undefined in every replicate");
  std::sort(values.begin(), values.end());
  auto quantile = [&](double q) {
    const double pos = q * static_cast<double>(values.size() - 1);
    const auto lo = static_cast<size_t>(std::floor(pos));
    const size_t hi = std::min(lo + 1, values.size() - 1);
    return values[lo] + (pos - static_cast<double>(lo)) * (values[hi] - values[lo]);
  };
  out.low = quantile((1.0 - level) / 2.0);
  out.high = quantile(1.0 - (1.0 - level) / 2.0);
  return out;
}

}  // namespace

Result<AgreementInterval> agreement_bootstrap(const RatingTable& ratings, const AgreementFn& stat, int resamples,
                                              uint64_t seed, double level, const std::vector<std::string>& clusters) {
  return rows_bootstrap("agreement_bootstrap", ratings, stat, resamples, seed, level, clusters);
}

Result<AgreementInterval> fleiss_kappa_counts_bootstrap(const std::vector<int64_t>& counts, int64_t n_categories,
                                                        int resamples, uint64_t seed, double level,
                                                        const std::vector<std::string>& clusters) {
  if (n_categories < 1 || counts.size() % static_cast<size_t>(n_categories) != 0) {
    return fleiss_kappa_counts(counts, n_categories).status();  // the same InvalidArgument
  }
  const auto k = static_cast<size_t>(n_categories);
  std::vector<std::vector<int64_t>> rows;
  rows.reserve(counts.size() / k);
  for (size_t i = 0; i < counts.size(); i += k)
    rows.emplace_back(counts.begin() + static_cast<std::ptrdiff_t>(i), counts.begin() + static_cast<std::ptrdiff_t>(i + k));
  std::vector<int64_t> flat;
  auto stat = [&](const std::vector<std::vector<int64_t>>& sample) {
    flat.clear();
    for (const auto& row : sample) flat.insert(flat.end(), row.begin(), row.end());
    return fleiss_kappa_counts(flat, n_categories);
  };
  return rows_bootstrap("fleiss_kappa_counts_bootstrap", rows, stat, resamples, seed, level, clusters);
}

}  // namespace nf::stats
