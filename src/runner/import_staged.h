// `noisefloor import draws` into a store that imports through Store::StagedImport (the
// PostgreSQL store; issue 14): the driver beside import_long_draws_file's BulkImport one.
#pragma once

#include <string>

#include "data/draws_import.h"
#include "runner/import.h"
#include "store/store.h"
#include "util/status.h"

namespace nf {

/// import_long_draws_file through store.begin_staged_import(): the file is parsed by
/// for_each_long_draw (same format, value checks and warnings), each row streamed to the
/// store with its line; the store checks the rows at the end and writes them in one
/// transaction. Same results and the same errors, in the same order of precedence, as
/// import_long_draws_file on a SQLite store: the first problem in file order wins among
/// a parse or value error, an item given two clusters ("path:line: cluster: ..."), a row
/// repeating an earlier (draw, outcome) ("path:line: outcome: duplicate row for (...)
/// (first on line N)"), and a draw stored before with a status other than api_error
/// (AlreadyExists, as put_draw words it); a stored api_error draw is replaced. On error
/// nothing is written but the study record (if the store had none). Memory: the item ->
/// cluster map and the reader's per-outcome state, never the rows.
Result<ImportSummary> import_long_draws_staged(const std::string& path, Store& store, const std::string& study_name,
                                               const LongDrawChecks& checks);

}  // namespace nf
