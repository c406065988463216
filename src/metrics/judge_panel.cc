#include "metrics/judge_panel.h"

#include "metrics/interval_flags.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "spec/study.h"
#include "stats/agreement.h"
#include "stats/bootstrap.h"
#include "stats/logistic.h"
#include "stats/permutation.h"
#include "stats/proportion.h"
#include "util/rng.h"
#include "util/strings.h"

namespace nf {
namespace {

using nlohmann::json;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

int index_of(const std::vector<std::string>& v, const std::string& x) {
  return static_cast<int>(std::lower_bound(v.begin(), v.end(), x) - v.begin());
}

json num(double x) { return std::isfinite(x) ? json(x) : json(nullptr); }

// Vote counts per (judge, subject) over a multiset of clusters.
struct Counts {
  int S = 0, J = 0;
  std::vector<double> yes, n;  // [j * S + s]
  double rate(int j, int s) const { return n[j * S + s] > 0 ? yes[j * S + s] / n[j * S + s] : kNaN; }
};

Counts count_votes(const PanelData& p, const std::vector<std::vector<int>>& by_cluster,
                   const std::vector<size_t>& draw) {
  Counts c;
  c.S = static_cast<int>(p.subjects.size());
  c.J = static_cast<int>(p.judges.size());
  c.yes.assign(static_cast<size_t>(c.S * c.J), 0.0);
  c.n.assign(static_cast<size_t>(c.S * c.J), 0.0);
  for (size_t k : draw)
    for (int vi : by_cluster[k]) {
      const auto& v = p.votes[static_cast<size_t>(vi)];
      c.yes[static_cast<size_t>(v.judge * c.S + v.subject)] += v.label;
      c.n[static_cast<size_t>(v.judge * c.S + v.subject)] += 1;
    }
  return c;
}

std::vector<size_t> identity_draw(size_t n) {
  std::vector<size_t> d(n);
  std::iota(d.begin(), d.end(), size_t{0});
  return d;
}

std::vector<size_t> random_draw(size_t n, uint64_t seed, int r) {
  Rng rng = Rng::stream(seed, {static_cast<uint64_t>(r)});
  std::vector<size_t> d(n);
  for (auto& i : d) i = static_cast<size_t>(rng.uniform_int(n));
  return d;
}

// Same-provider term index of a vote (-1 = none); `own[s]` = the judge sharing subject s's
// provider under the assignment being tested.
using TermFn = std::function<int(const PanelData::Vote&)>;

// Fits label ~ C(subject) + C(judge) + terms on the votes of the drawn clusters.
Result<stats::LogitFit> fit_model(const PanelData& p, const std::vector<std::vector<int>>& by_cluster,
                                  const std::vector<size_t>& draw, const TermFn& term,
                                  const std::vector<std::string>& term_names) {
  const int S = static_cast<int>(p.subjects.size()), J = static_cast<int>(p.judges.size());
  const int T = static_cast<int>(term_names.size());
  const int cols = 1 + (S - 1) + (J - 1) + T;
  size_t rows = 0;
  for (size_t k : draw) rows += by_cluster[k].size();
  Eigen::MatrixXd x = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(rows), cols);
  Eigen::VectorXd y(static_cast<Eigen::Index>(rows));
  Eigen::Index r = 0;
  for (size_t k : draw)
    for (int vi : by_cluster[k]) {
      const auto& v = p.votes[static_cast<size_t>(vi)];
      x(r, 0) = 1.0;
      if (v.subject > 0) x(r, v.subject) = 1.0;
      if (v.judge > 0) x(r, S - 1 + v.judge) = 1.0;
      const int t = term(v);
      if (t >= 0) x(r, S + J - 1 + t) = 1.0;
      y(r) = v.label;
      ++r;
    }
  std::vector<std::string> names{"Intercept"};
  for (int s = 1; s < S; ++s) names.push_back("subject[T." + p.subjects[static_cast<size_t>(s)] + "]");
  for (int j = 1; j < J; ++j) names.push_back("judge[T." + p.judges[static_cast<size_t>(j)] + "]");
  for (const auto& t : term_names) names.push_back(t);
  return stats::logit_fit(x, y, names);
}

}  // namespace

bool is_imported_missing_vote(const JudgmentRow& r) {
  return r.status == "api_error" && !r.label && !r.draw_id && r.settings.is_object() &&
         r.settings.value("imported", false);
}

Result<PanelData> build_panel(const std::vector<JudgmentRow>& judgments) {
  PanelData p;
  std::map<std::string, std::string> sprov, jprov;
  std::set<std::string> clusters;
  auto note = [](std::map<std::string, std::string>& m, const std::string& k, const std::string& v,
                 const char* what) -> Status {
    auto [it, added] = m.emplace(k, v);
    if (!added && it->second != v)
      return InvalidArgument(fmt::format("judge_panel: {} '{}' appears with providers '{}' and '{}'", what, k,
                                         it->second, v));
    return Status::Ok();
  };
  for (const auto& r : judgments) {
    NF_RETURN_IF_ERROR(note(sprov, r.subject, r.subject_provider, "subject"));
    NF_RETURN_IF_ERROR(note(jprov, r.judge, r.judge_provider, "judge"));
    clusters.insert(r.cluster);
  }
  for (const auto& [k, v] : sprov) {
    p.subjects.push_back(k);
    p.subject_providers.push_back(v);
  }
  for (const auto& [k, v] : jprov) {
    p.judges.push_back(k);
    p.judge_providers.push_back(v);
  }
  p.clusters.assign(clusters.begin(), clusters.end());
  for (const auto& r : judgments) {
    const std::pair<std::string, std::string> unit{r.subject, r.item};
    auto& u = p.units[unit];
    if (u.empty()) u.assign(p.judges.size(), std::nullopt);
    p.unit_cluster[unit] = index_of(p.clusters, r.cluster);
    if (r.status != "ok" || !r.label) {
      ++p.not_votes;
      if (r.status == "parse_error") ++p.parse_errors;
      if (r.status == "api_error" && !is_imported_missing_vote(r)) ++p.api_errors;
      continue;
    }
    PanelData::Vote v{index_of(p.subjects, r.subject), index_of(p.judges, r.judge), index_of(p.clusters, r.cluster),
                      *r.label, r.item};
    u[static_cast<size_t>(v.judge)] = v.label;
    p.votes.push_back(std::move(v));
  }
  if (p.votes.empty()) return FailedPrecondition("judge_panel: the store holds no judge votes (status ok with a label)");
  return p;
}

Result<json> judge_panel_analysis(const PanelData& p, const JudgePanelOptions& options) {
  const int S = static_cast<int>(p.subjects.size()), J = static_cast<int>(p.judges.size());
  const size_t C = p.clusters.size();
  const auto& boot = options.bootstrap;
  std::vector<std::vector<int>> by_cluster(C);
  for (size_t i = 0; i < p.votes.size(); ++i) by_cluster[static_cast<size_t>(p.votes[i].cluster)].push_back(static_cast<int>(i));
  const std::vector<size_t> all = identity_draw(C);
  const Counts full = count_votes(p, by_cluster, all);

  json out;
  out["subjects"] = json::array();
  for (int s = 0; s < S; ++s) out["subjects"].push_back({{"subject", p.subjects[s]}, {"provider", p.subject_providers[s]}});
  out["judges"] = json::array();
  for (int j = 0; j < J; ++j) out["judges"].push_back({{"judge", p.judges[j]}, {"provider", p.judge_providers[j]}});
  out["votes"] = p.votes.size();
  out["not_votes"] = p.not_votes;
  out["not_votes_by_status"] = {{"parse_error", p.parse_errors},
                                {"api_error", p.api_errors},
                                {"no_label", p.not_votes - p.parse_errors - p.api_errors}};
  out["clusters"] = C;

  // ---- Table 4: rates
  json rates = json::array();
  for (int j = 0; j < J; ++j) {
    double yes_all = 0, n_all = 0;
    for (int s = 0; s < S; ++s) {
      const auto yes = static_cast<int64_t>(full.yes[j * S + s]), n = static_cast<int64_t>(full.n[j * S + s]);
      yes_all += yes;
      n_all += n;
      json row = {{"judge", p.judges[j]}, {"subject", p.subjects[s]}, {"n", n}, {"appropriate", yes}};
      if (n > 0) {
        NF_ASSIGN_OR_RETURN(auto w, stats::wilson(yes, n));
        row["rate"] = w.estimate;
        row["low"] = w.low;
        row["high"] = w.high;
      } else {
        row["rate"] = nullptr;
      }
      rates.push_back(row);
    }
    rates.push_back({{"judge", p.judges[j]}, {"subject", "all"}, {"n", static_cast<int64_t>(n_all)},
                     {"appropriate", static_cast<int64_t>(yes_all)},
                     {"rate", n_all > 0 ? json(yes_all / n_all) : json(nullptr)}});
  }
  out["rates"] = rates;

  // ---- Fleiss kappa over complete units
  {
    stats::RatingTable table;
    std::vector<std::string> clusters;
    double pair_agree = 0;
    for (const auto& [unit, labels] : p.units) {
      if (std::any_of(labels.begin(), labels.end(), [](const auto& l) { return !l; })) continue;
      std::vector<std::optional<int64_t>> row;
      int ones = 0;
      for (const auto& l : labels) {
        row.emplace_back(*l);
        ones += *l;
      }
      const double k = static_cast<double>(labels.size()), zeros = k - ones;
      pair_agree += k > 1 ? (ones * (ones - 1.0) + zeros * (zeros - 1.0)) / (k * (k - 1.0)) : 1.0;
      table.push_back(std::move(row));
      clusters.push_back(p.clusters[static_cast<size_t>(p.unit_cluster.at(unit))]);
    }
    json f = {{"complete_units", table.size()}, {"units", p.units.size()}};
    if (J >= 2 && !table.empty()) {
      auto fk = stats::fleiss_kappa(table);
      if (fk.ok()) {
        f["kappa"] = fk->estimate;
        f["mean_pairwise_agreement"] = pair_agree / static_cast<double>(table.size());
        auto ci = stats::agreement_bootstrap(table, [](const stats::RatingTable& t) { return stats::fleiss_kappa(t); },
                                             boot.resamples, boot.seed, boot.level, clusters);
        if (ci.ok()) {
          f["low"] = ci->low;
          f["high"] = ci->high;
          f["undefined_replicates"] = ci->undefined;
          add_agreement_interval_flags(f, ci->low == ci->high, clusters);
        }
      } else {
        f["kappa"] = nullptr;
        f["note"] = fk.status().message();
      }
    }
    out["fleiss"] = f;
  }

  // ---- own judge per subject (exactly one judge of the subject's provider)
  std::vector<int> own(static_cast<size_t>(S), -1);
  for (int s = 0; s < S; ++s) {
    int found = 0;
    for (int j = 0; j < J; ++j)
      if (p.judge_providers[j] == p.subject_providers[s]) {
        own[s] = j;
        ++found;
      }
    if (found != 1) own[s] = -1;
  }

  // ---- Table 5: raw gap and DiD
  auto peer_mean = [&](const Counts& c, int j, int s) {
    double sum = 0;
    int n = 0;
    for (int k = 0; k < J; ++k)
      if (k != j && std::isfinite(c.rate(k, s))) {
        sum += c.rate(k, s);
        ++n;
      }
    return n > 0 ? sum / n : kNaN;
  };
  json sp = json::array();
  int focus = -1;
  double best_gap = -std::numeric_limits<double>::infinity();
  for (int s = 0; s < S; ++s) {
    if (own[s] < 0) continue;
    const int j = own[s];
    const double own_rate = full.rate(j, s), peer = peer_mean(full, j, s), raw = own_rate - peer;
    double len = 0;
    int m = 0;
    for (int t = 0; t < S; ++t)
      if (t != s) {
        const double d = full.rate(j, t) - peer_mean(full, j, t);
        if (std::isfinite(d)) {
          len += d;
          ++m;
        }
      }
    const double leniency = m > 0 ? len / m : kNaN;
    sp.push_back({{"subject", p.subjects[s]}, {"own_judge", p.judges[j]}, {"own_rate", num(own_rate)},
                  {"peer_rate", num(peer)}, {"raw_gap", num(raw)}, {"own_judge_leniency_elsewhere", num(leniency)},
                  {"did", num(raw - leniency)}});
    if (std::isfinite(raw) && raw > best_gap) {
      best_gap = raw;
      focus = s;
    }
  }
  out["same_provider_effect"] = sp;

  // ---- logistic models with clustered bootstrap CIs
  if (!options.focus_subject.empty()) {
    auto it = std::find(p.subjects.begin(), p.subjects.end(), options.focus_subject);
    if (it == p.subjects.end())
      return InvalidArgument(fmt::format("judge_panel.focus_subject: unknown subject '{}'{}", options.focus_subject,
                                         did_you_mean(options.focus_subject, p.subjects)));
    focus = static_cast<int>(it - p.subjects.begin());
  }
  struct Model {
    std::string name;
    TermFn term;
    std::vector<std::string> names;
  };
  std::vector<Model> models;
  models.push_back({"shared", [&](const PanelData::Vote& v) { return own[v.subject] == v.judge ? 0 : -1; },
                    {"same_provider"}});
  if (focus >= 0)
    models.push_back({"focus",
                      [&, focus](const PanelData::Vote& v) {
                        return own[v.subject] != v.judge ? -1 : (v.subject == focus ? 0 : 1);
                      },
                      {"same_provider[" + p.subjects[focus] + "]", "same_provider[others]"}});
  {
    std::vector<std::string> names;
    for (int s = 0; s < S; ++s)
      if (own[s] >= 0) names.push_back("same_provider[" + p.subjects[s] + "]");
    std::vector<int> term_of(static_cast<size_t>(S), -1);
    int t = 0;
    for (int s = 0; s < S; ++s)
      if (own[s] >= 0) term_of[s] = t++;
    models.push_back({"per_subject",
                      [&, term_of](const PanelData::Vote& v) { return own[v.subject] == v.judge ? term_of[v.subject] : -1; },
                      names});
  }
  json logistic = json::object();
  logistic["formula"] = "label ~ C(subject) + C(judge) + same-provider term(s); vote level, every non-null vote";
  logistic["models"] = json::array();
  for (const auto& m : models) {
    json mj = {{"model", m.name}};
    if (m.names.empty()) continue;
    auto fit = fit_model(p, by_cluster, all, m.term, m.names);
    if (!fit.ok()) {
      mj["error"] = fit.status().message();
      logistic["models"].push_back(mj);
      continue;
    }
    std::vector<std::vector<double>> reps(m.names.size());
    int failed = 0;
    for (int r = 0; r < boot.resamples; ++r) {
      auto f = fit_model(p, by_cluster, random_draw(C, boot.seed, r), m.term, m.names);
      if (!f.ok()) {
        ++failed;
        continue;
      }
      for (size_t t = 0; t < m.names.size(); ++t) reps[t].push_back(f->beta(static_cast<Eigen::Index>(f->beta.size() - static_cast<Eigen::Index>(m.names.size()) + static_cast<Eigen::Index>(t))));
    }
    mj["n"] = fit->n;
    mj["log_likelihood"] = fit->log_likelihood;
    mj["failed_replicates"] = failed;
    mj["terms"] = json::array();
    for (size_t t = 0; t < m.names.size(); ++t) {
      NF_ASSIGN_OR_RETURN(auto c, fit->coef(m.names[t]));
      json tj = {{"term", c.name}, {"coef", c.coef}, {"se", c.se}, {"z", c.z}, {"p", c.p}};
      // Resamples that cannot be fitted (separation) are not missing at random: they are
      // the ones where the term is extreme. Past 5% of the resamples the percentile CI
      // over the rest would be biased towards the centre, so it is withheld.
      if (failed > boot.resamples / 20) {
        tj["ci_withheld"] = fmt::format("{} of {} bootstrap resamples could not be fitted (separation)", failed,
                                        boot.resamples);
      } else if (!reps[t].empty()) {
        NF_ASSIGN_OR_RETURN(auto ci, stats::percentile_interval(reps[t], boot.level));
        tj["low"] = ci.low;
        tj["high"] = ci.high;
      }
      mj["terms"].push_back(tj);
    }
    logistic["models"].push_back(mj);
  }
  out["logistic"] = logistic;

  // ---- exact permutation over bijections own judge <-> subject
  {
    json pj;
    const bool bijection = S == J && std::set<int>(own.begin(), own.end()).size() == static_cast<size_t>(S) &&
                           std::find(own.begin(), own.end(), -1) == own.end();
    if (!bijection) {
      pj["note"] = "subjects and judges do not pair one-to-one by provider; permutation test not run";
    } else {
      auto stat = [&](const std::vector<int>& perm) {
        // perm[s] = position in `own` order: subject s's assigned own judge is own[perm[s]].
        std::vector<int> assigned(static_cast<size_t>(S));
        for (int s = 0; s < S; ++s) assigned[s] = own[perm[s]];
        auto f = fit_model(p, by_cluster, all,
                           [&](const PanelData::Vote& v) { return assigned[v.subject] == v.judge ? 0 : -1; },
                           {"same_provider"});
        return f.ok() ? f->beta(f->beta.size() - 1) : kNaN;
      };
      // A permutation whose model cannot be fitted (e.g. separation) counts as not at least
      // as extreme (its statistic is NaN); an unfittable observed model skips the test.
      auto pr = stats::permutation_test_exact(S, stat);
      if (pr.ok()) {
        pj = {{"statistic", "shared same_provider coefficient"}, {"observed", pr->observed}, {"p", pr->p_value},
              {"at_least", pr->at_least}, {"total", pr->total}, {"exact", pr->exact}};
      } else {
        pj["note"] = "permutation test not run: " + pr.status().message();
      }
    }
    out["permutation"] = pj;
  }

  // ---- panel rates, leave-own-provider-out, leave-one-judge-out
  auto panel_inappropriate = [&](const Counts& c, int s, const std::function<bool(int)>& use) {
    double sum = 0;
    int n = 0;
    for (int j = 0; j < J; ++j)
      if (use(j) && std::isfinite(c.rate(j, s))) {
        sum += c.rate(j, s);
        ++n;
      }
    return n > 0 ? 1.0 - sum / n : kNaN;
  };
  auto ranking = [&](const std::vector<double>& v) {
    std::vector<int> idx(static_cast<size_t>(S));
    std::iota(idx.begin(), idx.end(), 0);
    std::stable_sort(idx.begin(), idx.end(), [&](int a, int b) { return v[a] < v[b]; });
    json r = json::array();
    for (int i : idx) r.push_back(p.subjects[i]);
    return r;
  };
  std::vector<double> full_rate(static_cast<size_t>(S));
  json lopo = json::array();
  for (int s = 0; s < S; ++s) {
    full_rate[s] = panel_inappropriate(full, s, [](int) { return true; });
    const double lo = panel_inappropriate(full, s, [&](int j) { return p.judge_providers[j] != p.subject_providers[s]; });
    json row = {{"subject", p.subjects[s]}, {"panel_inappropriate", num(full_rate[s])},
                {"leave_own_provider_out_inappropriate", num(lo)}};
    if (own[s] >= 0) row["own_judge_inappropriate"] = num(1.0 - full.rate(own[s], s));
    lopo.push_back(row);
  }
  out["leave_own_provider_out"] = lopo;
  const json full_rank = ranking(full_rate);
  json lojo = {{"full_ranking", full_rank}, {"rows", json::array()}};
  bool all_same = true;
  json undefined = json::array();
  for (int d = 0; d < J; ++d) {
    std::vector<double> v(static_cast<size_t>(S));
    json rates_d = json::object();
    std::string without;  // a subject left without any rate by this deletion
    for (int s = 0; s < S; ++s) {
      v[s] = panel_inappropriate(full, s, [d](int j) { return j != d; });
      rates_d[p.subjects[s]] = num(v[s]);
      if (!std::isfinite(v[s]) && without.empty()) without = p.subjects[s];
    }
    if (!without.empty()) {  // no ranking to compare: undefined, not "different"
      undefined.push_back(p.judges[d]);
      lojo["rows"].push_back({{"dropped_judge", p.judges[d]}, {"inappropriate", rates_d}, {"ranking", nullptr},
                              {"undefined", fmt::format("no judge left with votes on {}", without)}});
      continue;
    }
    const json rk = ranking(v);
    all_same = all_same && rk == full_rank;
    lojo["rows"].push_back({{"dropped_judge", p.judges[d]}, {"inappropriate", rates_d}, {"ranking", rk},
                            {"same_as_full", rk == full_rank}});
  }
  lojo["same_ranking_under_every_deletion"] = all_same;
  lojo["undefined_deletions"] = undefined;
  out["leave_one_judge_out"] = lojo;

  // ---- bootstrap probability of ranking first (lowest inappropriate) / last
  {
    std::vector<double> first(static_cast<size_t>(S), 0.0), last(static_cast<size_t>(S), 0.0);
    int valid = 0;
    for (int r = 0; r < boot.resamples; ++r) {
      const Counts c = count_votes(p, by_cluster, random_draw(C, boot.seed, r));
      std::vector<double> v(static_cast<size_t>(S));
      bool ok = true;
      for (int s = 0; s < S; ++s) {
        v[s] = panel_inappropriate(c, s, [](int) { return true; });
        ok = ok && std::isfinite(v[s]);
      }
      if (!ok) continue;
      ++valid;
      const double lo = *std::min_element(v.begin(), v.end()), hi = *std::max_element(v.begin(), v.end());
      const double nlo = static_cast<double>(std::count(v.begin(), v.end(), lo));
      const double nhi = static_cast<double>(std::count(v.begin(), v.end(), hi));
      for (int s = 0; s < S; ++s) {
        if (v[s] == lo) first[s] += 1.0 / nlo;
        if (v[s] == hi) last[s] += 1.0 / nhi;
      }
    }
    json rp = {{"valid_replicates", valid}, {"rows", json::array()}};
    for (int s = 0; s < S; ++s)
      rp["rows"].push_back({{"subject", p.subjects[s]},
                            {"p_first", valid > 0 ? json(first[s] / valid) : json(nullptr)},
                            {"p_last", valid > 0 ? json(last[s] / valid) : json(nullptr)}});
    out["rank_probability"] = rp;
  }
  out["bootstrap"] = {{"resamples", boot.resamples}, {"seed", boot.seed}, {"level", boot.level},
                      {"clusters", C},
                      {"method", "percentile, prompt-cluster (clusters = prompts; replicate r draws from "
                                 "Rng::stream(seed, {r}))"}};
  return out;
}

Result<json> judge_rates_by_condition(const std::vector<JudgmentRow>& judgments,
                                      const std::map<int64_t, std::string>& condition_of_draw,
                                      const BootstrapOptions& boot) {
  // (subject, condition, judge) -> cluster -> (met, votes); judge "" = all judges.
  using Cell = std::map<std::string, std::pair<double, double>>;
  std::map<std::tuple<std::string, std::string, std::string>, Cell> cells;
  std::set<std::string> conditions;
  for (const auto& r : judgments) {
    if (r.status != "ok" || !r.label || !r.draw_id) continue;
    auto c = condition_of_draw.find(*r.draw_id);
    if (c == condition_of_draw.end()) continue;
    conditions.insert(c->second);
    for (const std::string& judge : {r.judge, std::string()}) {
      auto& [met, votes] = cells[{r.subject, c->second, judge}][r.cluster];
      met += *r.label;
      votes += 1;
    }
  }
  json rows = json::array();
  if (conditions.size() < 2) return rows;
  for (const auto& [key, by_cluster] : cells) {
    const auto& [subject, condition, judge] = key;
    std::vector<double> num, den;
    for (const auto& [cluster, mv] : by_cluster) {
      num.push_back(mv.first);
      den.push_back(mv.second);
    }
    NF_ASSIGN_OR_RETURN(auto ci, stats::cluster_bootstrap_ratio(num, den, boot.resamples, boot.seed, boot.level));
    const double met = std::accumulate(num.begin(), num.end(), 0.0);
    const double votes = std::accumulate(den.begin(), den.end(), 0.0);
    rows.push_back({{"subject", subject},
                    {"condition", condition},
                    {"judge", judge.empty() ? std::string("all judges") : judge},
                    {"votes", static_cast<int64_t>(votes)},
                    {"met", static_cast<int64_t>(met)},
                    {"rate", met / votes},
                    {"low", ci.low},
                    {"high", ci.high}});
  }
  // "all judges" after the single judges of its (subject, condition).
  std::stable_sort(rows.begin(), rows.end(), [](const json& a, const json& b) {
    const auto ka = std::make_tuple(a["subject"].get<std::string>(), a["condition"].get<std::string>(),
                                    a["judge"] == "all judges");
    const auto kb = std::make_tuple(b["subject"].get<std::string>(), b["condition"].get<std::string>(),
                                    b["judge"] == "all judges");
    return ka < kb;
  });
  return rows;
}

std::string judge_rate_label(const std::string& criterion) {
  if (criterion.empty() || criterion == default_judge_criterion()) return "appropriate-response rate";
  if (criterion == xstest_judge_criterion()) return "full-compliance rate";
  return "criterion-met rate";
}

}  // namespace nf
