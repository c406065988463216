// Runs the requested analyses over a store and returns results.json (docs/results.md).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "metrics/floor.h"
#include "spec/study.h"
#include "store/store.h"
#include "util/status.h"

namespace nf {

struct AnalyzeOptions {
  /// Analyses to run; empty = the study's analyses recorded in the store, or else the
  /// defaults: floor, majority_floor {vote_sizes: [3]}, mcq_robustness (when the store
  /// has MCQ conditions); none of these for a chat study (its draws have no outcomes).
  /// judge_panel / human_validity are added whenever the store holds their data.
  std::vector<AnalysisSpec> analyses;
  BootstrapOptions bootstrap;
  /// true: use the bootstrap settings of the study recorded in the store (resamples,
  /// seed, level), when it has them, instead of `bootstrap` (`analyze` without
  /// --resamples/--bootstrap-seed/--level gives the numbers `audit` gave).
  bool bootstrap_from_study = false;
  bool include_cached = false;  // leave cached draws out of stability statistics by default
  std::string tool_version = "0.0.0";
};

/// Checks `analyze --vote-sizes` (`flag_sizes`) against the study recorded in the store:
/// InvalidArgument "--vote-sizes 5 and the study's majority_floor {"vote_sizes": [3]}
/// (analyses of study NAME) disagree: ..." when the study lists majority_floor with its own
/// vote_sizes and they differ from `flag_sizes` (as sets, order aside), so a report never
/// silently uses other vote sizes than the study file declares; Ok when they agree, the
/// study does not name vote sizes, or `flag_sizes` is empty.
Status check_vote_sizes_flag(const StudyRecord& study, const std::vector<int>& flag_sizes);

/// Reads the store and computes every requested analysis. The returned JSON has
/// `schema` ("noisefloor.results/1"), `tool_version`, `study`, `store`, `draws` (counts by
/// status per cell, with parse and API-error rates) and `analyses.<name>` objects, each
/// with `method`, `source` and `rows`, or `skipped` with the reason when the store holds
/// nothing the analysis reads (metrics/registry.h run_analysis). Deterministic for a given store and options (no
/// timestamps), so results can be compared byte for byte.
/// Errors: InvalidArgument for an unknown analysis or a bad option (naming it).
Result<nlohmann::json> analyze_store(Store& store, const AnalyzeOptions& options);

}  // namespace nf
