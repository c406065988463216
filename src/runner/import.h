// Imports published per-draw data into a store (`noisefloor import draws FILE`).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/draws_import.h"
#include "store/store.h"
#include "util/status.h"

namespace nf {

struct ImportSummary {
  int64_t rows = 0;
  int64_t draws = 0;
  int64_t items = 0;
};

/// Groups long-format rows by draw key into ok draws with their outcomes, records the
/// items (with their clusters) and a study record named `study_name` (if the store has
/// none), and writes all draws in one transaction. Errors: AlreadyExists if a draw is
/// already in the store (importing the same file twice is refused, not duplicated);
/// InvalidArgument if one item is given two different clusters.
Result<ImportSummary> import_long_draws(const std::vector<LongDrawRow>& rows, Store& store,
                                        const std::string& study_name);

}  // namespace nf
