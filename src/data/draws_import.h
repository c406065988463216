// Published per-draw data in long format -> rows the store can take
// (`noisefloor import draws FILE`).
#pragma once

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

}  // namespace nf
