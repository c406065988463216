#include "metrics/rerun.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "stats/bootstrap.h"
#include "stats/multiplicity.h"
#include "stats/paired.h"
#include "stats/proportion.h"
#include "store/store.h"

namespace nf {

namespace {

nlohmann::json normalized(const nlohmann::json& j) {
  if (j.is_object()) {
    nlohmann::json o = nlohmann::json::object();
    for (const auto& [k, v] : j.items()) o[k] = normalized(v);
    return o;
  }
  if (j.is_array()) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& v : j) a.push_back(normalized(v));
    return a;
  }
  if (j.is_number()) return j.get<double>();
  return j;
}

std::string order_key(const RerunOrder& o) { return o.endpoint + "\n" + canonical_json(o.payload); }

std::set<std::string> order_set(const RerunRun& r) {
  std::set<std::string> s;
  for (const auto& o : r.orders) s.insert(order_key(o));
  return s;
}

template <typename T>
size_t distinct(const std::vector<T>& v) {
  return std::set<T>(v.begin(), v.end()).size();
}

const char* kMetrics[] = {"order_set_divergence", "omission_split", "endpoint_divergence",
                          "trajectory_divergence", "verdict_instability", "clinical_content_divergence"};

bool indicator(const RerunGroup& g, int m) {
  switch (m) {
    case 0: return g.order_set_divergent;
    case 1: return g.omission_split;
    case 2: return g.endpoint_divergent;
    case 3: return g.trajectory_divergent;
    case 4: return g.verdict_unstable;
    default: return g.clinical_divergent;
  }
}
bool action_level(int m) { return m == 0 || m == 1 || m == 2 || m == 5; }

nlohmann::json wilson_json(int64_t x, int64_t n, double level) {
  nlohmann::json j = {{"count", x}, {"n", n}};
  if (n == 0) {
    j["rate"] = nullptr;
    j["low"] = nullptr;
    j["high"] = nullptr;
    return j;
  }
  auto w = stats::wilson(x, n, level);
  j["rate"] = static_cast<double>(x) / static_cast<double>(n);
  j["low"] = w.ok() ? nlohmann::json(w->low) : nlohmann::json(nullptr);
  j["high"] = w.ok() ? nlohmann::json(w->high) : nlohmann::json(nullptr);
  return j;
}

// Cluster bootstrap of sum(num)/sum(den) over clusters, with the warnings the project
// requires (few clusters; every resample equal).
nlohmann::json cluster_ci(const std::vector<double>& num, const std::vector<double>& den, const BootstrapOptions& b,
                          const char* unit) {
  nlohmann::json j = {{"clusters", num.size()}, {"unit", unit}};
  double dsum = 0;
  for (double d : den) dsum += d;
  if (num.empty() || dsum == 0) {
    j["low"] = nullptr;
    j["high"] = nullptr;
    j["note"] = "no eligible groups";
    return j;
  }
  auto stat = [&](const std::vector<size_t>& idx) { return stats::ratio_of_sums(num, den, idx); };
  auto r = stats::cluster_bootstrap(num.size(), stat, b.resamples, b.seed, b.level);
  if (!r.ok()) {
    j["low"] = nullptr;
    j["high"] = nullptr;
    j["note"] = r.status().message();
    return j;
  }
  j["low"] = r->low;
  j["high"] = r->high;
  j["seed"] = r->seed;
  j["valid_resamples"] = r->valid_replicates;
  const bool all_equal = !r->replicates.empty() &&
                         std::all_of(r->replicates.begin(), r->replicates.end(),
                                     [&](double v) { return v == r->replicates.front(); });
  if (all_equal) j["degenerate"] = "every resample gave the same value: not a statement of certainty";
  if (std::string(unit) == "family" && num.size() < 5)
    j["warning"] = fmt::format("only {} family cluster{} (< 5): a robustness check, not an inference", num.size(),
                               num.size() == 1 ? "" : "s");
  return j;
}

std::optional<double> median(std::vector<int> v) {
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? static_cast<double>(v[n / 2]) : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

}  // namespace

std::string canonical_json(const nlohmann::json& j) { return normalized(j).dump(); }

std::string clinical_content(const RerunOrder& o) {
  const nlohmann::json& p = o.payload;
  nlohmann::json c = nlohmann::json::object();
  if (!p.is_object()) return canonical_json(p);
  if (p.contains("resourceType")) c["type"] = p["resourceType"];
  auto codings = [](const nlohmann::json& cc) {
    std::vector<std::string> out;
    if (cc.is_object() && cc.contains("coding") && cc["coding"].is_array())
      for (const auto& x : cc["coding"])
        if (x.is_object())
          out.push_back(x.value("system", std::string()) + "|" +
                        (x.contains("code") ? (x["code"].is_string() ? x["code"].get<std::string>() : x["code"].dump()) : ""));
    std::sort(out.begin(), out.end());
    return out;
  };
  if (p.contains("code")) {
    c["codes"] = codings(p["code"]);
    if (p["code"].is_object() && p["code"].contains("text")) c["code_text"] = p["code"]["text"];
  }
  if (p.contains("medicationCodeableConcept")) c["medication"] = codings(p["medicationCodeableConcept"]);
  for (const auto& [k, v] : p.items())
    if (k.rfind("value", 0) == 0) c[k] = v;
  if (p.contains("dosageInstruction") && p["dosageInstruction"].is_array()) {
    nlohmann::json doses = nlohmann::json::array();
    for (const auto& d : p["dosageInstruction"]) {
      if (!d.is_object()) continue;
      nlohmann::json x = nlohmann::json::object();
      if (d.contains("route")) x["route"] = d["route"];
      if (d.contains("doseAndRate") && d["doseAndRate"].is_array())
        for (const auto& dr : d["doseAndRate"]) {
          if (!dr.is_object()) continue;
          for (const char* k : {"doseQuantity", "rateQuantity"})
            if (dr.contains(k)) x[k].push_back(dr[k]);
        }
      doses.push_back(x);
    }
    c["dose"] = doses;
  }
  if (p.contains("subject") && p["subject"].is_object()) c["subject"] = p["subject"].value("reference", std::string());
  return canonical_json(c);
}

RerunGroup rerun_group(const std::vector<RerunRun>& runs) {
  RerunGroup g;
  std::vector<std::set<std::string>> sets;
  std::vector<std::set<std::string>> endpoints, content;
  std::vector<int> passes;
  size_t emitting = 0;
  for (const auto& r : runs) {
    sets.push_back(order_set(r));
    passes.push_back(r.pass ? 1 : 0);
    g.orders += static_cast<int>(r.orders.size());
    for (const auto& o : r.orders) g.rejected += o.rejected.value_or(false) ? 1 : 0;
    if (!r.orders.empty()) {
      ++emitting;
      std::set<std::string> e, c;
      for (const auto& o : r.orders) {
        e.insert(o.endpoint);
        c.insert(clinical_content(o));
      }
      endpoints.push_back(e);
      content.push_back(c);
    }
  }
  g.ordering = emitting > 0;
  g.all_pass = std::all_of(passes.begin(), passes.end(), [](int p) { return p == 1; });
  g.all_fail = std::all_of(passes.begin(), passes.end(), [](int p) { return p == 0; });
  g.verdict_unstable = !g.all_pass && !g.all_fail;
  if (g.ordering) {
    g.order_set_divergent = distinct(sets) > 1;
    g.omission_split = emitting < runs.size();
    g.endpoint_divergent = distinct(endpoints) > 1;
    g.clinical_divergent = distinct(content) > 1;
    for (size_t i = 0; i < sets.size(); ++i)
      for (size_t j = i + 1; j < sets.size(); ++j) {
        ++g.pairs;
        g.pairs_differing += sets[i] != sets[j] ? 1 : 0;
      }
  }
  size_t longest = 0;
  for (const auto& r : runs) longest = std::max(longest, r.actions.size());
  for (size_t t = 0; t < longest && !g.first_divergent_turn; ++t) {
    std::set<std::string> at;
    for (const auto& r : runs) at.insert(t < r.actions.size() ? r.actions[t] : "<end>");
    if (at.size() > 1) g.first_divergent_turn = static_cast<int>(t);
  }
  g.trajectory_divergent = g.first_divergent_turn.has_value();
  return g;
}

Result<RerunOptions> rerun_options_from_json(const nlohmann::json& j, const BootstrapOptions& bootstrap) {
  RerunOptions o;
  o.bootstrap = bootstrap;
  if (j.is_null() || (j.is_object() && j.empty())) return o;
  if (!j.is_object()) return InvalidArgument("rerun: options must be a map");
  for (const auto& [k, v] : j.items()) {
    if (k != "arms") return InvalidArgument(fmt::format("rerun: unknown option '{}' (known: arms)", k));
    if (!v.is_array()) return InvalidArgument("rerun.arms: expected a list of [\"subject|config\", \"subject|config\"] pairs");
    for (const auto& p : v) {
      if (!p.is_array() || p.size() != 2 || !p[0].is_string() || !p[1].is_string())
        return InvalidArgument("rerun.arms: expected a list of [\"subject|config\", \"subject|config\"] pairs");
      o.pairs.emplace_back(p[0].get<std::string>(), p[1].get<std::string>());
    }
  }
  return o;
}

Result<nlohmann::json> rerun_analysis(const std::vector<RerunRun>& runs,
                                      const std::map<std::string, RerunExcluded>& excluded, const RerunOptions& options) {
  const BootstrapOptions& b = options.bootstrap;
  // arm -> item -> runs (arms in first-seen order of subject, then config).
  std::vector<std::string> arm_order;
  std::map<std::string, std::map<std::string, std::vector<RerunRun>>> by_arm;
  std::map<std::string, std::string> family_of;
  for (const auto& r : runs) {
    const std::string arm = r.subject + "|" + r.config;
    if (!by_arm.count(arm)) arm_order.push_back(arm);
    by_arm[arm][r.item].push_back(r);
    family_of[r.item] = r.family;
  }
  for (const auto& [arm, ex] : excluded)
    if (!by_arm.count(arm)) arm_order.push_back(arm);
  nlohmann::json out;
  out["method"] =
      "per arm (subject x config) over task groups of R ok runs: order-set divergence, omission split, endpoint "
      "divergence and clinical-content divergence over ordering groups (>= 1 order in any run); trajectory divergence "
      "(query parameters sorted; first divergent turn) and verdict instability over all groups; pairwise order-set "
      "disagreement over within-group run pairs; Wilson intervals; family-cluster bootstrap; paired exact McNemar "
      "between arms over all groups with Holm across the comparisons";
  out["source"] = "seed 002 §4, Table 1, App. A, App. B";
  out["bootstrap"] = {{"resamples", b.resamples}, {"seed", b.seed}, {"level", b.level}, {"method", "percentile, cluster"}};
  out["arms"] = nlohmann::json::array();
  out["warnings"] = nlohmann::json::array();
  std::map<std::string, std::map<std::string, RerunGroup>> groups;  // arm -> item -> group
  for (const auto& arm : arm_order) {
    const size_t bar = arm.find('|');
    nlohmann::json a = {{"subject", arm.substr(0, bar)}, {"config", arm.substr(bar + 1)}};
    auto ex = excluded.count(arm) ? excluded.at(arm) : RerunExcluded{};
    a["excluded_runs"] = {{"parse_error", ex.parse_error}, {"api_error", ex.api_error}};
    int64_t n_runs = 0, too_few = 0;
    int min_r = 0, max_r = 0;
    std::vector<std::string> items;
    for (const auto& [item, rs] : by_arm[arm]) {
      if (rs.size() < 2) {
        ++too_few;
        continue;
      }
      groups[arm][item] = rerun_group(rs);
      items.push_back(item);
      n_runs += static_cast<int64_t>(rs.size());
      const int r = static_cast<int>(rs.size());
      min_r = min_r == 0 ? r : std::min(min_r, r);
      max_r = std::max(max_r, r);
    }
    const auto& gs = groups[arm];
    a["groups"] = gs.size();
    a["runs"] = n_runs;
    a["runs_per_group"] = {{"min", min_r}, {"max", max_r}};
    a["groups_with_fewer_than_2_runs"] = too_few;
    int64_t ordering = 0;
    for (const auto& [i, g] : gs) ordering += g.ordering;
    a["ordering_groups"] = ordering;
    // Families (clusters), in sorted order.
    std::vector<std::string> fams;
    for (const auto& i : items) fams.push_back(family_of[i]);
    std::sort(fams.begin(), fams.end());
    fams.erase(std::unique(fams.begin(), fams.end()), fams.end());
    nlohmann::json metrics = nlohmann::json::object();
    for (int m = 0; m < 6; ++m) {
      int64_t x = 0, n = 0;
      std::vector<double> num(fams.size(), 0.0), den(fams.size(), 0.0);
      for (const auto& [item, g] : gs) {
        if (action_level(m) && !g.ordering) continue;
        const size_t f = static_cast<size_t>(std::lower_bound(fams.begin(), fams.end(), family_of[item]) - fams.begin());
        ++n;
        den[f] += 1;
        if (indicator(g, m)) {
          ++x;
          num[f] += 1;
        }
      }
      nlohmann::json j = wilson_json(x, n, b.level);
      j["denominator"] = action_level(m) ? "ordering groups" : "all groups";
      j["family_bootstrap"] = cluster_ci(num, den, b, "family");
      metrics[kMetrics[m]] = j;
    }
    std::vector<int> first;
    for (const auto& [i, g] : gs)
      if (g.first_divergent_turn) first.push_back(*g.first_divergent_turn);
    const auto med = median(first);
    metrics["trajectory_divergence"]["first_divergent_turn_median"] = med ? nlohmann::json(*med) : nlohmann::json(nullptr);
    {
      int64_t pairs = 0, differing = 0;
      std::vector<double> num, den;
      for (const auto& [i, g] : gs) {
        if (!g.ordering) continue;
        pairs += g.pairs;
        differing += g.pairs_differing;
        num.push_back(g.pairs_differing);
        den.push_back(g.pairs);
      }
      nlohmann::json j = {{"pairs_differing", differing}, {"pairs", pairs},
                          {"rate", pairs ? nlohmann::json(static_cast<double>(differing) / pairs) : nlohmann::json(nullptr)},
                          {"denominator", "within-group run pairs of ordering groups"}};
      j["group_bootstrap"] = cluster_ci(num, den, b, "group");
      metrics["pairwise_order_set_disagreement"] = j;
    }
    a["metrics"] = metrics;
    int64_t div = 0, with_om = 0, with_mis = 0, both = 0, payload_only = 0, stable = 0, stable_pass = 0, stable_fail = 0;
    int64_t orders = 0, rejected = 0, groups_rejected = 0;
    for (const auto& [i, g] : gs) {
      orders += g.orders;
      rejected += g.rejected;
      groups_rejected += g.rejected > 0;
      if (!g.order_set_divergent) continue;
      ++div;
      with_om += g.omission_split;
      with_mis += g.endpoint_divergent;
      both += g.omission_split && g.endpoint_divergent;
      payload_only += !g.omission_split && !g.endpoint_divergent;
      if (!g.verdict_unstable) {
        ++stable;
        stable_pass += g.all_pass;
        stable_fail += g.all_fail;
      }
    }
    a["decomposition"] = {{"order_set_divergent", div}, {"with_omission", with_om}, {"with_misrouting", with_mis},
                          {"omission_and_misrouting", both}, {"payload_only", payload_only}};
    a["changing_orders_stable_verdict"] = {{"count", stable}, {"of_divergent", div}, {"all_pass", stable_pass},
                                           {"all_fail", stable_fail}};
    nlohmann::json rw = wilson_json(rejected, orders, b.level);
    rw["groups_with_a_rejected_write"] = groups_rejected;
    rw["denominator"] = "orders issued (JSON bodies)";
    a["rejected_writes"] = rw;
    nlohmann::json fam_rows = nlohmann::json::array();
    for (const auto& f : fams) {
      int64_t ng = 0, og = 0, dv = 0, passes = 0, nr = 0;
      for (const auto& [item, g] : gs) {
        if (family_of[item] != f) continue;
        ++ng;
        og += g.ordering;
        dv += g.order_set_divergent;
        for (const auto& r : by_arm[arm][item]) {
          ++nr;
          passes += r.pass;
        }
      }
      fam_rows.push_back({{"family", f}, {"groups", ng}, {"ordering_groups", og}, {"order_set_divergent", dv},
                          {"pass_rate", nr ? nlohmann::json(static_cast<double>(passes) / nr) : nlohmann::json(nullptr)}});
    }
    a["families"] = fam_rows;
    if (fams.size() < 5 && !fams.empty())
      out["warnings"].push_back(fmt::format("arm {}: {} family cluster{}; the family-cluster bootstrap is a robustness "
                                            "check only",
                                            arm, fams.size(), fams.size() == 1 ? "" : "s"));
    out["arms"].push_back(a);
  }
  // Paired comparisons.
  std::vector<std::pair<std::string, std::string>> pairs = options.pairs;
  const bool chosen = !pairs.empty();
  if (!chosen) {
    std::map<std::string, std::vector<std::string>> by_subject;
    std::vector<std::string> subjects;
    for (const auto& arm : arm_order) {
      const std::string s = arm.substr(0, arm.find('|'));
      if (!by_subject.count(s)) subjects.push_back(s);
      by_subject[s].push_back(arm);
    }
    for (const auto& s : subjects)
      for (size_t i = 0; i < by_subject[s].size(); ++i)
        for (size_t j = i + 1; j < by_subject[s].size(); ++j) pairs.emplace_back(by_subject[s][i], by_subject[s][j]);
  }
  nlohmann::json comps = nlohmann::json::array();
  std::vector<double> ps;
  for (const auto& [A, B] : pairs) {
    for (const auto& arm : {A, B}) {
      if (groups.count(arm) && !groups[arm].empty()) continue;
      if (chosen) return InvalidArgument(fmt::format("rerun.arms: arm '{}' has no groups", arm));
    }
    if (!chosen && (groups[A].empty() || groups[B].empty())) {
      out["warnings"].push_back(fmt::format("{} vs {}: not compared, an arm has no group with 2 ok runs", A, B));
      continue;
    }
    for (int m = 0; m < 6; ++m) {
      int64_t bb = 0, cc = 0, n = 0, both = 0, neither = 0;
      for (const auto& [item, ga] : groups[A]) {
        auto it = groups[B].find(item);
        if (it == groups[B].end()) continue;
        ++n;
        const bool xa = indicator(ga, m), xb = indicator(it->second, m);
        bb += xa && !xb;
        cc += !xa && xb;
        both += xa && xb;
        neither += !xa && !xb;
      }
      auto p = stats::mcnemar_exact(bb, cc);
      const double pv = p.ok() ? *p : 1.0;
      ps.push_back(pv);
      comps.push_back({{"arm_a", A}, {"arm_b", B}, {"metric", kMetrics[m]}, {"groups", n}, {"b", bb}, {"c", cc},
                       {"both", both}, {"neither", neither}, {"p", pv},
                       {"note", "b = divergent in arm_a only, c = in arm_b only; exact two-sided McNemar"}});
    }
  }
  if (!ps.empty()) {
    NF_ASSIGN_OR_RETURN(auto adj, stats::holm(ps));
    for (size_t i = 0; i < comps.size(); ++i) comps[i]["p_holm"] = adj[i];
  }
  out["comparisons"] = comps;
  return out;
}

}  // namespace nf

namespace nf {

RerunRun rerun_run_from_detail(const nlohmann::json& detail) {
  RerunRun run;
  run.family = detail.value("family", std::string());
  if (auto v = detail.find("verdict"); v != detail.end() && v->is_object()) run.pass = v->value("pass", false);
  for (const auto& o : detail.value("orders", nlohmann::json::array())) {
    RerunOrder ro{o.value("endpoint", std::string()), o.value("payload", nlohmann::json(nullptr)), std::nullopt};
    if (o.contains("rejected") && o["rejected"].is_boolean()) ro.rejected = o["rejected"].get<bool>();
    run.orders.push_back(std::move(ro));
  }
  for (const auto& s : detail.value("trajectory", nlohmann::json::array())) {
    const nlohmann::json a = s.value("action", nlohmann::json::object());
    const std::string m = a.value("method", std::string("?"));
    if (m == "GET") run.actions.push_back("GET " + a.value("url", std::string()));
    else if (m == "POST")
      run.actions.push_back("POST " + a.value("url", std::string()) + " " + canonical_json(a.value("body", nlohmann::json(nullptr))));
    else if (m == "FINISH")
      run.actions.push_back("FINISH " + canonical_json(a.value("answer", nlohmann::json(nullptr))) + " " +
                            a.value("answer_text", std::string()));
    else run.actions.push_back(m);
  }
  return run;
}

Result<std::pair<std::vector<RerunRun>, std::map<std::string, RerunExcluded>>> read_rerun_runs(Store& store,
                                                                                                 bool include_cached) {
  std::vector<RerunRun> runs;
  std::map<std::string, RerunExcluded> excluded;
  // The failed draws of a fhir_agent study are its arms' excluded runs; another store's
  // (an MCQ study's parse errors) are not FHIR agent runs.
  auto study = store.get_study();
  const bool fhir_study = study.ok() && study->spec.is_object() && study->spec.value("task", "") == "fhir_agent";
  NF_ASSIGN_OR_RETURN(auto counts, store.status_counts());
  for (const auto& c : counts) {
    auto& e = excluded[c.subject + "|" + c.config];
    if (c.status == "parse_error") e.parse_error += c.count;
    if (c.status == "api_error") e.api_error += c.count;
  }
  NF_ASSIGN_OR_RETURN(auto rows, store.outcome_rows(include_cached));
  for (const auto& r : rows) {
    if (r.outcome != "pass") continue;
    NF_ASSIGN_OR_RETURN(Draw d, store.get_draw(DrawKey{r.subject, r.item, r.condition, r.config, r.replicate}));
    const nlohmann::json detail = d.extra.value("condition", nlohmann::json::object());
    // Only a FHIR agent's run (task/fhir_agent_task.cc: a trajectory and its orders): a
    // `pass` outcome of another task or an import has no orders to compare, and would
    // make a table of zeros.
    if (!detail.is_object() || !detail.contains("trajectory") || !detail["trajectory"].is_array() ||
        !detail.contains("orders") || !detail["orders"].is_array())
      continue;
    RerunRun run = rerun_run_from_detail(detail);
    run.subject = r.subject;
    run.config = r.config;
    run.item = r.item;
    if (run.family.empty()) run.family = r.cluster;
    run.replicate = r.replicate;
    run.pass = r.value == 1.0;
    runs.push_back(std::move(run));
  }
  if (!fhir_study) {
    std::set<std::string> arms;
    for (const auto& r : runs) arms.insert(r.subject + "|" + r.config);
    std::erase_if(excluded, [&](const auto& e) { return !arms.count(e.first); });
  }
  return std::make_pair(std::move(runs), std::move(excluded));
}

}  // namespace nf
