#include "metrics/envelope.h"

#include "metrics/rescore.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "metrics/registry.h"
#include "stats/bootstrap.h"
#include "stats/resample_count.h"
#include "stats/linear_model.h"
#include "stats/rank.h"
#include "util/rng.h"
#include "util/strings.h"

namespace nf {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

nlohmann::json num_or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

/// The subjects x configurations score matrix (NaN = no cell).
struct Grid {
  std::vector<std::string> subjects;  // sorted
  std::vector<std::string> configs;   // sorted
  std::vector<std::vector<double>> score;  // [subject][config]
  std::vector<std::vector<std::optional<double>>> parse;  // [subject][config]
  std::vector<std::vector<int64_t>> n;
};

Result<Grid> make_grid(const std::vector<EnvelopeCell>& cells) {
  Grid g;
  std::set<std::string> ss, cs;
  for (const auto& c : cells) {
    if (c.subject.empty()) return InvalidArgument("envelope: a cell has an empty subject");
    if (!std::isfinite(c.score))
      return InvalidArgument(fmt::format("envelope: cell ({}, {}) has a non-finite score", c.subject, c.config));
    ss.insert(c.subject);
    cs.insert(c.config);
  }
  g.subjects.assign(ss.begin(), ss.end());
  g.configs.assign(cs.begin(), cs.end());
  g.score.assign(g.subjects.size(), std::vector<double>(g.configs.size(), kNaN));
  g.parse.assign(g.subjects.size(), std::vector<std::optional<double>>(g.configs.size()));
  g.n.assign(g.subjects.size(), std::vector<int64_t>(g.configs.size(), 0));
  for (const auto& c : cells) {
    const auto si = std::lower_bound(g.subjects.begin(), g.subjects.end(), c.subject) - g.subjects.begin();
    const auto ci = std::lower_bound(g.configs.begin(), g.configs.end(), c.config) - g.configs.begin();
    if (!std::isnan(g.score[si][ci]))
      return InvalidArgument(fmt::format("envelope: cell ({}, {}) appears twice", c.subject, c.config));
    g.score[si][ci] = c.score;
    g.parse[si][ci] = c.parse_rate;
    g.n[si][ci] = c.n;
  }
  return g;
}

double factorial(int k) { return std::tgamma(static_cast<double>(k) + 1.0); }

/// The point metrics over a multiset of configuration indices (the bootstrap passes
/// resampled indices, with repeats). Metrics over pairs of configurations (CFR, tau_R,
/// mismatch) use only pairs of distinct source configurations, and are NaN (undefined)
/// when the multiset holds fewer than 2 distinct ones.
struct SubjectPoint {
  int64_t n_configs = 0;
  double min = kNaN, max = kNaN, mean = kNaN, range = kNaN, sdi = kNaN;
  bool sdi_unstable = false;
  std::vector<double> cfr;  // per threshold; NaN when < 2 configurations
};
struct PairPoint {
  int64_t c = 0, n_plus = 0, n_minus = 0, n_ties = 0;
  double rho_flip = kNaN, strict_share = kNaN;
  std::vector<int> plus_configs, minus_configs, tie_configs;
};
struct RankPoint {
  std::vector<int> configs;  // configurations where every subject has a score
  std::vector<std::string> ordering, total_order;  // per entry of `configs`
  double tau_r = kNaN;
  int64_t tau_pairs = 0, tau_undefined = 0;
  double mismatch = kNaN;
  int64_t mismatch_pairs = 0;
  std::map<std::string, std::vector<int>> reachable;  // total order -> configurations
};
struct Point {
  std::vector<SubjectPoint> subjects;
  std::vector<PairPoint> pairs;  // (i, j), i < j, row-major
  RankPoint rank;
};

int sign_of(double d) { return d > 0 ? 1 : (d < 0 ? -1 : 0); }

Point point_metrics(const Grid& g, const std::vector<int>& idx, const EnvelopeOptions& o) {
  Point p;
  const size_t k = g.subjects.size();
  for (size_t s = 0; s < k; ++s) {
    SubjectPoint sp;
    std::vector<double> v;
    std::map<int, int64_t> copies;  // source configuration -> its copies in idx (the bootstrap repeats some)
    for (int c : idx)
      if (!std::isnan(g.score[s][c])) {
        v.push_back(g.score[s][c]);
        ++copies[c];
      }
    sp.n_configs = static_cast<int64_t>(v.size());
    if (!v.empty()) {
      sp.min = *std::min_element(v.begin(), v.end());
      sp.max = *std::max_element(v.begin(), v.end());
      sp.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
      sp.range = sp.max - sp.min;
      sp.sdi_unstable = std::fabs(sp.mean) < o.sdi_min_mean;
      sp.sdi = sp.sdi_unstable ? kNaN : sp.range / sp.mean;
    }
    // CFR is a mean over pairs of distinct configurations (a U-statistic): a resampled
    // configuration is never paired with its own copy (that pair would always agree and pull
    // the bootstrap range toward stability; tester s9 F18). Pairs of copies cannot differ in
    // verdict, so only the denominator changes: C(m, 2) - sum_c C(copies_c, 2).
    const auto m = static_cast<int64_t>(v.size());
    int64_t distinct_pairs = m * (m - 1) / 2;
    for (const auto& [c, n] : copies) distinct_pairs -= n * (n - 1) / 2;
    for (double theta : o.thresholds) {
      if (distinct_pairs == 0) {  // fewer than 2 distinct configurations
        sp.cfr.push_back(kNaN);
        continue;
      }
      int64_t pass = 0;
      for (double x : v) pass += x >= theta ? 1 : 0;
      // Pairs with differing verdicts: pass x fail.
      sp.cfr.push_back(static_cast<double>(pass * (m - pass)) / static_cast<double>(distinct_pairs));
    }
    p.subjects.push_back(std::move(sp));
  }
  for (size_t a = 0; a < k; ++a)
    for (size_t b = a + 1; b < k; ++b) {
      PairPoint pp;
      for (int c : idx) {
        const double x = g.score[a][c], y = g.score[b][c];
        if (std::isnan(x) || std::isnan(y)) continue;
        ++pp.c;
        const int sg = sign_of(x - y);
        if (sg > 0) ++pp.n_plus, pp.plus_configs.push_back(c);
        else if (sg < 0) ++pp.n_minus, pp.minus_configs.push_back(c);
        else ++pp.n_ties, pp.tie_configs.push_back(c);
      }
      if (pp.c > 0) pp.rho_flip = static_cast<double>(std::min(pp.n_plus, pp.n_minus)) / static_cast<double>(pp.c);
      if (pp.n_plus + pp.n_minus > 0)
        pp.strict_share =
            static_cast<double>(std::min(pp.n_plus, pp.n_minus)) / static_cast<double>(pp.n_plus + pp.n_minus);
      p.pairs.push_back(std::move(pp));
    }
  // Rankings over the configurations where every subject has a score.
  RankPoint& r = p.rank;
  for (int c : idx) {
    bool all = true;
    for (size_t s = 0; s < k; ++s) all = all && !std::isnan(g.score[s][c]);
    if (!all) continue;
    r.configs.push_back(c);
    std::vector<size_t> order(k);
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](size_t x, size_t y) {
      if (g.score[x][c] != g.score[y][c]) return g.score[x][c] > g.score[y][c];
      return g.subjects[x] < g.subjects[y];
    });
    std::string with_ties, total;
    for (size_t i = 0; i < k; ++i) {
      if (i > 0) {
        with_ties += g.score[order[i]][c] == g.score[order[i - 1]][c] ? " = " : " > ";
        total += " > ";
      }
      with_ties += g.subjects[order[i]];
      total += g.subjects[order[i]];
    }
    r.ordering.push_back(with_ties);
    r.total_order.push_back(total);
    r.reachable[total].push_back(c);
  }
  const size_t m = r.configs.size();
  double tau_sum = 0.0;
  int64_t mismatches = 0;
  for (size_t i = 0; i < m; ++i)
    for (size_t j = i + 1; j < m; ++j) {
      // Pairs of distinct configurations only (as for CFR above): a configuration and its
      // bootstrap copy always give tau = 1 and no mismatch.
      if (r.configs[i] == r.configs[j]) continue;
      ++r.mismatch_pairs;
      if (r.total_order[i] != r.total_order[j]) ++mismatches;
      std::vector<double> x(k), y(k);
      for (size_t s = 0; s < k; ++s) x[s] = g.score[s][r.configs[i]], y[s] = g.score[s][r.configs[j]];
      double tau = kNaN;
      if (k == 2) {
        const int sx = sign_of(x[0] - x[1]), sy = sign_of(y[0] - y[1]);
        if (sx != 0 && sy != 0) tau = sx * sy;
      } else {
        auto t = stats::kendall_tau_b(x, y);
        if (t.ok()) tau = t->estimate;
      }
      if (std::isnan(tau)) {
        ++r.tau_undefined;
      } else {
        ++r.tau_pairs;
        tau_sum += tau;
      }
    }
  if (r.tau_pairs > 0) r.tau_r = tau_sum / static_cast<double>(r.tau_pairs);
  if (r.mismatch_pairs > 0) r.mismatch = static_cast<double>(mismatches) / static_cast<double>(r.mismatch_pairs);
  return p;
}

nlohmann::json config_names(const Grid& g, const std::vector<int>& idx) {
  nlohmann::json a = nlohmann::json::array();
  for (int c : idx) a.push_back(g.configs[c]);
  return a;
}

nlohmann::json point_to_json(const Grid& g, const Point& p, const EnvelopeOptions& o) {
  nlohmann::json j;
  const size_t k = g.subjects.size();
  j["subjects"] = nlohmann::json::array();
  for (size_t s = 0; s < k; ++s) {
    const auto& sp = p.subjects[s];
    nlohmann::json cfr = nlohmann::json::array();
    for (size_t t = 0; t < o.thresholds.size(); ++t)
      cfr.push_back({{"theta", o.thresholds[t]}, {"value", num_or_null(sp.cfr[t])}});
    j["subjects"].push_back({{"subject", g.subjects[s]},
                             {"n_configs", sp.n_configs},
                             {"min", num_or_null(sp.min)},
                             {"max", num_or_null(sp.max)},
                             {"mean", num_or_null(sp.mean)},
                             {"range", num_or_null(sp.range)},
                             {"sdi", num_or_null(sp.sdi)},
                             {"sdi_unstable", sp.sdi_unstable},
                             {"cfr", cfr}});
  }
  j["pairs"] = nlohmann::json::array();
  size_t pi = 0;
  for (size_t a = 0; a < k; ++a)
    for (size_t b = a + 1; b < k; ++b, ++pi) {
      const auto& pp = p.pairs[pi];
      nlohmann::json row{{"a", g.subjects[a]},
                         {"b", g.subjects[b]},
                         {"n_configs", pp.c},
                         {"n_plus", pp.n_plus},
                         {"n_minus", pp.n_minus},
                         {"n_ties", pp.n_ties},
                         {"rho_flip", num_or_null(pp.rho_flip)},
                         {"strict_share", num_or_null(pp.strict_share)},
                         {"no_strict_reversal", pp.c > 0 && pp.rho_flip == 0.0}};
      if (pp.n_plus > pp.n_minus) {
        row["majority"] = g.subjects[a] + " > " + g.subjects[b];
        row["reversing_configs"] = config_names(g, pp.minus_configs);
      } else if (pp.n_minus > pp.n_plus) {
        row["majority"] = g.subjects[b] + " > " + g.subjects[a];
        row["reversing_configs"] = config_names(g, pp.plus_configs);
      } else {
        row["majority"] = nullptr;  // no majority direction: both sides are listed
        row["a_better_configs"] = config_names(g, pp.plus_configs);
        row["b_better_configs"] = config_names(g, pp.minus_configs);
      }
      row["tie_configs"] = config_names(g, pp.tie_configs);
      j["pairs"].push_back(std::move(row));
    }
  const RankPoint& r = p.rank;
  nlohmann::json rk;
  rk["n_configs"] = r.configs.size();
  rk["per_config"] = nlohmann::json::array();
  for (size_t i = 0; i < r.configs.size(); ++i)
    rk["per_config"].push_back(
        {{"config", g.configs[r.configs[i]]}, {"ordering", r.ordering[i]}, {"total_order", r.total_order[i]}});
  rk["tau_r"] = num_or_null(r.tau_r);
  rk["tau_pairs"] = r.tau_pairs;
  rk["tau_pairs_undefined"] = r.tau_undefined;
  rk["mismatch_rate"] = num_or_null(r.mismatch);
  rk["mismatch_pairs"] = r.mismatch_pairs;
  rk["mismatch_null"] = 1.0 - 1.0 / factorial(static_cast<int>(k));
  rk["reachable"] = r.reachable.size();
  // k! orderings (exact as an integer up to 20!).
  if (k <= 20) rk["possible"] = static_cast<int64_t>(std::llround(factorial(static_cast<int>(k))));
  else rk["possible"] = factorial(static_cast<int>(k));
  rk["orderings"] = nlohmann::json::array();
  for (const auto& [order, cs] : r.reachable)
    rk["orderings"].push_back({{"total_order", order}, {"configs", config_names(g, cs)}});
  j["rankings"] = rk;
  return j;
}

/// Flat named scalars of a point (the bootstrap collects one vector per name).
std::vector<std::pair<std::string, double>> point_scalars(const Grid& g, const Point& p, const EnvelopeOptions& o) {
  std::vector<std::pair<std::string, double>> out;
  const size_t k = g.subjects.size();
  for (size_t s = 0; s < k; ++s) {
    out.emplace_back(g.subjects[s] + ".range", p.subjects[s].range);
    out.emplace_back(g.subjects[s] + ".sdi", p.subjects[s].sdi);
    for (size_t t = 0; t < o.thresholds.size(); ++t)
      out.emplace_back(fmt::format("{}.cfr_{}", g.subjects[s], o.thresholds[t]), p.subjects[s].cfr[t]);
  }
  size_t pi = 0;
  for (size_t a = 0; a < k; ++a)
    for (size_t b = a + 1; b < k; ++b, ++pi) {
      out.emplace_back(g.subjects[a] + "|" + g.subjects[b] + ".rho_flip", p.pairs[pi].rho_flip);
      out.emplace_back(g.subjects[a] + "|" + g.subjects[b] + ".strict_share", p.pairs[pi].strict_share);
    }
  out.emplace_back("tau_r", p.rank.tau_r);
  out.emplace_back("mismatch_rate", p.rank.mismatch);
  out.emplace_back("reachable", static_cast<double>(p.rank.reachable.size()));
  return out;
}

/// Type-II variance partition on the free-form slice.
nlohmann::json variance_partition(const Grid& g, const EnvelopeOptions& o) {
  nlohmann::json j;
  // Axes of every configuration.
  std::vector<std::map<std::string, std::string>> ax(g.configs.size());
  for (size_t c = 0; c < g.configs.size(); ++c) ax[c] = *config_axes(g.configs[c]);  // validated by the caller
  std::vector<int> slice;
  bool has_scoring = false;
  for (size_t c = 0; c < g.configs.size(); ++c) {
    auto it = ax[c].find(o.scoring_axis);
    if (it != ax[c].end()) has_scoring = true;
    if (it == ax[c].end() || it->second == o.free_form) slice.push_back(static_cast<int>(c));
  }
  j["slice"] = has_scoring ? fmt::format("{}={}", o.scoring_axis, o.free_form) : std::string("all configurations");
  // Axes with more than one level in the slice.
  std::map<std::string, std::set<std::string>> levels;
  for (int c : slice)
    for (const auto& [a, v] : ax[c]) levels[a].insert(v);
  std::vector<std::string> axes;
  if (!o.axes.empty()) {
    for (const auto& a : o.axes) {
      if (!levels.count(a)) {
        j["skipped"] = fmt::format("axis '{}' does not occur in the configuration ids", a);
        return j;
      }
      if (levels[a].size() > 1) axes.push_back(a);
    }
  } else {
    for (const auto& [a, l] : levels)
      if (l.size() > 1 && a != o.scoring_axis) axes.push_back(a);
  }
  if (axes.empty()) {
    j["skipped"] = "no configuration axis varies on the slice";
    return j;
  }
  if (std::find(axes.begin(), axes.end(), "model") != axes.end()) {
    j["skipped"] = "an axis is named 'model', the name of the subject factor";
    return j;
  }
  stats::ModelFrame frame;
  stats::FactorColumn model{"model", {}};
  std::vector<stats::FactorColumn> axcols;
  for (const auto& a : axes) axcols.push_back({a, {}});
  for (size_t s = 0; s < g.subjects.size(); ++s)
    for (int c : slice) {
      if (std::isnan(g.score[s][c])) continue;
      frame.response.push_back(g.score[s][c]);
      model.values.push_back(g.subjects[s]);
      for (size_t i = 0; i < axes.size(); ++i) {
        auto it = ax[c].find(axes[i]);
        axcols[i].values.push_back(it == ax[c].end() ? std::string("(unset)") : it->second);
      }
    }
  frame.factors.push_back(model);
  for (auto& c : axcols) frame.factors.push_back(std::move(c));
  std::vector<std::pair<std::string, std::string>> model_x_axis, axis_x_axis;
  for (size_t i = 0; i < axes.size(); ++i) {
    model_x_axis.emplace_back("model", axes[i]);
    for (size_t k = i + 1; k < axes.size(); ++k) axis_x_axis.emplace_back(axes[i], axes[k]);
  }
  std::vector<std::vector<std::pair<std::string, std::string>>> attempts;
  {
    auto all = model_x_axis;
    all.insert(all.end(), axis_x_axis.begin(), axis_x_axis.end());
    attempts.push_back(all);
    if (!axis_x_axis.empty()) attempts.push_back(model_x_axis);
    attempts.push_back({});
  }
  const char* kDropped[] = {"", "axis x axis interactions", "all interactions"};
  Result<stats::AnovaTable> table = FailedPrecondition("no fit");
  size_t used = 0;
  for (; used < attempts.size(); ++used) {
    frame.interactions = attempts[used];
    table = stats::anova_type2(frame);
    if (table.ok() || table.status().code() != StatusCode::kFailedPrecondition) break;
  }
  if (!table.ok()) {
    j["skipped"] = fmt::format("ANOVA not estimable: {}", table.status().message());
    return j;
  }
  const size_t attempt = std::min(used, attempts.size() - 1);
  if (attempt > 0)
    j["dropped"] = fmt::format("{} (the fuller model left no residual degrees of freedom: one score per cell)",
                               attempt == 1 && !axis_x_axis.empty() ? kDropped[1] : kDropped[2]);
  double ss_model = 0, ss_impl = 0, ss_inter = 0;
  nlohmann::json terms = nlohmann::json::array(), per_axis = nlohmann::json::array();
  for (const auto& r : table->rows) {
    terms.push_back({{"term", r.term}, {"sum_sq", r.sum_sq}, {"df", r.df}, {"f", r.f}, {"p", r.p},
                     {"eta_sq", r.eta_sq}, {"omega_sq", r.omega_sq}});
    if (r.term == "model") ss_model += r.sum_sq;
    else if (r.term.find(':') != std::string::npos) ss_inter += r.sum_sq;
    else {
      ss_impl += r.sum_sq;
      per_axis.push_back({{"axis", r.term}, {"omega_sq", r.omega_sq}, {"eta_sq", r.eta_sq}});
    }
  }
  const double denom = ss_model + ss_impl + ss_inter + table->rss;
  j["n"] = table->n;
  j["df_resid"] = table->df_resid;
  j["axes"] = axes;
  j["terms"] = terms;
  j["shares"] = {{"model", ss_model / denom},
                 {"implementation", ss_impl / denom},
                 {"interaction", ss_inter / denom},
                 {"residual", table->rss / denom}};
  j["rho"] = ss_model > 0 ? nlohmann::json(ss_impl / ss_model) : nlohmann::json(nullptr);
  j["per_axis_omega_sq"] = per_axis;
  j["ss_total"] = table->ss_total;
  return j;
}

}  // namespace

Result<EnvelopeOptions> EnvelopeOptions::from_json(const nlohmann::json& j) {
  EnvelopeOptions o;
  if (j.is_null()) return o;
  if (!j.is_object()) return InvalidArgument(fmt::format("envelope: options must be a JSON object, got {}", j.dump()));
  const std::vector<std::string> known{"outcome",     "condition", "thresholds", "sdi_min_mean", "parse_clean",
                                       "resamples",   "seed",      "level",      "axes",         "scoring_axis",
                                       "free_form",   "parse_outcome", "scoring_paths", "pool_axes",
                                       "scorers",     "stratum"};
  for (const auto& [k, v] : j.items()) {
    if (std::find(known.begin(), known.end(), k) == known.end())
      return InvalidArgument(fmt::format("envelope.{}: unknown option (known: {})", k, fmt::join(known, ", ")));
    auto need_string = [&](std::string* out) -> Status {
      if (!v.is_string()) return InvalidArgument(fmt::format("envelope.{}: expected a string, got {}", k, v.dump()));
      *out = v.get<std::string>();
      return Status::Ok();
    };
    auto need_unit = [&](double* out, bool open) -> Status {
      if (!v.is_number())
        return InvalidArgument(fmt::format("envelope.{}: expected a number, got {}", k, v.dump()));
      const double x = v.get<double>();
      if (!(open ? (x > 0 && x < 1) : (x >= 0 && x <= 1)))
        return InvalidArgument(fmt::format("envelope.{}: must be in {}, got {}", k, open ? "(0, 1)" : "[0, 1]", x));
      *out = x;
      return Status::Ok();
    };
    if (k == "outcome") NF_RETURN_IF_ERROR(need_string(&o.outcome));
    else if (k == "condition") NF_RETURN_IF_ERROR(need_string(&o.condition));
    else if (k == "scoring_axis") NF_RETURN_IF_ERROR(need_string(&o.scoring_axis));
    else if (k == "free_form") NF_RETURN_IF_ERROR(need_string(&o.free_form));
    else if (k == "parse_outcome") NF_RETURN_IF_ERROR(need_string(&o.parse_outcome));
    else if (k == "scoring_paths") {
      if (!v.is_object() || v.empty())
        return InvalidArgument(fmt::format("envelope.scoring_paths: expected a map path -> outcome, got {}", v.dump()));
      for (const auto& [path, outcome] : v.items()) {
        if (path.empty() || path.find_first_of(",=") != std::string::npos || !outcome.is_string() ||
            outcome.get<std::string>().empty())
          return InvalidArgument(fmt::format("envelope.scoring_paths.{}: expected an outcome name", path));
        o.scoring_paths[path] = outcome.get<std::string>();
      }
    }
    else if (k == "scorers") {  // metrics/rescore.h
      if (!v.is_array() || v.empty())
        return InvalidArgument(fmt::format("envelope.scorers: expected a list of scorers, got {}", v.dump()));
      for (const auto& x : v) {
        if (!x.is_string()) return InvalidArgument(fmt::format("envelope.scorers: expected strings, got {}", x.dump()));
        if (auto st = check_scorer_name(x.get<std::string>()); !st.ok())
          return InvalidArgument("envelope.scorers: " + st.message());
        o.scorers.push_back(x.get<std::string>());
      }
    } else if (k == "stratum") {
      if (!v.is_object() || v.size() != 1 || !v.begin().value().is_string())
        return InvalidArgument(fmt::format("envelope.stratum: expected one {{field: value}}, got {}", v.dump()));
      if (v.begin().key().empty())
        return InvalidArgument(fmt::format("envelope.stratum: the field name is empty, got {}", v.dump()));
      o.stratum[v.begin().key()] = v.begin().value().get<std::string>();
    }
    else if (k == "sdi_min_mean") {
      if (!v.is_number() || v.get<double>() < 0)
        return InvalidArgument(fmt::format("envelope.sdi_min_mean: expected a number >= 0, got {}", v.dump()));
      o.sdi_min_mean = v.get<double>();
    } else if (k == "parse_clean") NF_RETURN_IF_ERROR(need_unit(&o.parse_clean, false));
    else if (k == "level") NF_RETURN_IF_ERROR(need_unit(&o.level, true));
    else if (k == "resamples") {
      if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > 1000000)
        return InvalidArgument(fmt::format("envelope.resamples: expected an integer in [0, 1000000], got {}", v.dump()));
      o.resamples = v.get<int>();
    } else if (k == "seed") {
      if (!v.is_number_unsigned())
        return InvalidArgument(fmt::format("envelope.seed: expected a non-negative integer, got {}", v.dump()));
      o.seed = v.get<uint64_t>();
    } else if (k == "thresholds") {
      if (!v.is_array() || v.empty())
        return InvalidArgument(fmt::format("envelope.thresholds: expected a non-empty list, got {}", v.dump()));
      o.thresholds.clear();
      for (const auto& x : v) {
        if (!x.is_number() || x.get<double>() < 0 || x.get<double>() > 1)
          return InvalidArgument(fmt::format("envelope.thresholds: expected numbers in [0, 1], got {}", x.dump()));
        o.thresholds.push_back(x.get<double>());
      }
    } else if (k == "pool_axes") {
      if (!v.is_array()) return InvalidArgument(fmt::format("envelope.pool_axes: expected a list, got {}", v.dump()));
      for (const auto& x : v) {
        if (!x.is_string() || x.get<std::string>().empty())
          return InvalidArgument(fmt::format("envelope.pool_axes: expected axis names, got {}", x.dump()));
        o.pool_axes.push_back(x.get<std::string>());
      }
    } else if (k == "axes") {
      if (!v.is_array()) return InvalidArgument(fmt::format("envelope.axes: expected a list, got {}", v.dump()));
      for (const auto& x : v) {
        if (!x.is_string() || x.get<std::string>().empty())
          return InvalidArgument(fmt::format("envelope.axes: expected axis names, got {}", x.dump()));
        o.axes.push_back(x.get<std::string>());
      }
    }
  }
  // The stratum selects items of the rescored completions (metrics/rescore.h); without
  // `scorers` nothing would apply it and the cells would silently cover every item.
  if (!o.stratum.empty() && o.scorers.empty())
    return InvalidArgument("envelope.stratum: applies only with `scorers` (it selects the items whose stored "
                           "completions are rescored); add e.g. \"scorers\": [\"strmatch\"], or drop `stratum`");
  // 0 = no bootstrap; otherwise a resample in each tail of the range (stats/resample_count.h).
  if (o.resamples > 0) NF_RETURN_IF_ERROR(stats::check_resamples(o.resamples, o.level, "envelope.resamples"));
  return o;
}

Result<std::map<std::string, std::string>> config_axes(const std::string& config) {
  std::map<std::string, std::string> out;
  if (config.find('=') == std::string::npos) {
    out["config"] = config;
    return out;
  }
  size_t start = 0;
  while (start <= config.size()) {
    size_t end = config.find(',', start);
    if (end == std::string::npos) end = config.size();
    const std::string part = config.substr(start, end - start);
    const size_t eq = part.find('=');
    if (part.empty() || eq == std::string::npos || eq == 0)
      return InvalidArgument(fmt::format("envelope: configuration '{}': part '{}' is not axis=value", config, part));
    const std::string axis = part.substr(0, eq);
    if (!out.emplace(axis, part.substr(eq + 1)).second)
      return InvalidArgument(fmt::format("envelope: configuration '{}' names axis '{}' twice", config, axis));
    start = end + 1;
  }
  return out;
}

Result<std::vector<EnvelopeCell>> envelope_cells(const std::vector<OutcomeRow>& rows,
                                                 const std::vector<StatusCount>& counts, const std::string& outcome,
                                                 const std::string& condition) {
  std::set<std::string> outcomes, conditions;
  for (const auto& r : rows) {
    outcomes.insert(r.outcome);
    if (r.outcome == outcome && (condition.empty() || r.condition == condition)) conditions.insert(r.condition);
  }
  if (!outcomes.count(outcome))
    return InvalidArgument(fmt::format("envelope.outcome: no outcome '{}' in the store (outcomes: {})", outcome,
                                       outcomes.empty() ? std::string("none") : fmt::format("{}", fmt::join(outcomes, ", "))));
  if (conditions.empty())
    return InvalidArgument(fmt::format("envelope.condition: no '{}' rows under condition '{}'", outcome, condition));
  const bool condition_axis = conditions.size() > 1;
  auto key_of = [&](const std::string& config, const std::string& cond) {
    if (!condition_axis) return config;
    return config == "default" ? "condition=" + cond : config + ",condition=" + cond;
  };
  std::map<std::pair<std::string, std::string>, std::pair<double, int64_t>> sums;
  for (const auto& r : rows) {
    if (r.outcome != outcome || !conditions.count(r.condition)) continue;
    auto& s = sums[{r.subject, key_of(r.config, r.condition)}];
    s.first += r.value;
    ++s.second;
  }
  std::map<std::pair<std::string, std::string>, std::map<std::string, int64_t>> status;
  for (const auto& c : counts)
    if (conditions.count(c.condition)) status[{c.subject, key_of(c.config, c.condition)}][c.status] += c.count;
  std::vector<EnvelopeCell> out;
  for (const auto& [k, s] : sums) {
    EnvelopeCell cell{k.first, k.second, s.first / static_cast<double>(s.second), s.second, std::nullopt};
    if (auto it = status.find(k); it != status.end()) {
      int64_t answered = 0, parse_errors = 0;
      for (const auto& [st, n] : it->second) {
        if (st == "api_error") continue;
        answered += n;
        if (st == "parse_error") parse_errors += n;
      }
      if (answered > 0) cell.parse_rate = static_cast<double>(answered - parse_errors) / static_cast<double>(answered);
    }
    out.push_back(std::move(cell));
  }
  return out;
}

Result<nlohmann::json> envelope_analysis(const std::vector<EnvelopeCell>& cells, const EnvelopeOptions& o) {
  if (cells.empty()) return InvalidArgument("envelope: no cells");
  NF_ASSIGN_OR_RETURN(const Grid g, make_grid(cells));
  std::map<std::string, std::set<std::string>> axis_levels;
  for (const auto& c : g.configs) {
    NF_ASSIGN_OR_RETURN(auto ax, config_axes(c));
    for (const auto& [a, v] : ax) axis_levels[a].insert(v);
  }
  std::vector<int> all(g.configs.size());
  std::iota(all.begin(), all.end(), 0);
  const Point p = point_metrics(g, all, o);

  nlohmann::json j = point_to_json(g, p, o);
  j["n_subjects"] = g.subjects.size();
  j["n_configs"] = g.configs.size();
  j["axes"] = nlohmann::json::object();
  for (const auto& [a, l] : axis_levels) j["axes"][a] = std::vector<std::string>(l.begin(), l.end());
  // The cells of each subject, each with its neighbourhood: the same subject's scores under
  // the configurations that differ from it in exactly one axis value.
  std::vector<std::map<std::string, std::string>> ax(g.configs.size());
  for (size_t c = 0; c < g.configs.size(); ++c) ax[c] = *config_axes(g.configs[c]);
  auto neighbours = [&](size_t c1, size_t c2) {
    if (ax[c1].size() != ax[c2].size()) return false;
    int differ = 0;
    for (const auto& [a, v] : ax[c1]) {
      auto it = ax[c2].find(a);
      if (it == ax[c2].end()) return false;
      differ += it->second != v ? 1 : 0;
    }
    return differ == 1;
  };
  for (size_t s = 0; s < g.subjects.size(); ++s) {
    nlohmann::json cs = nlohmann::json::array();
    for (size_t c = 0; c < g.configs.size(); ++c) {
      if (std::isnan(g.score[s][c])) continue;
      double lo = kNaN, hi = kNaN;
      int64_t nn = 0;
      for (size_t c2 = 0; c2 < g.configs.size(); ++c2) {
        if (c2 == c || std::isnan(g.score[s][c2]) || !neighbours(c, c2)) continue;
        lo = nn == 0 ? g.score[s][c2] : std::min(lo, g.score[s][c2]);
        hi = nn == 0 ? g.score[s][c2] : std::max(hi, g.score[s][c2]);
        ++nn;
      }
      cs.push_back({{"config", g.configs[c]},
                    {"score", g.score[s][c]},
                    {"n", g.n[s][c]},
                    {"parse_rate", g.parse[s][c] ? nlohmann::json(*g.parse[s][c]) : nlohmann::json(nullptr)},
                    {"neighbourhood", {{"n", nn}, {"min", num_or_null(lo)}, {"max", num_or_null(hi)}}}});
    }
    j["subjects"][s]["cells"] = cs;
  }
  j["variance"] = variance_partition(g, o);

  // Configuration bootstrap.
  nlohmann::json boot{{"resamples", o.resamples}, {"seed", o.seed}, {"level", o.level},
                      {"method", "configurations resampled with replacement; percentile ranges; pairwise metrics (CFR, tau_R, "
                                 "mismatch) over pairs of distinct source configurations only (a resample with fewer "
                                 "than 2 distinct configurations leaves them undefined, not counted in `defined`)"}};
  if (o.resamples > 0) {
    std::vector<std::string> names;
    std::vector<std::vector<double>> values;
    for (int b = 0; b < o.resamples; ++b) {
      Rng rng = Rng::stream(o.seed, {static_cast<uint64_t>(b)});
      std::vector<int> idx(g.configs.size());
      for (auto& x : idx) x = static_cast<int>(rng.uniform_int(g.configs.size()));
      const auto scal = point_scalars(g, point_metrics(g, idx, o), o);
      if (names.empty()) {
        for (const auto& [n, v] : scal) names.push_back(n);
        values.resize(names.size());
      }
      for (size_t i = 0; i < scal.size(); ++i)
        if (std::isfinite(scal[i].second)) values[i].push_back(scal[i].second);
    }
    nlohmann::json metrics = nlohmann::json::object();
    for (size_t i = 0; i < names.size(); ++i) {
      const auto& v = values[i];
      nlohmann::json m{{"defined", v.size()}};
      if (v.empty()) {
        m["low"] = m["high"] = nullptr;
      } else {
        auto iv = stats::percentile_interval(v, o.level);
        m["low"] = iv.ok() ? nlohmann::json(iv->low) : nlohmann::json(nullptr);
        m["high"] = iv.ok() ? nlohmann::json(iv->high) : nlohmann::json(nullptr);
        const auto [mn, mx] = std::minmax_element(v.begin(), v.end());
        m["min"] = *mn;
        m["max"] = *mx;
        m["all_equal"] = *mn == *mx;  // flagged: a degenerate range, not certainty
      }
      metrics[names[i]] = m;
    }
    boot["metrics"] = metrics;
  }
  j["bootstrap"] = boot;

  // Parse-clean rerun.
  nlohmann::json pc{{"threshold", o.parse_clean}};
  bool any_known = false;
  std::vector<int> clean;
  std::vector<std::string> excluded;
  for (size_t c = 0; c < g.configs.size(); ++c) {
    bool ok = true;
    for (size_t s = 0; s < g.subjects.size(); ++s) {
      if (std::isnan(g.score[s][c])) continue;
      if (g.parse[s][c]) any_known = true;
      ok = ok && g.parse[s][c] && *g.parse[s][c] >= o.parse_clean;
    }
    if (ok) clean.push_back(static_cast<int>(c));
    else excluded.push_back(g.configs[c]);
  }
  if (!any_known) {
    pc["skipped"] = "no parse rate is known (the store has no draw statuses for these cells)";
  } else {
    pc["n_configs"] = clean.size();
    pc["excluded_configs"] = excluded;
    const nlohmann::json pj = point_to_json(g, point_metrics(g, clean, o), o);
    pc["subjects"] = pj["subjects"];
    pc["pairs"] = pj["pairs"];
    pc["rankings"] = pj["rankings"];
  }
  j["parse_clean"] = pc;
  return j;
}

namespace {
Result<nlohmann::json> finish_envelope(AnalysisContext& ctx, const EnvelopeOptions& o, std::vector<EnvelopeCell> cells,
                                       nlohmann::json j);
}  // namespace

Result<nlohmann::json> run_envelope(AnalysisContext& ctx, const nlohmann::json& options) {
  NF_ASSIGN_OR_RETURN(EnvelopeOptions o, EnvelopeOptions::from_json(options));
  nlohmann::json j;
  j["method"] =
      "per-(subject, configuration) cell means; range, SDI, CFR_theta per subject; per pair n+, n-, n0 over shared "
      "configurations, rho_flip = min(n+, n-)/|C| and the strict-reversal certificate rho_flip = 0; induced "
      "orderings, tau_R (mean Kendall tau-b), total-order mismatch vs 1 - 1/k!, reachable orderings; Type-II "
      "ANOVA shares and per-axis omega^2 on the free-form slice; configuration bootstrap; parse-clean rerun";
  j["source"] = "seed 003 §4, §5, App. D, F, V";
  if (!o.scorers.empty()) {  // scoring paths over the stored completions (metrics/rescore.h)
    NF_ASSIGN_OR_RETURN(auto rescored, rescore_completions(ctx.store, o.scorers, o.stratum, o.pool_axes));
    j["scorers"] = std::move(rescored.report);
    if (!o.pool_axes.empty()) j["pool_axes"] = o.pool_axes;
    if (o.outcome.empty()) o.outcome = "full_compliance";
    return finish_envelope(ctx, o, std::move(rescored.cells), std::move(j));
  }
  NF_ASSIGN_OR_RETURN(const std::vector<OutcomeRow>* all_rows, ctx.rows());
  if (all_rows->empty()) {
    j["skipped"] = "the store holds no outcome rows";
    return j;
  }
  if (o.outcome.empty() && !o.scoring_paths.empty()) o.outcome = o.scoring_paths.begin()->second;
  if (o.outcome.empty()) {
    std::set<std::string> outcomes;
    for (const auto& r : *all_rows) outcomes.insert(r.outcome);
    if (outcomes.size() == 1) o.outcome = *outcomes.begin();
    else if (outcomes.count("correct")) o.outcome = "correct";
    else
      return InvalidArgument(fmt::format("envelope.outcome: the store has several outcomes ({}); name one",
                                         fmt::join(outcomes, ", ")));
  }
  NF_ASSIGN_OR_RETURN(auto counts, ctx.store.status_counts());
  const std::vector<OutcomeRow>* rows = all_rows;
  std::vector<OutcomeRow> pooled;
  if (!o.pool_axes.empty()) {  // drop the pooled axes from every configuration id
    auto strip = [&](const std::string& config) {
      std::string out;
      for (const auto& part : split(config, ',')) {
        const std::string axis = part.substr(0, part.find('='));
        if (std::find(o.pool_axes.begin(), o.pool_axes.end(), axis) != o.pool_axes.end()) continue;
        out += (out.empty() ? "" : ",") + part;
      }
      return out.empty() ? std::string("default") : out;
    };
    pooled = *all_rows;
    for (auto& r : pooled) r.config = strip(r.config);
    for (auto& c : counts) c.config = strip(c.config);
    rows = &pooled;
    j["pool_axes"] = o.pool_axes;
  }
  std::vector<EnvelopeCell> cells;
  if (o.scoring_paths.empty()) {
    NF_ASSIGN_OR_RETURN(cells, envelope_cells(*rows, counts, o.outcome, o.condition));
  } else {  // one set of cells per scoring path, the path an axis of the configuration
    for (const auto& [path, outcome] : o.scoring_paths) {
      NF_ASSIGN_OR_RETURN(auto pc, envelope_cells(*rows, counts, outcome, o.condition));
      for (auto& c : pc) {
        c.config = (c.config == "default" ? std::string() : c.config + ",") + o.scoring_axis + "=" + path;
        cells.push_back(std::move(c));
      }
    }
    j["scoring_paths"] = o.scoring_paths;
  }
  if (!o.parse_outcome.empty()) {  // parse rates from an outcome instead of draw statuses
    NF_ASSIGN_OR_RETURN(auto parsed, envelope_cells(*rows, {}, o.parse_outcome, o.condition));
    std::map<std::pair<std::string, std::string>, double> rate;
    for (const auto& p : parsed) rate[{p.subject, p.config}] = p.score;
    for (auto& c : cells) {
      auto it = rate.find({c.subject, c.config});
      c.parse_rate = it == rate.end() ? std::nullopt : std::optional<double>(it->second);
    }
    j["parse_outcome"] = o.parse_outcome;
  }
  return finish_envelope(ctx, o, std::move(cells), std::move(j));
}

namespace {

// The envelope over `cells` and the GRID card pins (run_envelope's common tail).
Result<nlohmann::json> finish_envelope(AnalysisContext& ctx, const EnvelopeOptions& o, std::vector<EnvelopeCell> cells,
                                       nlohmann::json j) {
  std::set<std::string> subjects, configs;
  for (const auto& c : cells) subjects.insert(c.subject), configs.insert(c.config);
  j["outcome"] = o.outcome;
  if (subjects.size() < 2 || configs.size() < 2) {
    j["skipped"] = fmt::format("an envelope needs at least two subjects and two configurations (the store has {} and {})",
                               subjects.size(), configs.size());
    return j;
  }
  NF_ASSIGN_OR_RETURN(auto r, envelope_analysis(cells, o));
  j.update(r);
  // Provenance pins for the GRID card (report/grid_card.h): model ids as served, the
  // models the study asked for, dataset hashes.
  nlohmann::json pins;
  NF_ASSIGN_OR_RETURN(auto served, ctx.store.served_models());
  pins["served_models"] = served;
  pins["requested_models"] = nlohmann::json::object();
  pins["datasets"] = nlohmann::json::array();
  if (ctx.has_study) {
    if (ctx.study.spec.contains("subjects") && ctx.study.spec["subjects"].is_array())
      for (const auto& s : ctx.study.spec["subjects"])
        if (s.is_object() && s.contains("name") && s["name"].is_string())
          pins["requested_models"][s["name"].get<std::string>()] = s.value("model", nlohmann::json(nullptr));
    if (ctx.study.spec.contains("provenance") && ctx.study.spec["provenance"].contains("datasets"))
      pins["datasets"] = ctx.study.spec["provenance"]["datasets"];
  }
  j["pins"] = pins;
  return j;
}

}  // namespace

}  // namespace nf
