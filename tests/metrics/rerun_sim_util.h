// Shared by rerun_test.cc and rerun_recovery_slow_test.cc: sim FHIR-agent runs over the
// 80 write tasks of MedAgentBench and the exact truth of the rerun metrics for R runs.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <vector>

#include "common/test_data.h"
#include "metrics/rerun.h"
#include "runner/runner.h"
#include "sim/sim.h"

namespace nf::testing {

// ---- sim recovery (seed 002; sim/sim_fhir_agent.h) ----

inline Study fhir_study() {
  Study st;
  st.task = "fhir_agent";
  st.dataset.format = "medagentbench";
  st.dataset.path = testing::data_dir() + "/medagentbench/test_data_v2.json";
  st.task_options = {{"feedback", "record"}};
  return st;
}

inline std::vector<RerunRun> sim_runs(const Task& task, const nlohmann::json& noise, double temperature, int R,
                               int64_t seed_offset = 0) {
  SimBackend sim(*SimParams::from_json(nlohmann::json::object()));
  std::vector<RerunRun> out;
  for (size_t i = 0; i < task.items().size(); ++i)
    for (int r = 0; r < R; ++r) {
      DrawContext ctx;
      ctx.key = {"sim", task.items()[i].id, "none", "t", r};
      ctx.config.temperature = temperature;
      ctx.model = "sim-fhir";
      ctx.seed = 104729 * (r + 1) + 17 + seed_offset;
      ctx.extra_body["sim_fhir_agent"] = noise;
      auto res = task.run(i, "none", ctx, [&](const ChatRequest& q) { return sim.complete(q); });
      EXPECT_EQ(res.status, DrawStatus::kOk) << res.error;
      RerunRun run = rerun_run_from_detail(res.detail);
      run.subject = "sim";
      run.config = "t";
      run.item = task.items()[i].id;
      run.replicate = r;
      out.push_back(std::move(run));
    }
  return out;
}

// P(indicator | ordering group) for R runs each drawing a category with probs `p`
// (category 0 = no orders), by enumerating all R-tuples.
inline double truth(const std::vector<double>& p, int R, const std::function<bool(const std::vector<int>&)>& ind) {
  double num = 0, den = 0;
  std::vector<int> t(static_cast<size_t>(R), 0);
  const int k = static_cast<int>(p.size());
  for (int64_t code = 0; code < static_cast<int64_t>(std::pow(k, R)); ++code) {
    int64_t c = code;
    double pr = 1;
    bool ordering = false;
    for (int r = 0; r < R; ++r) {
      t[static_cast<size_t>(r)] = static_cast<int>(c % k);
      c /= k;
      pr *= p[static_cast<size_t>(t[static_cast<size_t>(r)])];
      ordering = ordering || t[static_cast<size_t>(r)] != 0;
    }
    if (!ordering) continue;
    den += pr;
    if (ind(t)) num += pr;
  }
  return num / den;
}

// The category probabilities of one run of a task whose correct run posts k orders, under
// the sim's model (sim/sim_fhir_agent.h): category 0 = silent (omission, probability om);
// category 1 + b = an emitting run whose order j goes to the base URL when bit j of b is set
// (each order misrouted independently with probability mis). k = 1: {om, (1-om)(1-mis),
// (1-om) mis}; k = 2: none, (T,T), (B,T), (T,B), (B,B).
inline std::vector<double> run_categories(double om, double mis, int k) {
  std::vector<double> p{om};
  for (int b = 0; b < (1 << k); ++b) {
    double q = 1 - om;
    for (int j = 0; j < k; ++j) q *= ((b >> j) & 1) ? mis : 1 - mis;
    p.push_back(q);
  }
  return p;
}

// The three action-level indicators over one group's run categories (0 = silent), as seed
// 002 §4 defines them and for runs whose payloads do not vary (no payload noise): distinct
// categories are distinct endpoint sets and distinct order sets.
inline bool omission_split_of(const std::vector<int>& t) { return std::count(t.begin(), t.end(), 0) > 0; }
inline bool endpoint_divergent_of(const std::vector<int>& t) {
  std::set<int> s;
  for (int c : t)
    if (c != 0) s.insert(c);
  return s.size() > 1;
}
inline bool order_set_divergent_of(const std::vector<int>& t) { return std::set<int>(t.begin(), t.end()).size() > 1; }

}  // namespace nf::testing
