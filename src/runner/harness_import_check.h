// Before `noisefloor import inspect | lm-eval` writes: is a log's cell already in the store?
#pragma once

#include <vector>

#include "data/harness_log.h"
#include "store/store.h"
#include "util/status.h"

namespace nf {

/// Refuses (AlreadyExists, nothing written) a harness import into a store that already
/// holds draws of one of the logs' cells (subject, condition, config), with a message
/// that says which: "STORE already holds this run (RUN) of (S, T, K), imported from
/// FILE before" when a stored draw of the cell carries the log's run_id (draw
/// extra.run; a store written before run ids were kept is matched by the log's file
/// name in extra.log / extra.file), else "STORE already holds N draws of (S, T, K) from
/// another run (FILE)" with what to do: import every run of a cell in one command, into
/// a new store (the import numbers a cell's replicates across the logs of one command;
/// it does not continue a stored cell's). The stored runs are looked up through at
/// most 1,000 draws of the log's first sample. Errors: the store's read errors. OK when
/// no cell of `logs` is stored.
Status check_cells_not_stored(const std::vector<HarnessLog>& logs, Store& store);

}  // namespace nf
