// Logistic regression by IRLS with separation detection (see logistic.h).
#include "stats/logistic.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "util/strings.h"

namespace nf::stats {
namespace {

// |eta| beyond this means a fitted probability within ~1e-13 of 0 or 1: separation.
constexpr double kEtaSeparation = 30.0;

std::string fmt_response(double v) { return v > 0.5 ? "1" : "0"; }

}  // namespace

Result<LogitCoef> LogitFit::coef(const std::string& name) const {
  std::vector<std::string> names;
  for (const auto& c : coefs) {
    if (c.name == name) return c;
    names.push_back(c.name);
  }
  return NotFound("logit: no coefficient named '" + name + "'" + did_you_mean(name, names));
}

Result<LogitFit> logit_fit(const Eigen::MatrixXd& x, const Eigen::VectorXd& y, const std::vector<std::string>& names,
                           const LogitOptions& options) {
  const Eigen::Index n = x.rows();
  const Eigen::Index p = x.cols();
  if (n == 0 || p == 0) return InvalidArgument("logit: empty design");
  if (y.size() != n) {
    return InvalidArgument("logit: design has " + std::to_string(n) + " rows, response has " +
                           std::to_string(y.size()));
  }
  if (!names.empty() && static_cast<Eigen::Index>(names.size()) != p) {
    return InvalidArgument("logit: " + std::to_string(names.size()) + " names for " + std::to_string(p) + " columns");
  }
  auto col_name = [&](Eigen::Index j) {
    if (!names.empty()) return names[static_cast<size_t>(j)];
    std::string s = "x";  // (not "x" + to_string: GCC 12 -O3 raises a false -Wrestrict)
    s += std::to_string(j);
    return s;
  };
  double ysum = 0.0;
  for (Eigen::Index i = 0; i < n; ++i) {
    if (y(i) != 0.0 && y(i) != 1.0) {
      return InvalidArgument("logit: response at row " + std::to_string(i) + " is " + std::to_string(y(i)) +
                             ", not 0 or 1");
    }
    ysum += y(i);
  }
  if (ysum == 0.0 || ysum == static_cast<double>(n)) {
    return FailedPrecondition("separation: the response is " + fmt_response(y(0)) +
                              " on every row; the intercept would be infinite");
  }
  // Quasi-complete separation by an indicator column: one branch-free pass per column.
  for (Eigen::Index j = 0; j < p; ++j) {
    const double* c = x.col(j).data();
    bool indicator = true;
    double ones = 0.0;
    double y_ones = 0.0;
    for (Eigen::Index i = 0; i < n; ++i) {
      indicator &= (c[i] == 0.0) | (c[i] == 1.0);
      ones += c[i];
      y_ones += c[i] * y(i);
    }
    if (!indicator || ones == 0.0 || ones == static_cast<double>(n)) continue;
    if (y_ones != 0.0 && y_ones != ones) continue;
    const std::string first = y_ones == 0.0 ? "0" : "1";
    return FailedPrecondition("separation: every row with " + col_name(j) + " = 1 has y = " + first +
                              " (quasi-complete separation); the coefficient of " + col_name(j) +
                              " would be infinite");
  }

  Eigen::VectorXd beta = Eigen::VectorXd::Zero(p);
  Eigen::VectorXd eta(n), mu(n), w(n), z(n);
  Eigen::MatrixXd xtwx(p, p);
  Eigen::MatrixXd xw(n, p);
  Eigen::VectorXd sw(n);
  LogitFit fit;
  bool converged = false;
  auto diverging = [&]() {
    Eigen::Index worst = 0;
    double worst_abs = -1.0;
    for (Eigen::Index j = (p > 1 ? 1 : 0); j < p; ++j) {
      if (std::abs(beta(j)) > worst_abs) {
        worst_abs = std::abs(beta(j));
        worst = j;
      }
    }
    return FailedPrecondition("separation: fitted probabilities reach 0 or 1 (|linear predictor| " +
                              std::to_string(eta.cwiseAbs().maxCoeff()) + "); the coefficient of " +
                              col_name(worst) + " diverges (" + std::to_string(beta(worst)) +
                              " and growing): complete or quasi-complete separation");
  };
  for (int it = 1; it <= options.max_iter; ++it) {
    eta.noalias() = x * beta;
    if (eta.cwiseAbs().maxCoeff() > kEtaSeparation) return diverging();
    // Vectorised (Eigen packet exp): mu = logistic(eta), w = mu (1 - mu), z = y - mu.
    mu = (1.0 + (-eta.array()).exp()).inverse();
    w = (mu.array() * (1.0 - mu.array())).max(1e-300);
    z = y - mu;  // score residual
    sw = w.array().sqrt();
    xw = x.array().colwise() * sw.array();
    // X' W X as 8x8-ish dot products of contiguous columns: Eigen's coefficient-wise lazy
    // product beats its blocked GEMM (packing overhead) for a few columns.
    xtwx.noalias() = xw.transpose().lazyProduct(xw);
    if (it == 1) {
      // Rank check on X'WX = X'X / 4 (beta = 0): an aliased column has no estimable
      // coefficient. The pivoted QR of X runs only to name it.
      Eigen::FullPivLU<Eigen::MatrixXd> lu(xtwx);
      lu.setThreshold(1e-12);
      if (lu.rank() < p) {
        Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(x);
        const Eigen::Index rank = std::min<Eigen::Index>(qr.rank(), lu.rank());
        const Eigen::Index aliased = qr.colsPermutation().indices()(std::min<Eigen::Index>(rank, p - 1));
        return InvalidArgument("logit: the design is rank deficient (rank " + std::to_string(rank) + " of " +
                               std::to_string(p) + " columns); column '" + col_name(aliased) +
                               "' is collinear with the others");
      }
    }
    Eigen::LLT<Eigen::MatrixXd> llt(xtwx);
    if (llt.info() != Eigen::Success) {
      return FailedPrecondition("separation: the Fisher information became singular at iteration " +
                                std::to_string(it) + "; fitted probabilities reached 0 or 1");
    }
    const Eigen::VectorXd step = llt.solve(x.transpose() * z);
    beta += step;
    fit.iterations = it;
    if (step.cwiseAbs().maxCoeff() < options.tol * (1.0 + beta.cwiseAbs().maxCoeff())) {
      converged = true;
      break;
    }
  }
  eta.noalias() = x * beta;
  const double max_eta = eta.cwiseAbs().maxCoeff();
  if (max_eta > kEtaSeparation) return diverging();
  if (!converged) {
    return FailedPrecondition("logit: IRLS did not converge in " + std::to_string(options.max_iter) + " iterations");
  }
  // Information at the MLE.
  mu = (1.0 + (-eta.array()).exp()).inverse();
  w = mu.array() * (1.0 - mu.array());
  // log(1 + e^eta) = max(eta, 0) + log(1 + e^-|eta|), stable for any eta.
  const double ll =
      (y.array() * eta.array() - (eta.array().max(0.0) + (1.0 + (-eta.array().abs()).exp()).log())).sum();
  xw = x.array().colwise() * w.array().sqrt();
  xtwx.noalias() = xw.transpose().lazyProduct(xw);
  fit.cov = xtwx.llt().solve(Eigen::MatrixXd::Identity(p, p));
  fit.beta = beta;
  fit.n = n;
  fit.log_likelihood = ll;
  const double pbar = ysum / static_cast<double>(n);
  fit.null_log_likelihood = static_cast<double>(n) * (pbar * std::log(pbar) + (1.0 - pbar) * std::log1p(-pbar));
  for (Eigen::Index j = 0; j < p; ++j) {
    LogitCoef c;
    c.name = col_name(j);
    c.coef = beta(j);
    c.se = std::sqrt(fit.cov(j, j));
    c.z = c.coef / c.se;
    c.p = std::erfc(std::abs(c.z) / std::sqrt(2.0));
    fit.coefs.push_back(c);
  }
  return fit;
}

Result<LogitFit> logit(const ModelFrame& frame, const LogitOptions& options) {
  NF_ASSIGN_OR_RETURN(Design d, build_design(frame));
  for (size_t i = 0; i < frame.response.size(); ++i) {
    const double v = frame.response[i];
    if (v != 0.0 && v != 1.0) {
      return InvalidArgument("logit: response at row " + std::to_string(i) + " is " + std::to_string(v) +
                             ", not 0 or 1");
    }
  }
  // Separation by a factor level (including the reference level).
  for (const auto& f : frame.factors) {
    std::map<std::string, std::pair<int64_t, int64_t>> tally;  // level -> (rows, ones)
    for (size_t i = 0; i < f.values.size(); ++i) {
      auto& t = tally[f.values[i]];
      ++t.first;
      t.second += frame.response[i] > 0.5 ? 1 : 0;
    }
    const std::string& reference = tally.begin()->first;
    for (const auto& [level, t] : tally) {
      if (t.second != 0 && t.second != t.first) continue;
      const std::string what = level == reference ? "the intercept (reference level)"
                                                  : "the coefficient of " + f.name + "[T." + level + "]";
      return FailedPrecondition("separation: every row with " + f.name + " = " + level + " has y = " +
                                (t.second == 0 ? "0" : "1") + " (" + std::to_string(t.first) +
                                " rows; quasi-complete separation); " + what + " would be infinite");
    }
  }
  const Eigen::VectorXd y = Eigen::Map<const Eigen::VectorXd>(frame.response.data(),
                                                              static_cast<Eigen::Index>(frame.response.size()));
  return logit_fit(d.x, y, d.columns, options);
}

}  // namespace nf::stats
