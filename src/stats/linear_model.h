// Linear models with categorical factors: design matrices (treatment coding), OLS via
// Eigen, Type-II ANOVA with eta-squared and Hays' omega-squared per term. Layer 1.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <Eigen/Dense>

#include "util/status.h"

namespace nf::stats {

/// A categorical column: one level label per row.
struct FactorColumn {
  std::string name;
  std::vector<std::string> values;
};

/// A numeric column: one value per row (enters the model as one column, untransformed).
struct NumericColumn {
  std::string name;
  std::vector<double> values;
};

/// The data of a model: a response, factors, numeric covariates and two-way interactions
/// (pairs of column names, each a factor or numeric column). Every column has one entry
/// per row of `response`.
struct ModelFrame {
  std::vector<double> response;
  std::vector<FactorColumn> factors;
  std::vector<NumericColumn> numeric;
  std::vector<std::pair<std::string, std::string>> interactions;
};

/// One model term and the block of design columns that carries it.
struct DesignTerm {
  std::string name;                     // "a", "x", or "a:b"
  std::vector<std::string> components;  // {"a"} or {"a", "b"}
  int64_t first_col = 0;
  int64_t n_cols = 0;
};

/// A design matrix with an intercept in column 0. Factor levels are sorted (byte order,
/// as patsy), the first level is the reference; a factor with L levels contributes L-1
/// treatment dummies named "a[T.level]"; an interaction contributes the products of its
/// components' columns, named "a[T.l]:b[T.m]" (patsy's naming without "C()").
struct Design {
  Eigen::MatrixXd x;                  // rows x columns
  std::vector<std::string> columns;   // column names, columns[0] == "Intercept"
  std::vector<DesignTerm> terms;      // terms in order: factors, numeric, interactions
  std::vector<std::pair<std::string, std::vector<std::string>>> factor_levels;  // sorted
};

/// Builds the treatment-coded design of `frame` (the response is not used).
/// Errors: InvalidArgument if there are no rows, a column length differs from the
/// response, a name is empty or repeated, a numeric value is not finite, an interaction
/// names an unknown column or a column with itself, or a factor has a single level.
/// Source: Chambers & Hastie (1992) ch. 2 (treatment contrasts); patsy's coding.
Result<Design> build_design(const ModelFrame& frame);

/// An OLS fit. Rank-deficient designs (e.g. an empty interaction cell) are fitted by
/// column-pivoted QR; `rank` < columns then, and aliased coefficients are 0.
struct OlsFit {
  Eigen::VectorXd coef;
  Eigen::VectorXd fitted;
  double rss = 0.0;       // residual sum of squares
  int64_t rank = 0;
  int64_t df_resid = 0;   // rows - rank
};

/// Least squares of y on x by column-pivoted Householder QR (Eigen).
/// Errors: InvalidArgument if sizes differ or x has no rows.
Result<OlsFit> ols(const Eigen::MatrixXd& x, const Eigen::VectorXd& y);

/// One row of a Type-II ANOVA table.
///  sum_sq   SS(term | every other term that does not contain it) (Type II);
///  df       rank gained by adding the term;
///  f, p     F = (sum_sq / df) / MSE against F(df, df_resid); p upper tail;
///  eta_sq   sum_sq / SS_total (corrected total sum of squares, not the sum of rows);
///  omega_sq Hays' omega-squared (sum_sq - df * MSE) / (SS_total + MSE).
struct AnovaRow {
  std::string term;
  double sum_sq = 0.0;
  int64_t df = 0;
  double mean_sq = 0.0;
  double f = 0.0;
  double p = 0.0;
  double eta_sq = 0.0;
  double omega_sq = 0.0;
};

/// A Type-II ANOVA table.
struct AnovaTable {
  std::vector<AnovaRow> rows;  // one per term, in design order
  double rss = 0.0;            // residual sum of squares of the full model
  int64_t df_resid = 0;
  double mse = 0.0;            // rss / df_resid
  double ss_total = 0.0;       // corrected total sum of squares
  double r_squared = 0.0;
  int64_t n = 0;
};

/// Type-II ANOVA of the OLS model response ~ factors + numeric + interactions.
/// For a term T, sum_sq = RSS(M without T and every term containing T) - RSS(M without
/// the terms containing T), which is correct for unbalanced designs and matches
/// statsmodels.stats.anova.anova_lm(typ=2). eta-squared and omega-squared are shares of
/// the corrected total sum of squares (seed 003 App. F); e.g. the unbalanced 2x2 of
/// tests/stats/regression_anova_eta_share_test.cc gives eta^2 0.363064, omega^2 0.324708.
/// Errors: as build_design(); InvalidArgument for a non-finite response; FailedPrecondition
/// if df_resid == 0 (saturated model: no error variance); Undefined if SS_total == 0
/// (constant response).
/// Source: Fox (2016) "Applied Regression Analysis" §8.2.5 (Type II); Hays (1963) for
/// omega-squared; seed 003 App. F.
Result<AnovaTable> anova_type2(const ModelFrame& frame);

}  // namespace nf::stats
