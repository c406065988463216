#include "metrics/human_validity.h"

#include "metrics/interval_flags.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "stats/agreement.h"
#include "stats/bootstrap.h"

namespace nf {
namespace {

using nlohmann::json;
using Col = std::vector<std::optional<int64_t>>;

json num(double x) { return std::isfinite(x) ? json(x) : json(nullptr); }

// An agreement statistic of two columns with a prompt-clustered percentile CI.
json agreement_json(const Col& a, const Col& b, const std::vector<std::string>& clusters, const BootstrapOptions& boot,
                    const std::function<Result<stats::Agreement>(const Col&, const Col&)>& fn) {
  stats::RatingTable t;
  std::vector<std::string> cl;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!a[i] || !b[i]) continue;
    t.push_back({a[i], b[i]});
    cl.push_back(clusters[i]);
  }
  auto stat = [&fn](const stats::RatingTable& tt) {
    Col x, y;
    for (const auto& r : tt) {
      x.push_back(r[0]);
      y.push_back(r[1]);
    }
    return fn(x, y);
  };
  json j;
  auto est = stat(t);
  if (!est.ok()) {
    j["estimate"] = nullptr;
    j["note"] = est.status().message();
    return j;
  }
  j["estimate"] = est->estimate;
  j["n"] = est->units;
  auto ci = stats::agreement_bootstrap(t, stat, boot.resamples, boot.seed, boot.level, cl);
  if (ci.ok()) {
    j["low"] = ci->low;
    j["high"] = ci->high;
    j["undefined_replicates"] = ci->undefined;
    add_agreement_interval_flags(j, ci->low == ci->high, cl);
  }
  return j;
}

}  // namespace

Result<json> human_validity_analysis(const PanelData& panel, const std::vector<HumanLabelRow>& labels,
                                     const std::vector<ItemRow>& items, const HumanValidityOptions& options) {
  if (labels.empty()) return FailedPrecondition("human_validity: the store holds no human labels");
  const auto& boot = options.bootstrap;
  std::set<std::string> rater_set;
  std::map<std::pair<std::string, std::string>, std::map<std::string, int>> by_unit;
  for (const auto& l : labels) {
    rater_set.insert(l.rater);
    by_unit[{l.subject, l.item}][l.rater] = l.label;
  }
  const std::vector<std::string> raters(rater_set.begin(), rater_set.end());
  const size_t R = raters.size(), J = panel.judges.size(), U = by_unit.size();
  std::map<std::string, json> meta;
  for (const auto& it : items) meta[it.item] = it.data;

  // Per unit: rater labels, consensus, judge votes, cluster, subject provider.
  std::vector<std::pair<std::string, std::string>> units;
  std::vector<Col> rater_col(R, Col(U)), judge_col(J, Col(U));
  Col consensus(U);
  std::vector<std::string> clusters(U);
  std::vector<std::string> sprov(U);
  int64_t without_votes = 0;
  size_t u = 0;
  for (const auto& [unit, rl] : by_unit) {
    units.push_back(unit);
    int ones = 0, n = 0;
    for (size_t r = 0; r < R; ++r)
      if (auto it = rl.find(raters[r]); it != rl.end()) {
        rater_col[r][u] = it->second;
        ones += it->second;
        ++n;
      }
    if (2 * ones > n) consensus[u] = 1;
    else if (2 * ones < n) consensus[u] = 0;
    auto pu = panel.units.find(unit);
    if (pu != panel.units.end()) {
      for (size_t j = 0; j < J; ++j)
        if (pu->second[j]) judge_col[j][u] = *pu->second[j];
      clusters[u] = panel.clusters[static_cast<size_t>(panel.unit_cluster.at(unit))];
    } else {
      ++without_votes;
      clusters[u] = unit.second;
    }
    auto si = std::find(panel.subjects.begin(), panel.subjects.end(), unit.first);
    if (si != panel.subjects.end()) sprov[u] = panel.subject_providers[static_cast<size_t>(si - panel.subjects.begin())];
    ++u;
  }
  std::vector<std::string> refs = raters;
  refs.push_back("consensus");
  std::vector<const Col*> ref_col;
  for (size_t r = 0; r < R; ++r) ref_col.push_back(&rater_col[r]);
  ref_col.push_back(&consensus);

  auto rate_of = [](const Col& c, const std::vector<size_t>& sel) {
    double s = 0, n = 0;
    for (size_t i : sel)
      if (c[i]) {
        s += static_cast<double>(*c[i]);
        ++n;
      }
    return std::make_pair(n > 0 ? s / n : std::nan(""), n);
  };
  std::vector<size_t> all(U);
  for (size_t i = 0; i < U; ++i) all[i] = i;
  std::set<std::string> cluster_set(clusters.begin(), clusters.end());

  json out;
  out["units"] = U;
  out["clusters"] = cluster_set.size();
  out["units_without_votes"] = without_votes;
  out["raters"] = json::array();
  for (size_t r = 0; r <= R; ++r) {
    auto [rate, n] = rate_of(*ref_col[r], all);
    out["raters"].push_back({{"rater", refs[r]}, {"n", static_cast<int64_t>(n)}, {"rate", num(rate)}});
  }
  out["judge_rates"] = json::array();
  for (size_t j = 0; j < J; ++j) {
    auto [rate, n] = rate_of(judge_col[j], all);
    out["judge_rates"].push_back({{"judge", panel.judges[j]}, {"n", static_cast<int64_t>(n)}, {"rate", num(rate)}});
  }

  // Fleiss across raters.
  {
    stats::RatingTable t;
    std::vector<std::string> cl;
    for (size_t i = 0; i < U; ++i) {
      std::vector<std::optional<int64_t>> row;
      bool complete = true;
      for (size_t r = 0; r < R; ++r) {
        complete = complete && rater_col[r][i].has_value();
        row.push_back(rater_col[r][i]);
      }
      if (!complete) continue;
      t.push_back(row);
      cl.push_back(clusters[i]);
    }
    json f = {{"units", t.size()}};
    auto fk = stats::fleiss_kappa(t);
    if (fk.ok()) {
      f["kappa"] = fk->estimate;
      auto ci = stats::agreement_bootstrap(t, [](const stats::RatingTable& x) { return stats::fleiss_kappa(x); },
                                           boot.resamples, boot.seed, boot.level, cl);
      if (ci.ok()) {
        f["low"] = ci->low;
        f["high"] = ci->high;
        add_agreement_interval_flags(f, ci->low == ci->high, cl);
      }
    } else {
      f["kappa"] = nullptr;
      f["note"] = fk.status().message();
    }
    out["fleiss"] = f;
  }

  // Pairwise agreement (Table 7).
  out["pairs"] = json::array();
  for (size_t a = 0; a < R; ++a)
    for (size_t b = a + 1; b < R; ++b) {
      json pj = {{"a", raters[a]}, {"b", raters[b]}};
      pj["raw"] = agreement_json(rater_col[a], rater_col[b], clusters, boot,
                                 [](const Col& x, const Col& y) { return stats::raw_agreement(x, y); });
      pj["cohen_kappa"] = agreement_json(rater_col[a], rater_col[b], clusters, boot,
                                         [](const Col& x, const Col& y) { return stats::cohen_kappa(x, y); });
      pj["gwet_ac1"] = agreement_json(rater_col[a], rater_col[b], clusters, boot,
                                      [](const Col& x, const Col& y) { return stats::gwet_ac1(x, y, 2); });
      out["pairs"].push_back(pj);
    }

  // Judge minus reference, paired over units (Table 8).
  std::vector<std::string> cluster_list(cluster_set.begin(), cluster_set.end());
  auto cluster_index = [&](size_t i) {
    return static_cast<size_t>(std::lower_bound(cluster_list.begin(), cluster_list.end(), clusters[i]) -
                               cluster_list.begin());
  };
  out["judge_minus_rater"] = json::array();
  for (size_t j = 0; j < J; ++j)
    for (size_t r = 0; r < refs.size(); ++r) {
      std::vector<double> numv(cluster_list.size(), 0.0), den(cluster_list.size(), 0.0);
      double sj = 0, sr = 0, n = 0;
      for (size_t i = 0; i < U; ++i) {
        if (!judge_col[j][i] || !(*ref_col[r])[i]) continue;
        const double d = static_cast<double>(*judge_col[j][i] - *(*ref_col[r])[i]);
        numv[cluster_index(i)] += d;
        den[cluster_index(i)] += 1;
        sj += static_cast<double>(*judge_col[j][i]);
        sr += static_cast<double>(*(*ref_col[r])[i]);
        ++n;
      }
      json row = {{"judge", panel.judges[j]}, {"reference", refs[r]}, {"n", static_cast<int64_t>(n)}};
      if (n > 0) {
        row["judge_rate"] = sj / n;
        row["reference_rate"] = sr / n;
        row["difference"] = (sj - sr) / n;
        auto ci = stats::cluster_bootstrap_ratio(numv, den, boot.resamples, boot.seed, boot.level);
        if (ci.ok()) {
          row["low"] = ci->low;
          row["high"] = ci->high;
        }
      }
      out["judge_minus_rater"].push_back(row);
    }

  // Aggregation rules (Table 9, Appendix C).
  struct Rule {
    std::string name;
    Col values;
  };
  std::vector<Rule> rules;
  for (size_t j = 0; j < J; ++j) rules.push_back({panel.judges[j], judge_col[j]});
  const int K = static_cast<int>(J);
  Rule tie{"tie_positive", Col(U)}, sup{"supermajority", Col(U)}, una{"unanimity", Col(U)},
      pex{"provider_excluded_majority", Col(U)};
  for (size_t i = 0; i < U; ++i) {
    int yes = 0, present = 0, oyes = 0, opresent = 0;
    for (size_t j = 0; j < J; ++j) {
      if (!judge_col[j][i]) continue;
      ++present;
      yes += static_cast<int>(*judge_col[j][i]);
      if (panel.judge_providers[j] != sprov[i]) {
        ++opresent;
        oyes += static_cast<int>(*judge_col[j][i]);
      }
    }
    if (present == 0) continue;
    tie.values[i] = 2 * yes >= K ? 1 : 0;
    sup.values[i] = 4 * yes >= 3 * K ? 1 : 0;
    una.values[i] = yes == K ? 1 : 0;
    if (opresent > 0) pex.values[i] = 2 * oyes > opresent ? 1 : 0;
  }
  rules.push_back(std::move(tie));
  rules.push_back(std::move(sup));
  rules.push_back(std::move(una));
  rules.push_back(std::move(pex));
  out["aggregation"] = json::array();
  for (const auto& rule : rules)
    for (size_t r = 0; r < refs.size(); ++r) {
      int64_t fl = 0, fs = 0, both1 = 0, both0 = 0;
      for (size_t i = 0; i < U; ++i) {
        const auto& a = rule.values[i];
        const auto& b = (*ref_col[r])[i];
        if (!a || !b) continue;
        if (*a == 1 && *b == 0) ++fl;
        if (*a == 0 && *b == 1) ++fs;
        if (*a == 1 && *b == 1) ++both1;
        if (*a == 0 && *b == 0) ++both0;
      }
      out["aggregation"].push_back(
          {{"rule", rule.name}, {"reference", refs[r]},
           {"kappa", agreement_json(rule.values, *ref_col[r], clusters, boot,
                                    [](const Col& x, const Col& y) { return stats::cohen_kappa(x, y); })},
           {"false_lenient", fl}, {"false_strict", fs}, {"both_appropriate", both1}, {"both_inappropriate", both0}});
    }

  // Panel vote-count calibration (Table 10).
  out["calibration"] = json::array();
  for (int k = 0; k <= K; ++k) {
    std::vector<size_t> sel;
    for (size_t i = 0; i < U; ++i) {
      int yes = 0, present = 0;
      for (size_t j = 0; j < J; ++j)
        if (judge_col[j][i]) {
          ++present;
          yes += static_cast<int>(*judge_col[j][i]);
        }
      if (present == K && yes == k) sel.push_back(i);
    }
    json row = {{"appropriate_votes", k}, {"of", K}, {"n", sel.size()}, {"rates", json::object()}};
    for (size_t r = 0; r < refs.size(); ++r) row["rates"][refs[r]] = num(rate_of(*ref_col[r], sel).first);
    out["calibration"].push_back(row);
  }

  // Strata of item metadata (Table 2).
  auto stratum_row = [&](const std::string& name, const std::vector<size_t>& sel) {
    double pm = 0, pn = 0;
    for (size_t i : sel) {
      double s = 0, n = 0;
      for (size_t j = 0; j < J; ++j)
        if (judge_col[j][i]) {
          s += static_cast<double>(*judge_col[j][i]);
          ++n;
        }
      if (n > 0) {
        pm += s / n;
        ++pn;
      }
    }
    const double panel_rate = pn > 0 ? pm / pn : std::nan("");
    json row = {{"stratum", name}, {"n", sel.size()}, {"judge_inappropriate", num(1.0 - panel_rate)},
                {"rates", json::object()}};
    for (size_t r = 0; r < refs.size(); ++r) row["rates"][refs[r]] = num(rate_of(*ref_col[r], sel).first);
    row["panel_minus_consensus"] = num(panel_rate - rate_of(consensus, sel).first);
    return row;
  };
  auto field_of = [&](size_t i, const std::string& f) -> std::optional<std::string> {
    auto it = meta.find(units[i].second);
    if (it == meta.end() || !it->second.is_object()) return std::nullopt;
    const json& m = it->second.contains("meta") && it->second["meta"].is_object() && !it->second.contains(f)
                        ? it->second["meta"]
                        : it->second;
    if (!m.contains(f) || !m[f].is_string()) return std::nullopt;
    return m[f].get<std::string>();
  };
  out["strata"] = json::array();
  out["strata"].push_back(stratum_row("all", all));
  for (const auto& sub : options.subsets) {
    std::vector<size_t> sel;
    std::string name;
    for (const auto& [f, v] : sub) name += (name.empty() ? "" : " & ") + f + "=" + v;
    for (size_t i = 0; i < U; ++i) {
      bool in = true;
      for (const auto& [f, v] : sub) in = in && field_of(i, f) == v;
      if (in) sel.push_back(i);
    }
    if (!sel.empty()) out["strata"].push_back(stratum_row(name, sel));
  }
  for (const auto& f : options.strata_fields) {
    std::map<std::string, std::vector<size_t>> groups;
    for (size_t i = 0; i < U; ++i)
      if (auto v = field_of(i, f)) groups[*v].push_back(i);
    for (const auto& [v, sel] : groups) out["strata"].push_back(stratum_row(f + "=" + v, sel));
  }
  out["bootstrap"] = {{"resamples", boot.resamples}, {"seed", boot.seed}, {"level", boot.level},
                      {"clusters", cluster_set.size()},
                      {"method", "percentile, prompt-cluster (clusters = prompts; replicate r draws from "
                                 "Rng::stream(seed, {r}))"}};
  return out;
}

}  // namespace nf
