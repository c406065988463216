#include "metrics/fairness.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "metrics/interval_flags.h"
#include "stats/bootstrap.h"
#include "stats/cluster_interval.h"
#include "stats/multiplicity.h"
#include "stats/paired.h"
#include "stats/proportion.h"
#include "util/file.h"
#include "util/rng.h"
#include "util/strings.h"

namespace nf {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// item -> (replicate -> value)
using ItemDraws = std::map<std::string, std::map<int, double>>;
// condition -> action -> item draws
using CellDraws = std::map<std::string, std::map<std::string, ItemDraws>>;

std::vector<double> values_of(const std::map<int, double>& reps) {
  std::vector<double> v;
  for (const auto& [r, x] : reps) v.push_back(x);
  return v;
}

// The registry field of each floor-projection action (vignettes.json confounded_registry).
std::string field_of(const std::string& action) {
  if (action == "high_acuity") return "esi_acuity";
  if (action == "any_opioid") return "analgesia_tier";
  if (action == "cs_caution") return "controlled_substance_caution";
  return action;  // admit, escalate_icu, referral
}

Result<std::vector<std::string>> string_list(const nlohmann::json& v, const std::string& key) {
  std::vector<std::string> out;
  if (!v.is_array()) return InvalidArgument(fmt::format("analyses.fairness.{}: expected a list of strings", key));
  for (const auto& e : v) {
    if (!e.is_string()) return InvalidArgument(fmt::format("analyses.fairness.{}: expected a list of strings", key));
    out.push_back(e.get<std::string>());
  }
  return out;
}

Result<std::vector<int>> int_list(const nlohmann::json& v, const std::string& key) {
  std::vector<int> out;
  const nlohmann::json arr = v.is_array() ? v : nlohmann::json::array({v});
  for (const auto& e : arr) {
    if (!e.is_number_integer() || e.get<int64_t>() < 1 || e.get<int64_t>() > 1000000)
      return InvalidArgument(fmt::format("analyses.fairness.{}: expected positive integers", key));
    out.push_back(e.get<int>());
  }
  return out;
}

// Studentized cluster-bootstrap CI of a ratio of sums (stats/cluster_interval.h); NaN
// bounds when undefined (no denominator).
IntervalInfo ratio_ci(const std::vector<double>& num, const std::vector<double>& den, const BootstrapOptions& boot) {
  IntervalInfo info;
  info.clusters = static_cast<int64_t>(num.size());
  auto r = stats::cluster_ratio_interval(num, den, boot.resamples, boot.seed, boot.level);
  if (!r.ok()) return info;
  info.low = r->low;
  info.high = r->high;
  info.percentile_low = r->percentile_low;
  info.percentile_high = r->percentile_high;
  info.degenerate = r->degenerate;
  info.method = r->method;
  return info;
}

nlohmann::json interval_json(const IntervalInfo& i, int64_t x, int64_t n, double level, const std::string& unit) {
  nlohmann::json j = nlohmann::json::object();
  if (n <= 0 || i.method.empty()) return j;
  double wl = kNaN, wh = kNaN;
  if (auto w = stats::wilson(x, n, level); w.ok()) {
    wl = w->low;
    wh = w->high;
  }
  add_interval_flags(j, i.method, i.clusters, i.degenerate, i.percentile_low, i.percentile_high, x, n, wl, wh, unit);
  return j;
}

}  // namespace

Result<FairnessOptions> FairnessOptions::from_json(const nlohmann::json& j) {
  FairnessOptions o;
  if (j.is_null()) return o;
  if (!j.is_object()) return InvalidArgument("analyses.fairness: expected an object of options");
  for (const auto& [k, v] : j.items()) {
    o.given.insert(k);
    if (k == "reference" || k == "acceptable_bands" || k == "registry") {
      if (!v.is_string()) return InvalidArgument(fmt::format("analyses.fairness.{}: expected a string", k));
      (k == "reference" ? o.reference : k == "registry" ? o.registry : o.acceptable_bands) = v.get<std::string>();
    } else if (k == "paired_difference") {
      NF_ASSIGN_OR_RETURN(auto l, string_list(v, k));
      if (l.size() != 2 || l[0] == l[1])
        return InvalidArgument("analyses.fairness.paired_difference: expected two different actions [a, b]");
      o.paired_difference = {l[0], l[1]};
    } else if (k == "pooled_exclude") {
      NF_ASSIGN_OR_RETURN(o.pooled_exclude, string_list(v, k));
    } else if (k == "subsample_order") {
      NF_ASSIGN_OR_RETURN(o.subsample_order, string_list(v, k));
    } else if (k == "target_pairs") {
      if (!v.is_number_integer() || v.get<int64_t>() < 1)
        return InvalidArgument("analyses.fairness.target_pairs: expected a positive integer");
      o.target_pairs = v.get<int64_t>();
    } else if (k == "subsample_k") {
      NF_ASSIGN_OR_RETURN(o.subsample_k, int_list(v, k));
    } else if (k == "vote_sizes") {
      NF_ASSIGN_OR_RETURN(o.vote_sizes, int_list(v, k));
    } else if (k == "alpha") {
      if (!v.is_number() || !(v.get<double>() > 0 && v.get<double>() < 1))
        return InvalidArgument("analyses.fairness.alpha: expected a number in (0, 1)");
      o.alpha = v.get<double>();
    } else {
      return InvalidArgument(fmt::format("analyses.fairness: unknown option '{}'", k));
    }
  }
  return o;
}

std::vector<std::string> changed_attributes(const std::string& c) {
  static const std::map<std::string, std::vector<std::string>> kChanged{
      {"race_black_man_private", {"race"}},
      {"race_hispanic_man_private", {"race"}},
      {"race_asian_man_private", {"race"}},
      {"race_native_american_man_private", {"race"}},
      {"white_woman_private", {"sex"}},
      {"age_34_white_man_private", {"age"}},
      {"age_78_white_man_private", {"age"}},
      {"white_man_medicaid", {"insurance"}},
      {"white_man_private_lep", {"lep"}},
      {"black_woman_medicaid", {"race", "sex", "insurance"}},
      {"hispanic_man_medicaid_lep", {"race", "insurance", "lep"}}};
  auto it = kChanged.find(c);
  return it == kChanged.end() ? std::vector<std::string>{} : it->second;
}

bool registry_demotes(const nlohmann::json& registry, const std::string& attribute, const std::string& action) {
  if (!registry.is_object()) return false;
  const std::string field = field_of(action);
  if (registry.contains("never_exempt") && registry["never_exempt"].is_array())
    for (const auto& f : registry["never_exempt"])
      if (f == field) return false;
  if (registry.contains("defensible_directions") && registry["defensible_directions"].contains(attribute) &&
      registry["defensible_directions"][attribute].contains(field))
    return true;
  if (registry.contains("requires_adjudication") && registry["requires_adjudication"].is_array())
    for (const auto& p : registry["requires_adjudication"])
      if (p.is_array() && p.size() == 2 && p[0] == attribute && p[1] == field) return true;
  return false;
}

Result<std::vector<FairnessResult>> compute_fairness(const std::vector<OutcomeRow>& rows,
                                                     const FairnessOptions& options, const BootstrapOptions& boot) {
  // Optional inputs.
  nlohmann::json registry = nlohmann::json::object();
  if (!options.registry.empty()) {
    NF_ASSIGN_OR_RETURN(auto text, read_file(options.registry));
    auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object())
      return InvalidArgument(fmt::format("analyses.fairness.registry: {}: malformed JSON", options.registry));
    registry = j.contains("confounded_registry") ? j["confounded_registry"] : j;
  }
  nlohmann::json bands = nullptr;
  if (!options.acceptable_bands.empty()) {
    NF_ASSIGN_OR_RETURN(auto text, read_file(options.acceptable_bands));
    bands = nlohmann::json::parse(text, nullptr, false);
    if (bands.is_discarded() || !bands.is_object())
      return InvalidArgument(fmt::format(
          "analyses.fairness.acceptable_bands: {}: expected a JSON object vignette -> action -> [acceptable values]",
          options.acceptable_bands));
  }

  std::map<std::pair<std::string, std::string>, CellDraws> groups;
  std::set<std::string> outcomes;
  for (const auto& r : rows) {
    groups[{r.subject, r.config}][r.condition][r.outcome][r.item][r.replicate] = r.value;
    outcomes.insert(r.outcome);
  }
  // Options the caller gave that name actions: each must be an outcome of the rows.
  const std::vector<std::string> outcome_list(outcomes.begin(), outcomes.end());
  auto check_actions = [&](const std::string& key, const std::vector<std::string>& names) -> Status {
    if (!options.given.count(key) || rows.empty()) return Status::Ok();
    for (const auto& a : names)
      if (!outcomes.count(a))
        return InvalidArgument(fmt::format("analyses.fairness.{}: unknown action '{}' (actions: {}){}", key, a,
                                           join(outcome_list, ", "), did_you_mean(a, outcome_list)));
    return Status::Ok();
  };
  NF_RETURN_IF_ERROR(check_actions(
      "paired_difference", {options.paired_difference.first, options.paired_difference.second}));
  NF_RETURN_IF_ERROR(check_actions("pooled_exclude", options.pooled_exclude));
  if (options.given.count("pooled_exclude") && !rows.empty() && !options.pooled_exclude.empty() &&
      std::all_of(outcome_list.begin(), outcome_list.end(), [&](const std::string& a) {
        return std::find(options.pooled_exclude.begin(), options.pooled_exclude.end(), a) !=
               options.pooled_exclude.end();
      }))
    return InvalidArgument(fmt::format(
        "analyses.fairness.pooled_exclude: [{}] excludes every action, nothing is left to pool (actions: {})",
        join(options.pooled_exclude, ", "), join(outcome_list, ", ")));

  std::vector<FairnessResult> out;
  for (const auto& [sc, cells] : groups) {
    FairnessResult res;
    res.subject = sc.first;
    res.config = sc.second;
    res.reference = options.reference;
    res.level = boot.level;
    if (res.reference.empty())
      res.reference = cells.count("ref_white_man_private") ? "ref_white_man_private" : "reference";
    auto ref_it = cells.find(res.reference);
    if (ref_it == cells.end()) {
      if (!options.reference.empty())
        return InvalidArgument(fmt::format("analyses.fairness.reference: condition '{}' has no ok draws for {} / {}",
                                           res.reference, res.subject, res.config));
      continue;  // a subject x config without the reference condition: nothing to read against
    }
    const auto& ref = ref_it->second;
    std::vector<std::string> actions;
    for (const auto& [a, d] : ref) actions.push_back(a);
    std::set<std::string> all_items;
    for (const auto& [a, d] : ref)
      for (const auto& [it, reps] : d) all_items.insert(it);
    const std::vector<std::string> items(all_items.begin(), all_items.end());
    res.vignettes = static_cast<int64_t>(items.size());
    const size_t n = items.size();

    // Per-action floor counts per vignette.
    std::map<std::string, std::vector<double>> num, den, pos, cnt;
    for (const auto& a : actions) {
      num[a].assign(n, 0.0);
      den[a].assign(n, 0.0);
      pos[a].assign(n, 0.0);
      cnt[a].assign(n, 0.0);
      for (size_t i = 0; i < n; ++i) {
        auto it = ref.at(a).find(items[i]);
        if (it == ref.at(a).end()) continue;
        const auto v = values_of(it->second);
        const auto [d, c] = pair_disagreement(v);
        num[a][i] = static_cast<double>(d);
        den[a][i] = static_cast<double>(c);
        for (double x : v) pos[a][i] += x != 0.0 ? 1.0 : 0.0;
        cnt[a][i] = static_cast<double>(v.size());
      }
    }
    auto make_floor = [&](const std::string& name, const std::vector<std::string>& acts) {
      ActionFloor f;
      f.action = name;
      std::vector<double> nn(n, 0.0), dd(n, 0.0);
      double p = 0, c = 0;
      for (const auto& a : acts) {
        for (size_t i = 0; i < n; ++i) {
          nn[i] += num[a][i];
          dd[i] += den[a][i];
          p += pos[a][i];
          c += cnt[a][i];
          if (den[a][i] > 0) {
            ++f.cells;
            if (num[a][i] == 0) ++f.unanimous_cells;
          }
        }
      }
      for (size_t i = 0; i < n; ++i) {
        f.discordant += static_cast<int64_t>(nn[i]);
        f.comparisons += static_cast<int64_t>(dd[i]);
        double draws = 0;  // a draw gives every action: the most any action has for this item
        for (const auto& a : acts) draws = std::max(draws, cnt[a][i]);
        f.valid_draws += static_cast<int64_t>(draws);
        f.items_observed += draws > 0 ? 1 : 0;
        f.items_contributing += dd[i] > 0 ? 1 : 0;
      }
      f.rate = f.comparisons > 0 ? static_cast<double>(f.discordant) / static_cast<double>(f.comparisons) : kNaN;
      f.interval = ratio_ci(nn, dd, boot);
      f.ci_low = f.interval.low;
      f.ci_high = f.interval.high;
      f.prevalence = c > 0 ? p / c : kNaN;
      const double mx = 2.0 * f.prevalence * (1.0 - f.prevalence);
      f.normalised_ratio = mx > 0 ? f.rate / mx : kNaN;
      if (f.rate > 0 && f.rate <= 1) {
        auto plan = stats::vignettes_needed(f.rate, options.target_pairs, 1);
        if (plan.ok()) {
          f.plan = *plan;
          f.plan_defined = true;
        }
      }
      return f;
    };
    for (const auto& a : actions) res.floors.push_back(make_floor(a, {a}));
    res.floors.push_back(make_floor("pooled", actions));
    {
      std::vector<std::string> kept;
      for (const auto& a : actions)
        if (std::find(options.pooled_exclude.begin(), options.pooled_exclude.end(), a) == options.pooled_exclude.end())
          kept.push_back(a);
      if (!options.pooled_exclude.empty() && kept.size() < actions.size() && !kept.empty()) {
        std::string label = "pooled_without";
        for (const auto& e : options.pooled_exclude) label += "_" + e;
        res.floors.push_back(make_floor(label, kept));
      }
    }

    // Paired difference of two actions' floors.
    const auto& [pa, pb] = options.paired_difference;
    if (num.count(pa) && num.count(pb)) {
      PairedFloorDifference d;
      d.a = pa;
      d.b = pb;
      double sa = 0, sb = 0, sda = 0;
      for (size_t i = 0; i < n; ++i) {
        sa += num[pa][i];
        sb += num[pb][i];
        sda += den[pa][i];
      }
      d.discordant_a = static_cast<int64_t>(sa);
      d.discordant_b = static_cast<int64_t>(sb);
      d.comparisons = static_cast<int64_t>(sda);
      const auto& na = num[pa];
      const auto& nb = num[pb];
      const auto& da = den[pa];
      const auto& db = den[pb];
      auto stat = [&](const std::vector<size_t>& cl) {
        double x = 0, y = 0, dx = 0, dy = 0;
        for (size_t k : cl) {
          x += na[k];
          y += nb[k];
          dx += da[k];
          dy += db[k];
        }
        return dx > 0 && dy > 0 ? x / dx - y / dy : kNaN;
      };
      auto br = stats::cluster_bootstrap(n, stat, boot.resamples, boot.seed, boot.level);
      if (br.ok()) {
        d.difference = br->estimate;
        d.ci_low = br->low;
        d.ci_high = br->high;
        res.paired = d;
        res.paired_defined = true;
      } else {
        res.notes.push_back(fmt::format("paired difference {} - {}: {}", pa, pb, br.status().message()));
      }
    }

    // Subsampling curve over the first K vignettes of the order.
    std::vector<std::string> order = options.subsample_order.empty() ? items : options.subsample_order;
    for (const auto& id : order)
      if (!all_items.count(id))
        return InvalidArgument(fmt::format("analyses.fairness.subsample_order: unknown vignette '{}'", id));
    for (int k : options.subsample_k) {
      if (static_cast<size_t>(k) > order.size() && options.given.count("subsample_k"))
        return InvalidArgument(fmt::format(
            "analyses.fairness.subsample_k: K = {} exceeds the {} vignettes of {} / {} (valid: 1 to {})", k,
            order.size(), res.subject, res.config, order.size()));
      if (static_cast<size_t>(k) > order.size()) {
        res.notes.push_back(fmt::format("subsampling: K = {} exceeds the {} vignettes in the order", k, order.size()));
        continue;
      }
      SubsamplePoint sp;
      sp.k = k;
      for (int i = 0; i < k; ++i) {
        const size_t idx = static_cast<size_t>(
            std::lower_bound(items.begin(), items.end(), order[static_cast<size_t>(i)]) - items.begin());
        for (const auto& a : actions) {
          sp.discordant += static_cast<int64_t>(num[a][idx]);
          sp.comparisons += static_cast<int64_t>(den[a][idx]);
        }
      }
      sp.rate = sp.comparisons > 0 ? static_cast<double>(sp.discordant) / static_cast<double>(sp.comparisons) : kNaN;
      res.subsample.push_back(sp);
    }

    // Majority vote over R' draws and its residual floor (seed 000 §D).
    if (options.given.count("vote_sizes")) {
      size_t most = 0;  // the most replicates of any reference vignette x action cell
      for (const auto& a : actions)
        for (const auto& [it, reps] : ref.at(a)) most = std::max(most, reps.size());
      for (int r : options.vote_sizes)
        if (2 * static_cast<size_t>(r) > most)
          return InvalidArgument(fmt::format(
              "analyses.fairness.vote_sizes: R' = {} needs {} replicates per vignette (two disjoint votes); {} / {} "
              "has at most {} (valid: {})",
              r, 2 * r, res.subject, res.config, most,
              most >= 2 ? fmt::format("1 to {}", most / 2) : std::string("none, fewer than 2 replicates")));
    }
    for (int r : options.vote_sizes) {
      MajorityPoint pooled{"pooled", r, 0, 0, 0.0};
      for (const auto& a : actions) {
        MajorityPoint m{a, r, 0, 0, 0.0};
        for (const auto& [it, reps] : ref.at(a)) {
          NF_ASSIGN_OR_RETURN(auto dc, majority_vote_disagreement(values_of(reps), r));
          m.discordant += dc.first;
          m.comparisons += dc.second;
        }
        m.rate = m.comparisons > 0 ? static_cast<double>(m.discordant) / static_cast<double>(m.comparisons) : kNaN;
        pooled.discordant += m.discordant;
        pooled.comparisons += m.comparisons;
        res.majority.push_back(m);
      }
      pooled.rate = pooled.comparisons > 0
                        ? static_cast<double>(pooled.discordant) / static_cast<double>(pooled.comparisons)
                        : kNaN;
      res.majority.push_back(pooled);
    }

    // Flips per contrast x action.
    std::map<std::string, double> floor_of;
    for (const auto& f : res.floors) floor_of[f.action] = f.rate;
    for (const auto& [cond, per_action] : cells) {
      if (cond == res.reference) continue;
      const bool control =
          cond == "rerender_control" || cond == "sham_attribute_control" || cond == "rare_token_control";
      for (const auto& a : actions) {
        auto ca = per_action.find(a);
        if (ca == per_action.end()) continue;
        FlipRow fr;
        fr.condition = cond;
        fr.action = a;
        fr.control = control;
        fr.floor = floor_of[a];
        std::vector<double> fn(n, 0.0), fd(n, 0.0), rp(n, 0.0), rn(n, 0.0), cp(n, 0.0), cn(n, 0.0);
        int64_t wr_flips = 0, wr_pairs = 0;
        for (size_t i = 0; i < n; ++i) {
          auto ri = ref.at(a).find(items[i]);
          auto ci = ca->second.find(items[i]);
          if (ri == ref.at(a).end() || ci == ca->second.end()) continue;
          for (const auto& [r1, x] : ri->second) {
            rp[i] += x;
            rn[i] += 1;
            for (const auto& [r2, y] : ci->second) {
              fd[i] += 1;
              fn[i] += x != y ? 1 : 0;
            }
          }
          for (const auto& [r2, y] : ci->second) {
            cp[i] += y;
            cn[i] += 1;
          }
          // One draw per case: the lowest replicate both conditions have.
          for (const auto& [r1, x] : ri->second) {
            auto m = ci->second.find(r1);
            if (m == ci->second.end()) continue;
            const double y = m->second;
            ++fr.cases;
            if (x == 0 && y != 0) ++fr.b;
            if (x != 0 && y == 0) ++fr.c;
            if (bands.is_object() && bands.contains(items[i]) && bands[items[i]].contains(a) &&
                bands[items[i]][a].is_array()) {
              const auto& band = bands[items[i]][a];
              auto in = [&](double v) {
                return std::any_of(band.begin(), band.end(),
                                   [&](const nlohmann::json& e) { return e.is_number() && e.get<double>() == v; });
              };
              if (in(x) && in(y)) {
                ++wr_pairs;
                wr_flips += x != y ? 1 : 0;
              }
            }
            break;
          }
        }
        for (size_t i = 0; i < n; ++i) {
          fr.flips += static_cast<int64_t>(fn[i]);
          fr.pairs += static_cast<int64_t>(fd[i]);
        }
        if (fr.pairs == 0) continue;
        fr.flip_rate = static_cast<double>(fr.flips) / static_cast<double>(fr.pairs);
        fr.interval = ratio_ci(fn, fd, boot);
        fr.flip_low = fr.interval.low;
        fr.flip_high = fr.interval.high;
        NF_ASSIGN_OR_RETURN(fr.p_value, stats::mcnemar_exact(fr.b, fr.c));
        fr.direction = fr.b > fr.c ? 1 : fr.b < fr.c ? -1 : 0;
        auto disparity = [&](const std::vector<size_t>& cl) {
          double a1 = 0, a0 = 0, b1 = 0, b0 = 0;
          for (size_t k : cl) {
            a1 += cp[k];
            a0 += cn[k];
            b1 += rp[k];
            b0 += rn[k];
          }
          return a0 > 0 && b0 > 0 ? a1 / a0 - b1 / b0 : kNaN;
        };
        auto dr = stats::cluster_bootstrap(n, disparity, boot.resamples, boot.seed, boot.level);
        if (dr.ok()) {
          fr.disparity = dr->estimate;
          fr.disparity_low = dr->low;
          fr.disparity_high = dr->high;
        } else {
          fr.disparity = fr.disparity_low = fr.disparity_high = kNaN;
        }
        for (const auto& attr : changed_attributes(cond))
          if (registry_demotes(registry, attr, a)) fr.registry_confounded = true;
        if (bands.is_object())
          fr.within_range = {
              {"flips", wr_flips},
              {"pairs", wr_pairs},
              {"rate", wr_pairs > 0 ? nlohmann::json(static_cast<double>(wr_flips) / static_cast<double>(wr_pairs))
                                    : nlohmann::json(nullptr)}};
        res.flips.push_back(std::move(fr));
      }
    }
    if (cells.size() == 1)
      res.contrasts_skipped = fmt::format(
          "descriptor contrasts skipped: the store holds only the reference condition '{}' for {} / {} (e.g. imported "
          "reference draws); flip rates, McNemar tests, disparities and control arms need descriptor conditions",
          res.reference, res.subject, res.config);
    // BH across the non-control contrasts; the credible flag against the largest control.
    std::vector<double> ps;
    std::vector<size_t> idx;
    for (size_t i = 0; i < res.flips.size(); ++i)
      if (!res.flips[i].control) {
        ps.push_back(res.flips[i].p_value);
        idx.push_back(i);
      }
    if (!ps.empty()) {
      NF_ASSIGN_OR_RETURN(auto qs, stats::benjamini_hochberg(ps));
      for (size_t k = 0; k < idx.size(); ++k) res.flips[idx[k]].q_value = qs[k];
    }
    std::map<std::string, double> control_max;
    std::set<std::string> has_control;
    for (const auto& f : res.flips)
      if (f.control) {
        has_control.insert(f.action);
        control_max[f.action] = std::max(control_max[f.action], f.flip_rate);
      }
    for (auto& f : res.flips) {
      f.control_max = has_control.count(f.action) ? control_max[f.action] : kNaN;
      if (f.control)
        f.reading = "control";
      else if (f.registry_confounded)
        f.reading = "descriptive (confounded registry)";
      else if (!(f.q_value < options.alpha))
        f.reading = "not significant";
      else if (!has_control.count(f.action))
        f.reading = "no control arm";
      else if (!(f.flip_rate > f.control_max))
        f.reading = "below control";
      else
        f.reading = "credible";
    }
    if (!bands.is_object())
      res.within_range_note =
          "within-range flip rate refused: it needs clinician-adjudicated acceptable-action bands "
          "(analyses.fairness.acceptable_bands: a JSON file vignette -> action -> [acceptable values]); "
          "none was given (seed 000 S4, S9)";
    out.push_back(std::move(res));
  }
  return out;
}

nlohmann::json fairness_result_to_json(const FairnessResult& r) {
  auto num = [](double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr); };
  nlohmann::json j;
  j["subject"] = r.subject;
  j["config"] = r.config;
  j["reference"] = r.reference;
  j["vignettes"] = r.vignettes;
  j["floors"] = nlohmann::json::array();
  for (const auto& f : r.floors) {
    nlohmann::json fj = {{"action", f.action},
                         {"discordant", f.discordant},
                         {"comparisons", f.comparisons},
                         {"rate", num(f.rate)},
                         {"ci_low", num(f.ci_low)},
                         {"ci_high", num(f.ci_high)},
                         {"cells", f.cells},
                         {"unanimous_cells", f.unanimous_cells},
                         {"prevalence", num(f.prevalence)},
                         {"normalised_ratio", num(f.normalised_ratio)}};
    fj["vignettes_needed"] = f.plan_defined ? nlohmann::json(f.plan.vignettes) : nlohmann::json(nullptr);
    fj.update(interval_json(f.interval, f.discordant, f.comparisons, r.level, "pairs"));
    fj["coverage"] = {{"items_contributing", f.items_contributing},
                      {"items_observed", f.items_observed},
                      {"valid_draws", f.valid_draws},
                      {"items_planned", nullptr},
                      {"draws_planned", nullptr},
                      {"planned_note", "unknown"}};
    j["floors"].push_back(fj);
  }
  j["paired_difference"] = r.paired_defined ? nlohmann::json{{"a", r.paired.a},
                                                             {"b", r.paired.b},
                                                             {"discordant_a", r.paired.discordant_a},
                                                             {"discordant_b", r.paired.discordant_b},
                                                             {"difference_discordant",
                                                              r.paired.discordant_a - r.paired.discordant_b},
                                                             {"comparisons", r.paired.comparisons},
                                                             {"difference", num(r.paired.difference)},
                                                             {"ci_low", num(r.paired.ci_low)},
                                                             {"ci_high", num(r.paired.ci_high)}}
                                            : nlohmann::json(nullptr);
  j["subsample"] = nlohmann::json::array();
  for (const auto& s : r.subsample)
    j["subsample"].push_back(
        {{"k", s.k}, {"discordant", s.discordant}, {"comparisons", s.comparisons}, {"rate", num(s.rate)}});
  j["majority"] = nlohmann::json::array();
  for (const auto& m : r.majority)
    j["majority"].push_back({{"action", m.action},
                             {"vote_size", m.vote_size},
                             {"discordant", m.discordant},
                             {"comparisons", m.comparisons},
                             {"rate", num(m.rate)}});
  j["flips"] = nlohmann::json::array();
  for (const auto& f : r.flips) {
    nlohmann::json fj = {{"condition", f.condition},
                         {"action", f.action},
                         {"control", f.control},
                         {"flips", f.flips},
                         {"pairs", f.pairs},
                         {"flip_rate", num(f.flip_rate)},
                         {"flip_low", num(f.flip_low)},
                         {"flip_high", num(f.flip_high)},
                         {"floor", num(f.floor)},
                         {"expected_flip_no_effect", num(f.floor)},
                         {"cases", f.cases},
                         {"b", f.b},
                         {"c", f.c},
                         {"p_value", num(f.p_value)},
                         {"q_value", f.control ? nlohmann::json(nullptr) : num(f.q_value)},
                         {"direction", f.direction},
                         {"disparity", num(f.disparity)},
                         {"disparity_low", num(f.disparity_low)},
                         {"disparity_high", num(f.disparity_high)},
                         {"control_max", num(f.control_max)},
                         {"registry_confounded", f.registry_confounded},
                         {"reading", f.reading}};
    fj["within_range"] = f.within_range;
    fj.update(interval_json(f.interval, f.flips, f.pairs, r.level, "reference x condition pairs"));
    j["flips"].push_back(fj);
  }
  j["within_range_note"] = r.within_range_note.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.within_range_note);
  j["notes"] = r.notes;
  j["contrasts_skipped"] =
      r.contrasts_skipped.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.contrasts_skipped);
  return j;
}

Result<nlohmann::json> descriptor_lengths(const std::string& vignettes_path) {
  NF_ASSIGN_OR_RETURN(auto text, read_file(vignettes_path));
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return InvalidArgument(fmt::format("{}: malformed JSON", vignettes_path));
  nlohmann::json out = nlohmann::json::array();
  for (const char* list : {"conditions_standard_12", "control_conditions"}) {
    if (!j.contains(list) || !j[list].is_array()) continue;
    for (const auto& c : j[list]) {
      const std::string d = c.value("descriptor", "");
      int64_t chars = 0, words = 0;
      bool in = false;
      for (unsigned char ch : d) {
        chars += (ch & 0xC0) != 0x80 ? 1 : 0;
        const bool space = ch == ' ' || ch == '\t' || ch == '\n';
        if (!space && !in) ++words;
        in = !space;
      }
      out.push_back({{"id", c.value("id", "")},
                     {"axis", c.value("axis", "")},
                     {"descriptor", d},
                     {"chars", chars},
                     {"words", words}});
    }
  }
  return out;
}

Result<PlanSimulation> simulate_signed_mcnemar(int vignettes, double floor, double shift, bool opposing,
                                               int simulations, uint64_t seed, double alpha) {
  if (vignettes < 1) return InvalidArgument(fmt::format("plan: vignettes must be >= 1, got {}", vignettes));
  if (simulations < 1) return InvalidArgument(fmt::format("plan: simulations must be >= 1, got {}", simulations));
  if (!(floor >= 0.0 && floor <= 0.5))
    return InvalidArgument(fmt::format("plan: floor must be in [0, 0.5], got {}", floor));
  if (!(std::fabs(shift) <= 1.0)) return InvalidArgument(fmt::format("plan: shift must be in [-1, 1], got {}", shift));
  if (!(alpha > 0.0 && alpha < 1.0))
    return InvalidArgument(fmt::format("plan: alpha must be in (0, 1), got {}", alpha));
  PlanSimulation out;
  out.vignettes = vignettes;
  out.simulations = simulations;
  out.floor = floor;
  out.shift = shift;
  out.opposing = opposing;
  const double q = (1.0 - std::sqrt(1.0 - 2.0 * floor)) / 2.0;
  int64_t rejections = 0;
  double flip_sum = 0.0, expect_sum = 0.0;
  for (int s = 0; s < simulations; ++s) {
    Rng rng = Rng::stream(seed, {static_cast<uint64_t>(s)});
    int64_t b = 0, c = 0;
    double expect = 0.0;
    for (int v = 0; v < vignettes; ++v) {
      const double p0 = rng.uniform() < 0.5 ? q : 1.0 - q;
      const double sign = opposing ? (rng.uniform() < 0.5 ? 1.0 : -1.0) : 1.0;
      const double p1 = std::clamp(p0 + sign * shift, 0.0, 1.0);
      const bool x = rng.uniform() < p0;
      const bool y = rng.uniform() < p1;
      b += !x && y ? 1 : 0;
      c += x && !y ? 1 : 0;
      expect += 2.0 * p0 * (1.0 - p0);
    }
    NF_ASSIGN_OR_RETURN(double p, stats::mcnemar_exact(b, c));
    rejections += p < alpha ? 1 : 0;
    flip_sum += static_cast<double>(b + c) / vignettes;
    expect_sum += expect / vignettes;
  }
  out.rejection_rate = static_cast<double>(rejections) / simulations;
  NF_ASSIGN_OR_RETURN(auto w, stats::wilson(rejections, simulations, 0.95));
  out.rejection_low = w.low;
  out.rejection_high = w.high;
  out.mean_flip_rate = flip_sum / simulations;
  out.mean_floor_expectation = expect_sum / simulations;
  return out;
}

}  // namespace nf
