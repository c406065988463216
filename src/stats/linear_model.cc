// Design matrices, OLS and Type-II ANOVA (see linear_model.h).
#include "stats/linear_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include <boost/math/distributions/fisher_f.hpp>

namespace nf::stats {
namespace {

struct Block {
  std::vector<std::string> names;
  Eigen::MatrixXd cols;
};

}  // namespace

Result<Design> build_design(const ModelFrame& frame) {
  const auto n = static_cast<Eigen::Index>(frame.response.size());
  if (n == 0) return InvalidArgument("design: the model has no rows");
  std::set<std::string> seen;
  auto check_name = [&](const std::string& name, size_t len) -> Status {
    if (name.empty()) return InvalidArgument("design: a column has an empty name");
    if (!seen.insert(name).second) return InvalidArgument("design: column '" + name + "' is given twice");
    if (static_cast<Eigen::Index>(len) != n) {
      return InvalidArgument("design: column '" + name + "' has " + std::to_string(len) + " rows, the response has " +
                             std::to_string(n));
    }
    return Status::Ok();
  };
  std::map<std::string, Block> blocks;
  Design d;
  for (const auto& f : frame.factors) {
    NF_RETURN_IF_ERROR(check_name(f.name, f.values.size()));
    std::vector<std::string> levels(f.values.begin(), f.values.end());
    std::sort(levels.begin(), levels.end());
    levels.erase(std::unique(levels.begin(), levels.end()), levels.end());
    if (levels.size() < 2) {
      return InvalidArgument("design: factor '" + f.name + "' has a single level ('" + levels[0] + "')");
    }
    std::map<std::string, Eigen::Index> index;
    for (size_t l = 1; l < levels.size(); ++l) index[levels[l]] = static_cast<Eigen::Index>(l - 1);
    Block b;
    b.cols = Eigen::MatrixXd::Zero(n, static_cast<Eigen::Index>(levels.size() - 1));
    for (size_t l = 1; l < levels.size(); ++l) b.names.push_back(f.name + "[T." + levels[l] + "]");
    for (Eigen::Index r = 0; r < n; ++r) {
      auto it = index.find(f.values[static_cast<size_t>(r)]);
      if (it != index.end()) b.cols(r, it->second) = 1.0;
    }
    d.factor_levels.emplace_back(f.name, levels);
    d.terms.push_back({f.name, {f.name}, 0, b.cols.cols()});
    blocks[f.name] = std::move(b);
  }
  for (const auto& c : frame.numeric) {
    NF_RETURN_IF_ERROR(check_name(c.name, c.values.size()));
    Block b;
    b.cols.resize(n, 1);
    for (Eigen::Index r = 0; r < n; ++r) {
      const double v = c.values[static_cast<size_t>(r)];
      if (!std::isfinite(v)) {
        return InvalidArgument("design: numeric column '" + c.name + "' has a non-finite value at row " +
                               std::to_string(r));
      }
      b.cols(r, 0) = v;
    }
    b.names.push_back(c.name);
    d.terms.push_back({c.name, {c.name}, 0, 1});
    blocks[c.name] = std::move(b);
  }
  for (const auto& [a, bname] : frame.interactions) {
    if (a == bname) return InvalidArgument("design: interaction of '" + a + "' with itself");
    for (const auto* nm : {&a, &bname}) {
      if (!blocks.count(*nm)) return InvalidArgument("design: interaction names unknown column '" + *nm + "'");
    }
    const std::string name = a + ":" + bname;
    if (blocks.count(name)) return InvalidArgument("design: interaction '" + name + "' is given twice");
    const Block& ba = blocks.at(a);
    const Block& bb = blocks.at(bname);
    Block b;
    b.cols.resize(n, ba.cols.cols() * bb.cols.cols());
    Eigen::Index c = 0;
    for (Eigen::Index j = 0; j < bb.cols.cols(); ++j) {  // patsy order: first factor varies fastest
      for (Eigen::Index i = 0; i < ba.cols.cols(); ++i) {
        b.cols.col(c++) = ba.cols.col(i).cwiseProduct(bb.cols.col(j));
        b.names.push_back(ba.names[static_cast<size_t>(i)] + ":" + bb.names[static_cast<size_t>(j)]);
      }
    }
    d.terms.push_back({name, {a, bname}, 0, b.cols.cols()});
    blocks[name] = std::move(b);
  }
  Eigen::Index total = 1;
  for (const auto& t : d.terms) total += t.n_cols;
  d.x.resize(n, total);
  d.x.col(0).setOnes();
  d.columns.push_back("Intercept");
  Eigen::Index at = 1;
  for (auto& t : d.terms) {
    const Block& b = blocks.at(t.name);
    t.first_col = at;
    d.x.middleCols(at, b.cols.cols()) = b.cols;
    d.columns.insert(d.columns.end(), b.names.begin(), b.names.end());
    at += b.cols.cols();
  }
  return d;
}

Result<OlsFit> ols(const Eigen::MatrixXd& x, const Eigen::VectorXd& y) {
  if (x.rows() == 0) return InvalidArgument("ols: no rows");
  if (x.rows() != y.size()) {
    return InvalidArgument("ols: design has " + std::to_string(x.rows()) + " rows, response has " +
                           std::to_string(y.size()));
  }
  Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(x);
  OlsFit fit;
  fit.rank = qr.rank();
  // Eigen's solve() sets the coefficients of pivoted-out (aliased) columns to 0.
  fit.coef = qr.solve(y);
  fit.fitted = x * fit.coef;
  fit.rss = (y - fit.fitted).squaredNorm();
  fit.df_resid = x.rows() - fit.rank;
  return fit;
}

namespace {

// RSS of y on the intercept plus the design blocks of the chosen terms.
Result<OlsFit> fit_terms(const Design& d, const Eigen::VectorXd& y, const std::vector<bool>& use) {
  Eigen::Index cols = 1;
  for (size_t t = 0; t < d.terms.size(); ++t) cols += use[t] ? d.terms[t].n_cols : 0;
  Eigen::MatrixXd x(d.x.rows(), cols);
  x.col(0) = d.x.col(0);
  Eigen::Index at = 1;
  for (size_t t = 0; t < d.terms.size(); ++t) {
    if (!use[t]) continue;
    x.middleCols(at, d.terms[t].n_cols) = d.x.middleCols(d.terms[t].first_col, d.terms[t].n_cols);
    at += d.terms[t].n_cols;
  }
  return ols(x, y);
}

bool contains(const DesignTerm& outer, const DesignTerm& inner) {
  if (outer.name == inner.name || outer.components.size() <= inner.components.size()) return false;
  return std::all_of(inner.components.begin(), inner.components.end(), [&](const std::string& c) {
    return std::find(outer.components.begin(), outer.components.end(), c) != outer.components.end();
  });
}

}  // namespace

Result<AnovaTable> anova_type2(const ModelFrame& frame) {
  for (size_t i = 0; i < frame.response.size(); ++i) {
    if (!std::isfinite(frame.response[i])) {
      return InvalidArgument("anova: response is not finite at row " + std::to_string(i));
    }
  }
  NF_ASSIGN_OR_RETURN(Design d, build_design(frame));
  const Eigen::VectorXd y = Eigen::Map<const Eigen::VectorXd>(frame.response.data(),
                                                              static_cast<Eigen::Index>(frame.response.size()));
  const size_t nt = d.terms.size();
  NF_ASSIGN_OR_RETURN(OlsFit full, ols(d.x, y));
  AnovaTable table;
  table.n = y.size();
  table.rss = full.rss;
  table.df_resid = full.df_resid;
  table.ss_total = (y.array() - y.mean()).square().sum();
  if (table.df_resid <= 0) {
    return FailedPrecondition("anova: the model is saturated (" + std::to_string(table.n) + " rows, rank " +
                              std::to_string(full.rank) + "); no residual degrees of freedom");
  }
  if (table.ss_total <= 0.0) return Undefined("anova: the response is constant; every share is 0/0");
  table.mse = table.rss / static_cast<double>(table.df_resid);
  table.r_squared = 1.0 - table.rss / table.ss_total;
  for (size_t t = 0; t < nt; ++t) {
    std::vector<bool> use(nt, true);
    for (size_t o = 0; o < nt; ++o) {
      if (contains(d.terms[o], d.terms[t])) use[o] = false;
    }
    NF_ASSIGN_OR_RETURN(OlsFit with, fit_terms(d, y, use));
    use[t] = false;
    NF_ASSIGN_OR_RETURN(OlsFit without, fit_terms(d, y, use));
    AnovaRow row;
    row.term = d.terms[t].name;
    row.df = with.rank - without.rank;
    row.sum_sq = std::max(0.0, without.rss - with.rss);
    row.eta_sq = row.sum_sq / table.ss_total;
    row.omega_sq = (row.sum_sq - static_cast<double>(row.df) * table.mse) / (table.ss_total + table.mse);
    if (row.df > 0) {
      row.mean_sq = row.sum_sq / static_cast<double>(row.df);
      row.f = row.mean_sq / table.mse;
      if (table.mse > 0.0) {
        boost::math::fisher_f_distribution<double> dist(static_cast<double>(row.df),
                                                        static_cast<double>(table.df_resid));
        row.p = boost::math::cdf(boost::math::complement(dist, row.f));
      } else {
        row.f = std::numeric_limits<double>::infinity();
        row.p = row.sum_sq > 0.0 ? 0.0 : 1.0;
      }
    } else {
      row.p = 1.0;  // the term adds nothing estimable (aliased); F undefined, reported as 0 / p 1
    }
    table.rows.push_back(row);
  }
  return table;
}

}  // namespace nf::stats
