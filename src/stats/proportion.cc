#include "stats/proportion.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <string>

#include <boost/math/distributions/beta.hpp>
#include <boost/math/distributions/binomial.hpp>
#include <boost/math/distributions/normal.hpp>

namespace nf::stats {

namespace {

Status check_counts(const char* fn, int64_t x, int64_t n) {
  if (n <= 0) return InvalidArgument(std::string(fn) + ": trials must be positive, got " + std::to_string(n));
  if (x < 0) return InvalidArgument(std::string(fn) + ": successes must be non-negative, got " + std::to_string(x));
  if (x > n) {
    return InvalidArgument(std::string(fn) + ": successes (" + std::to_string(x) + ") exceeds trials (" +
                           std::to_string(n) + ")");
  }
  return Status::Ok();
}

}  // namespace

Status check_level(const char* fn, double level) {
  if (!(level > 0.0 && level < 1.0)) {
    return InvalidArgument(std::string(fn) + ": level must be in (0, 1), got " + std::to_string(level));
  }
  return Status::Ok();
}

Result<double> normal_quantile(double p) {
  if (!(p > 0.0 && p < 1.0)) return InvalidArgument("normal_quantile: p must be in (0, 1)");
  try {
    return boost::math::quantile(boost::math::normal_distribution<double>(0.0, 1.0), p);
  } catch (const std::exception& e) {
    return Internal(std::string("normal_quantile: ") + e.what());
  }
}

Result<Interval> wilson(int64_t x, int64_t n, double level) {
  NF_RETURN_IF_ERROR(check_counts("wilson", x, n));
  NF_RETURN_IF_ERROR(check_level("wilson", level));
  NF_ASSIGN_OR_RETURN(const double z, normal_quantile(1.0 - (1.0 - level) / 2.0));
  const double nd = static_cast<double>(n);
  const double p = static_cast<double>(x) / nd;
  const double z2 = z * z;
  const double denom = 1.0 + z2 / nd;
  const double center = (p + z2 / (2.0 * nd)) / denom;
  const double half = z * std::sqrt(p * (1.0 - p) / nd + z2 / (4.0 * nd * nd)) / denom;
  Interval out;
  out.estimate = p;
  // x == 0 and x == n have exact bounds 0 and 1; pin them against rounding (0.9999...).
  out.low = x == 0 ? 0.0 : std::clamp(center - half, 0.0, 1.0);
  out.high = x == n ? 1.0 : std::clamp(center + half, 0.0, 1.0);
  return out;
}

Result<Interval> clopper_pearson(int64_t x, int64_t n, double level) {
  NF_RETURN_IF_ERROR(check_counts("clopper_pearson", x, n));
  NF_RETURN_IF_ERROR(check_level("clopper_pearson", level));
  const double alpha = 1.0 - level;
  Interval out;
  out.estimate = static_cast<double>(x) / static_cast<double>(n);
  try {
    out.low = x == 0 ? 0.0
                     : boost::math::quantile(boost::math::beta_distribution<double>(static_cast<double>(x),
                                                                                   static_cast<double>(n - x + 1)),
                                             alpha / 2.0);
    out.high = x == n ? 1.0
                      : boost::math::quantile(
                            boost::math::complement(boost::math::beta_distribution<double>(
                                                        static_cast<double>(x + 1), static_cast<double>(n - x)),
                                                    alpha / 2.0));
  } catch (const std::exception& e) {
    return Internal(std::string("clopper_pearson: ") + e.what());
  }
  return out;
}

Result<double> binom_test(int64_t x, int64_t n, double p0, Alternative alt) {
  NF_RETURN_IF_ERROR(check_counts("binom_test", x, n));
  if (!(p0 > 0.0 && p0 < 1.0)) {
    return InvalidArgument("binom_test: p0 must be in (0, 1), got " + std::to_string(p0));
  }
  try {
    const boost::math::binomial_distribution<double> dist(static_cast<double>(n), p0);
    const double k = static_cast<double>(x);
    auto cdf = [&](double j) { return j < 0 ? 0.0 : boost::math::cdf(dist, j); };
    // P[X >= j]
    auto upper = [&](double j) {
      if (j <= 0) return 1.0;
      if (j > static_cast<double>(n)) return 0.0;
      return boost::math::cdf(boost::math::complement(dist, j - 1.0));
    };
    auto pmf = [&](int64_t j) { return boost::math::pdf(dist, static_cast<double>(j)); };
    double p = 0.0;
    if (alt == Alternative::kLess) {
      p = cdf(k);
    } else if (alt == Alternative::kGreater) {
      p = upper(k);
    } else {
      const double np = p0 * static_cast<double>(n);
      const double thr = pmf(x) * (1.0 + 1e-7);
      if (k == np) {
        p = 1.0;
      } else if (k < np) {
        // pmf is non-increasing on [ceil(np), n]: first j there with pmf(j) <= thr.
        int64_t lo = static_cast<int64_t>(std::ceil(np)), hi = n + 1;
        while (lo < hi) {
          const int64_t mid = lo + (hi - lo) / 2;
          if (pmf(mid) <= thr) hi = mid; else lo = mid + 1;
        }
        p = cdf(k) + upper(static_cast<double>(lo));
      } else {
        // pmf is non-decreasing on [0, floor(np)]: last j there with pmf(j) <= thr.
        int64_t lo = -1, hi = static_cast<int64_t>(std::floor(np));
        while (lo < hi) {
          const int64_t mid = lo + (hi - lo + 1) / 2;
          if (pmf(mid) <= thr) lo = mid; else hi = mid - 1;
        }
        p = cdf(static_cast<double>(lo)) + upper(k);
      }
    }
    return std::min(1.0, p);
  } catch (const std::exception& e) {
    return Internal(std::string("binom_test: ") + e.what());
  }
}

}  // namespace nf::stats
