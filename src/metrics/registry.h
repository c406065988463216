// The analysis registry (DESIGN.md "Extension points"): every analysis registers once as
// name -> runner, so `analyze --analysis NAME=OPTIONS` can run it on any store and
// analyze_store never branches on an analysis name.
//
// Adding an analysis: write `Result<nlohmann::json> run_x(AnalysisContext&, const json&)`
// (beside its computation, e.g. metrics/x.cc) and add one line to the table in
// metrics/registry.cc. The spec layer keeps the names a study file may list
// (spec/study.h known_analyses(); a test pins that every such name is registered).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "metrics/floor.h"
#include "metrics/floor_frame.h"
#include "store/store.h"
#include "util/status.h"

namespace nf {

/// What an analysis may read: the store, the bootstrap settings and the study recorded in
/// the store (absent for an imported store: check `has_study`). `rows()` gives the store's
/// ok outcome rows (cached draws left out unless `include_cached`), read on first use, so
/// analyses that stream the store (floor, majority_floor: metrics/floor_frame.h) never
/// materialise them (issue 14).
struct AnalysisContext {
  AnalysisContext(Store& s, const BootstrapOptions& b) : store(s), bootstrap(b) {}
  Store& store;
  const BootstrapOptions& bootstrap;
  bool has_study = false;
  StudyRecord study;
  bool include_cached = false;

  /// The ok outcomes aggregated for the floors (metrics/floor_frame.h), read once and
  /// shared by floor and majority_floor. Errors: the store's read error.
  Result<const FloorInput*> floor_input() {
    if (!floor_input_) {
      NF_ASSIGN_OR_RETURN(auto in, read_floor_input(store, include_cached));
      floor_input_ = std::move(in);
    }
    return &*floor_input_;
  }

  /// The outcome rows, loaded once. Errors: the store's read error.
  Result<const std::vector<OutcomeRow>*> rows() {
    if (!rows_) {
      NF_ASSIGN_OR_RETURN(auto r, store.outcome_rows(include_cached));
      rows_ = std::move(r);
    }
    return &*rows_;
  }

 private:
  std::optional<std::vector<OutcomeRow>> rows_;
  std::optional<FloorInput> floor_input_;
};

/// One registered analysis. `run` returns its results.json section (an object with at
/// least `method` and `source`, or `skipped` with the reason); it returns InvalidArgument
/// naming `NAME.option` for a bad option. `summary` is one line for `analyze --help`.
struct AnalysisEntry {
  std::string name;
  std::string summary;
  std::function<Result<nlohmann::json>(AnalysisContext&, const nlohmann::json& options)> run;
};

/// Every registered analysis, in the order results.json and the report list them.
const std::vector<AnalysisEntry>& analysis_registry();

/// The entry named `name`, or nullptr.
const AnalysisEntry* find_analysis(const std::string& name);

/// Names of every registered analysis (registry order).
std::vector<std::string> analysis_names();

}  // namespace nf
