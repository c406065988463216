// Imports published per-draw data into a store (`noisefloor import draws FILE`).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "data/draws_import.h"
#include "data/harness_log.h"
#include "store/store.h"
#include "util/status.h"

namespace nf {

struct ImportSummary {
  int64_t rows = 0;
  int64_t draws = 0;
  int64_t items = 0;
  /// The draws written by status (index: DrawStatus as an integer: ok, parse_error,
  /// api_error, refused); they sum to `draws`.
  std::array<int64_t, 4> by_status{};
  std::vector<std::string> warnings;  // the reader's value warnings (data/draws_import.h), for stderr
};

/// "ok 9, parse_error 39": the nonzero counts of `by_status` (ImportSummary), in the
/// order ok, parse_error, refused, api_error; "" when all are zero.
std::string status_counts_text(const std::array<int64_t, 4>& by_status);

/// Groups long-format rows by draw key into draws (ok ones with their outcomes, the
/// others, one row each, with their status and none), records the
/// items (with their clusters) and a study record named `study_name` (if the store has
/// none), and writes all draws in one transaction. Errors: AlreadyExists if a draw is
/// already in the store (importing the same file twice is refused, not duplicated);
/// InvalidArgument if one item is given two different clusters.
Result<ImportSummary> import_long_draws(const std::vector<LongDrawRow>& rows, Store& store,
                                        const std::string& study_name);

/// The streaming form of import_long_draws for `noisefloor import draws FILE`: reads the
/// long CSV/JSONL at `path` row by row (data/draws_import.h for_each_long_draw) straight
/// into the store's prepared statements in one transaction (Store::BulkImport), so
/// memory is bounded by the number of items (their clusters) and the longest record,
/// never by the number of rows (issue 14). The file is parsed on a second thread, in
/// blocks of 2,048 rows (at most 4 blocks at a time), while this thread writes the store;
/// errors still come in file order. Writes the same store as read_long_draws +
/// import_long_draws. Errors: every error of read_long_draws ("path:line: column:
/// problem", duplicates naming both lines), AlreadyExists as import_long_draws,
/// InvalidArgument "path:line: cluster: ..." if one item is given two clusters; the value
/// checks of read_long_draws under `checks` (non-finite values, an outcome mixing numbers
/// and labels, a declared binary outcome with another value), whose warnings go to
/// `warnings` of the summary. On error nothing is written but the study record (if the
/// store had none): the transaction commits only after the whole file passed.
Result<ImportSummary> import_long_draws_file(const std::string& path, Store& store, const std::string& study_name,
                                             const LongDrawChecks& checks = {});

/// What `import inspect | lm-eval` wrote, and the notes it has for the user.
struct HarnessImportSummary {
  int64_t logs = 0, draws = 0, api_errors = 0, items = 0, subjects = 0;
  std::vector<std::string> notes;  // e.g. "a second run of (m, task, config): replicates 5..9"
};

/// Writes the draws of harness logs (data/harness_log.h) into `store` through the same
/// path as import_long_draws: items with their clusters, subjects and configs with their
/// specs, and a study record (when the store has none) named `study_name` with
/// `source` and the analyses `analyses` (so `analyze` runs them by default). Logs that
/// hold the same (subject, condition, config) are runs of one cell: the replicates of
/// each later log are offset past the earlier ones (in the order given), and a note says
/// so. All draws go in one transaction. Errors: AlreadyExists if a draw is already in
/// the store (re-importing a log is refused, not duplicated); InvalidArgument if one item
/// is given two clusters, or one log holds the same draw key twice (naming the log).
Result<HarnessImportSummary> import_harness_logs(const std::vector<HarnessLog>& logs, Store& store,
                                                 const std::string& study_name, const std::string& source,
                                                 const std::vector<std::string>& analyses);

}  // namespace nf
