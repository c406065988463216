#include "stats/paired.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <string>

#include <boost/math/distributions/binomial.hpp>
#include <boost/math/distributions/chi_squared.hpp>
#include <boost/math/distributions/students_t.hpp>

#include "stats/bootstrap.h"
#include "stats/proportion.h"
#include "util/rng.h"

namespace nf::stats {

namespace {

Status check_discordant(const char* fn, int64_t b, int64_t c) {
  if (b < 0 || c < 0) {
    return InvalidArgument(std::string(fn) + ": discordant counts must be non-negative, got b=" + std::to_string(b) +
                           ", c=" + std::to_string(c));
  }
  return Status::Ok();
}

}  // namespace

Result<double> mcnemar_exact(int64_t b, int64_t c) {
  NF_RETURN_IF_ERROR(check_discordant("mcnemar_exact", b, c));
  if (b + c == 0) return 1.0;
  try {
    const boost::math::binomial_distribution<double> dist(static_cast<double>(b + c), 0.5);
    const double p = 2.0 * boost::math::cdf(dist, static_cast<double>(std::min(b, c)));
    return std::min(1.0, p);
  } catch (const std::exception& e) {
    return Internal(std::string("mcnemar_exact: ") + e.what());
  }
}

Result<double> mcnemar_mid_p(int64_t b, int64_t c) {
  NF_RETURN_IF_ERROR(check_discordant("mcnemar_mid_p", b, c));
  if (b + c == 0) return 1.0;
  try {
    const boost::math::binomial_distribution<double> dist(static_cast<double>(b + c), 0.5);
    const auto m = static_cast<double>(std::min(b, c));
    const double p = 2.0 * (boost::math::cdf(dist, m) - 0.5 * boost::math::pdf(dist, m));
    return std::min(1.0, p);
  } catch (const std::exception& e) {
    return Internal(std::string("mcnemar_mid_p: ") + e.what());
  }
}

Result<McNemarChi2> mcnemar_chi2(int64_t b, int64_t c, bool correction) {
  NF_RETURN_IF_ERROR(check_discordant("mcnemar_chi2", b, c));
  McNemarChi2 out;
  if (b + c == 0) return out;
  const double diff = std::fabs(static_cast<double>(b - c)) - (correction ? 1.0 : 0.0);
  const double d = std::max(0.0, diff);
  out.statistic = d * d / static_cast<double>(b + c);
  if (out.statistic == 0.0) {
    out.p_value = 1.0;
    return out;
  }
  try {
    out.p_value = boost::math::cdf(boost::math::complement(boost::math::chi_squared_distribution<double>(1.0),
                                                           out.statistic));
  } catch (const std::exception& e) {
    return Internal(std::string("mcnemar_chi2: ") + e.what());
  }
  return out;
}

Result<PairedDifference> paired_difference(const std::vector<int>& a, const std::vector<int>& b, int resamples,
                                           uint64_t seed, double level) {
  if (a.size() != b.size()) {
    return InvalidArgument("paired_difference: a has " + std::to_string(a.size()) + " items, b has " +
                           std::to_string(b.size()));
  }
  if (a.empty()) return InvalidArgument("paired_difference: no items");
  if (resamples < 1) return InvalidArgument("paired_difference: resamples must be >= 1");
  NF_RETURN_IF_ERROR(check_level("paired_difference", level));
  const size_t n = a.size();
  std::vector<int> d(n);
  PairedDifference out;
  int64_t sa = 0, sb = 0;
  for (size_t i = 0; i < n; ++i) {
    if ((a[i] != 0 && a[i] != 1) || (b[i] != 0 && b[i] != 1)) {
      return InvalidArgument("paired_difference: item " + std::to_string(i) + " has a value other than 0/1");
    }
    sa += a[i];
    sb += b[i];
    d[i] = a[i] - b[i];
    if (d[i] == 1) ++out.b10;
    if (d[i] == -1) ++out.c01;
  }
  const double nd = static_cast<double>(n);
  out.n = static_cast<int64_t>(n);
  out.rate_a = static_cast<double>(sa) / nd;
  out.rate_b = static_cast<double>(sb) / nd;
  out.estimate = static_cast<double>(out.b10 - out.c01) / nd;
  if (n > 1) {
    // sum (d - mean)^2 = (b + c) - n mean^2 for d in {-1, 0, 1}.
    const double ss = std::max(0.0, static_cast<double>(out.b10 + out.c01) - nd * out.estimate * out.estimate);
    out.se = std::sqrt(ss / (nd - 1.0)) / std::sqrt(nd);
  }
  out.resamples = resamples;
  out.seed = seed;
  std::vector<double> reps(static_cast<size_t>(resamples));
  for (int r = 0; r < resamples; ++r) {
    Rng rng = Rng::stream(seed, {static_cast<uint64_t>(r)});
    int64_t s = 0;
    for (size_t k = 0; k < n; ++k) s += d[static_cast<size_t>(rng.uniform_int(n))];
    reps[static_cast<size_t>(r)] = static_cast<double>(s) / nd;
  }
  NF_ASSIGN_OR_RETURN(const Interval iv, percentile_interval(reps, level));
  out.low = iv.low;
  out.high = iv.high;
  return out;
}

Result<Equivalence> tost_paired(const std::vector<int>& a, const std::vector<int>& b, double margin, int resamples,
                                uint64_t seed) {
  if (!(margin > 0.0)) return InvalidArgument("tost_paired: margin must be positive, got " + std::to_string(margin));
  Equivalence out;
  out.margin = margin;
  NF_ASSIGN_OR_RETURN(out.diff, paired_difference(a, b, resamples, seed, 0.90));
  out.equivalent = out.diff.low > -margin && out.diff.high < margin;
  if (out.diff.n < 2) return Undefined("tost_paired: need at least 2 items for the t statistic");
  if (out.diff.se == 0.0) {
    return Undefined("tost_paired: every item has the same difference, so the paired standard error is 0");
  }
  try {
    const boost::math::students_t_distribution<double> t(static_cast<double>(out.diff.n - 1));
    const double t_low = (out.diff.estimate + margin) / out.diff.se;
    const double t_upp = (out.diff.estimate - margin) / out.diff.se;
    out.p_lower = boost::math::cdf(boost::math::complement(t, t_low));
    out.p_upper = boost::math::cdf(t, t_upp);
  } catch (const std::exception& e) {
    return Internal(std::string("tost_paired: ") + e.what());
  }
  out.p_tost = std::max(out.p_lower, out.p_upper);
  return out;
}

}  // namespace nf::stats
