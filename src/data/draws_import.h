// Published per-draw data in long format -> rows the store can take
// (`noisefloor import draws FILE`).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "util/status.h"

namespace nf {

/// One row of the long format: a single outcome of a single draw.
struct LongDrawRow {
  std::string subject, item, cluster, condition, config;
  int replicate = 0;
  std::string outcome;
  double value = 0.0;
  std::string label;  // the value as written, when it is not numeric (e.g. "B")
};

/// Reads a CSV (header row required; columns in any order; RFC 4180 quoting) or JSONL
/// (one object per line) file with columns
///   subject,item,cluster,condition,config,replicate,outcome,value
/// Format chosen by extension (.csv, .jsonl/.json) . `cluster` may be empty (defaults to
/// item). `value` is a number, or true/false (-> 1/0); other strings are mapped to a
/// stable category index per outcome (first seen = 0) with `label` kept. Optional columns
/// as `noisefloor export` writes them: `label` (kept with a numeric value, so an export ->
/// import round trip keeps "B") and `status` (must be "ok" or empty: only ok draws carry
/// outcomes; other columns are ignored). A JSONL line with an "outcomes" array (and no
/// "outcome" key) is one draw as `noisefloor export --format jsonl` writes it; its
/// outcomes are expanded into rows, so both export formats import back.
/// Errors (InvalidArgument "path:line: column: problem"): missing column, empty
/// subject/item/outcome, non-integer or negative replicate, a status other than ok,
/// duplicate (subject,item,condition,config,replicate,outcome).
Result<std::vector<LongDrawRow>> read_long_draws(const std::string& path);

/// The streaming form of read_long_draws, for files of any size: reads `path` in 1 MiB
/// blocks and calls `fn(row, line)` for each row in file order (`line` is the 1-based
/// line on which the row starts). The row object is reused between calls (copy what you
/// keep). Memory is bounded by the longest record plus the per-outcome category maps,
/// whatever the file size. Same format and the same errors as read_long_draws, except
/// that duplicates are NOT detected here (the caller's store detects them; see
/// find_long_draw_line for naming the first occurrence). An error returned by `fn` stops
/// the scan and is returned as is.
Status for_each_long_draw(const std::string& path,
                          const std::function<Status(const LongDrawRow& row, size_t line)>& fn);

/// The line of the first row of `path` with this (subject, item, condition, config,
/// replicate, outcome), or 0 if none (for "duplicate row ... (first on line N)" errors
/// of a streaming import; rescans the file).
size_t find_long_draw_line(const std::string& path, const LongDrawRow& key);

}  // namespace nf
