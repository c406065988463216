// The analysis registry (DESIGN.md "Extension points"): every analysis registers once as
// name -> runner, so `analyze --analysis NAME=OPTIONS` can run it on any store and
// analyze_store never branches on an analysis name.
//
// Adding an analysis: write `Result<nlohmann::json> run_x(AnalysisContext&, const json&)`
// (beside its computation, e.g. metrics/x.cc) and add one line to the table in
// metrics/registry.cc, with the array its results live in and what it needs (said when
// the store holds none of it), and one line to report/markdown.cc report_sections() for
// its report.md section (tests/report/skipped_section_test.cc pins that every registered
// analysis has one). The spec layer keeps the names a study file may list
// (spec/study.h known_analyses(); a test pins that every such name is registered).
#pragma once

#include <algorithm>
#include <functional>
#include <map>
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
  /// The study's task kind's derived outcomes (core/task_kinds.h; empty without a task,
  /// e.g. an imported store): left out of the pooled floor rows (metrics/floor.h).
  DerivedOutcomes derived_outcomes;

  /// The ok outcomes aggregated for the floors (metrics/floor_frame.h), read once and
  /// shared by floor and majority_floor. Errors: the store's read error.
  Result<const FloorInput*> floor_input() {
    if (!floor_input_) {  // (a failed preload_floor_input left it empty: read again)
      NF_ASSIGN_OR_RETURN(auto in, read_floor_input(store, include_cached));
      floor_input_ = std::move(in);
    }
    return &*floor_input_;
  }

  /// Hands floor_input() the aggregation already read with the status counts
  /// (read_status_and_floor_input), so it does not read the store again.
  void preload_floor_input(FloorInput in) { floor_input_ = std::move(in); }

  /// Vote sizes the floors of this run will ask floor_rows for (1 = floor, R' =
  /// majority_floor), planned by analyze_store from the analysis list; the first
  /// floor_rows call computes them all with one batch of bootstrap resamples.
  std::vector<int> planned_vote_sizes;

  /// The floor rows for `vote_size` (compute_floor_frame on floor_input(), identical
  /// values), computed on first use together with every planned vote size not computed yet
  /// (compute_floor_frames: one set of cluster draws for all of them). Errors: the store's
  /// read error, or this vote size's compute_floor_frame error.
  Result<const std::vector<FloorRow>*> floor_rows(int vote_size) {
    auto it = floor_rows_.find(vote_size);
    if (it == floor_rows_.end()) {
      NF_ASSIGN_OR_RETURN(const FloorInput* input, floor_input());
      std::vector<int> sizes{vote_size};
      for (int v : planned_vote_sizes)
        if (floor_rows_.count(v) == 0 && std::find(sizes.begin(), sizes.end(), v) == sizes.end()) sizes.push_back(v);
      auto rows = compute_floor_frames(*input, sizes, bootstrap, derived_outcomes);
      for (size_t k = 0; k < sizes.size(); ++k) floor_rows_.emplace(sizes[k], std::move(rows[k]));
      it = floor_rows_.find(vote_size);
    }
    if (!it->second.ok()) return it->second.status();
    return &*it->second;
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
  std::map<int, Result<std::vector<FloorRow>>> floor_rows_;
};

/// The vote sizes of majority_floor's options ({"vote_sizes": [R', ...]}; default {3}).
/// Errors: InvalidArgument naming majority_floor.vote_sizes.
Result<std::vector<int>> majority_vote_sizes(const nlohmann::json& options);

/// One registered analysis. `run` returns its results.json section (an object with at
/// least `method` and `source`, or `skipped` with the reason); it returns InvalidArgument
/// naming `NAME.option` for a bad option. `summary` is one line for `analyze --help`.
///
/// An analysis that the store's data cannot support says so instead of a heading over an
/// empty table or a table of zeros: `run` may set `skipped` itself (with a reason it alone
/// knows), and run_analysis sets it for every analysis whose `rows_key` array came back
/// empty, with the reason `needs` ("needs ...: what data the analysis reads").
struct AnalysisEntry {
  std::string name;
  std::string summary;
  std::function<Result<nlohmann::json>(AnalysisContext&, const nlohmann::json& options)> run;
  /// The section's array of results ("rows"; rerun: "arms"; envelope: "subjects"): empty
  /// means the store held nothing this analysis reads.
  std::string rows_key = "rows";
  /// What the analysis reads, said when it has nothing to read: "draws under the
  /// conditions none and shuffle, remove_answer or remove_context (an MCQ study)".
  std::string needs;
};

/// Runs `entry` on `ctx` and marks a section with nothing to show as skipped: when `run`
/// did not skip and the section's `entry.rows_key` array is absent or empty, sets
/// `skipped` = "nothing to analyse: the store holds no <entry.needs>" (the other keys are
/// kept). Errors: `run`'s.
Result<nlohmann::json> run_analysis(const AnalysisEntry& entry, AnalysisContext& ctx, const nlohmann::json& options);

/// The `skipped` reason run_analysis gives `entry` when its section has no rows.
std::string nothing_to_analyse(const AnalysisEntry& entry);

/// Every registered analysis, in the order results.json and the report list them.
const std::vector<AnalysisEntry>& analysis_registry();

/// The entry named `name`, or nullptr.
const AnalysisEntry* find_analysis(const std::string& name);

/// Names of every registered analysis (registry order).
std::vector<std::string> analysis_names();

}  // namespace nf
