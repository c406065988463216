// The plan a store's recorded study gives its draws, for imports into a store that `run`
// or `audit` wrote (issue 31 item 4): `import draws` of rows the plan does not have would
// be counted against the plan ("147/144" draws in the report's coverage).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/types.h"
#include "store/store.h"
#include "util/status.h"

namespace nf {

/// The draws a study recorded by `run` / `audit` plans: subjects x configs x conditions x
/// items x replicates 0..replicates-1 (runner.h plan_draws; the record is runner.h
/// study_to_json, the items the ones the run stored).
class StoredPlan {
 public:
  /// The plan of the study recorded in `store`, or nullopt when there is none to keep to:
  /// no study record, an imported one (`imported: true`: its draws define the study), or
  /// one without subjects or replicates (a judging-only study). Errors: the store's read
  /// errors.
  static Result<std::optional<StoredPlan>> of(Store& store);

  /// Ok if `key` is a planned draw; otherwise InvalidArgument "WHERE: FIELD: VALUE is not
  /// in the plan of study 'NAME' recorded in store PATH (the plan has ...)" naming the
  /// first field out of the plan (subject, config, condition, item, replicate), what the
  /// plan has there, and what to do. `where` is "file:line" (or a row's description).
  Status check(const DrawKey& key, const std::string& where) const;

  /// Whether `key` is a planned draw (check() is Ok). For the per-row test of an import:
  /// the caller formats `where` for check() only when this is false.
  bool planned(const DrawKey& key) const {
    return subject_set_.count(key.subject) != 0 && config_set_.count(key.config) != 0 &&
           condition_set_.count(key.condition) != 0 && items_.count(key.item) != 0 && key.replicate >= 0 &&
           key.replicate < replicates_;
  }

  /// Number of planned draws.
  int64_t size() const;

 private:
  std::string study_, store_;
  std::vector<std::string> subjects_, configs_, conditions_;  // in the record's order
  std::unordered_set<std::string> subject_set_, config_set_, condition_set_, items_;
  int replicates_ = 0;
};

}  // namespace nf
