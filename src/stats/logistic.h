// Logistic regression with fixed effects by IRLS (Fisher scoring), with detection of
// complete and quasi-complete separation. Layer 1.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "stats/linear_model.h"
#include "util/status.h"

namespace nf::stats {

/// Fit controls. Converged when the largest coefficient step of an IRLS (Newton)
/// iteration is below tol * (1 + max |coefficient|). Defaults: tol 1e-10, at most 100
/// iterations.
struct LogitOptions {
  double tol = 1e-10;
  int max_iter = 100;
};

/// One coefficient: estimate, standard error from the inverse Fisher information
/// (X' W X)^-1 at the MLE, Wald z = coef / se and two-sided normal p.
struct LogitCoef {
  std::string name;
  double coef = 0.0;
  double se = 0.0;
  double z = 0.0;
  double p = 0.0;
};

/// A fitted logistic regression.
struct LogitFit {
  std::vector<LogitCoef> coefs;  // in design column order; coefs[0] is the intercept
  Eigen::VectorXd beta;          // the same estimates as a vector
  Eigen::MatrixXd cov;           // (X' W X)^-1, columns x columns
  double log_likelihood = 0.0;
  double null_log_likelihood = 0.0;  // intercept-only model
  int iterations = 0;
  int64_t n = 0;

  /// The coefficient named `name` (e.g. "same_provider", "judge[T.xai]"), or NotFound
  /// (with a did-you-mean suggestion).
  Result<LogitCoef> coef(const std::string& name) const;
};

/// Logistic regression of a 0/1 response on a design matrix `x` (rows x p, an intercept
/// column included by the caller), by IRLS. `names` labels the columns (may be empty: then
/// "x0", "x1", ...). Before fitting, every 0/1 indicator column (a dummy, or a numeric
/// column taking only 0 and 1) is checked: if the rows where it is 1 all have the same
/// response, the MLE does not exist (quasi-complete separation) and the fit is refused
/// naming that column. During the iterations, a linear predictor beyond +-30 on some row
/// (fitted probability within 1e-13 of 0 or 1) is also reported as separation, naming the
/// column with the largest absolute coefficient (complete separation by a numeric column).
/// The rank check is a pivoted LU of X'X (threshold 1e-12, at the first iteration); the
/// aliased column is named from a column-pivoted QR of X.
/// Errors: InvalidArgument if sizes differ, y is not 0/1, or the design is rank deficient
/// (naming an aliased column); FailedPrecondition ("separation: ...") as above;
/// FailedPrecondition if IRLS does not converge in max_iter iterations.
/// Source: McCullagh & Nelder (1989) §4.4 (IRLS); Albert & Anderson (1984) (separation).
Result<LogitFit> logit_fit(const Eigen::MatrixXd& x, const Eigen::VectorXd& y,
                           const std::vector<std::string>& names = {}, const LogitOptions& options = {});

/// Logistic regression of frame.response (0/1) on the treatment-coded design of
/// build_design(frame) (factors as fixed effects, numeric columns, interactions). Before
/// fitting, each factor level whose rows all have one response value is reported as
/// separation: "separation: every row with judge = xai has y = 1; the coefficient of
/// judge[T.xai] would be infinite" (for the reference level, the intercept diverges).
/// This model serves the vote-level same-provider analysis of seed 004 §2.6:
/// label ~ C(subject) + C(judge) + same_provider.
/// Errors: as build_design() and logit_fit().
/// Reference: statsmodels Logit / GLM(Binomial) with the same design.
Result<LogitFit> logit(const ModelFrame& frame, const LogitOptions& options = {});

}  // namespace nf::stats
