#pragma once
// Exports of a store's judge votes and human labels, in the formats `import votes` and
// `import labels` read back (docs/store.md "Export").

#include <ostream>

#include "store/store.h"
#include "util/status.h"

namespace nf {

/// Writes every row of the `judgments` table, one vote per line, ordered by subject, item,
/// judge and judged draw.
///
/// CSV columns: subject,subject_provider,item,cluster,judge,judge_provider,label,status,
/// condition,config,replicate,draw_id. The first seven are the `import votes` format, so
/// votes that were imported (no judged draw) round-trip through `import votes`; `label` is
/// 1 / 0, empty for a row that is not a vote (status parse_error or api_error, which
/// `import votes` reads back as a missing vote). Votes that `noisefloor judge` wrote carry
/// the judged draw's key (condition, config, replicate) and its `draw_id`; several draws of
/// one item give several votes per (subject, item, judge), which `import votes` refuses (it
/// keys votes without draws) — they are for pandas / R.
/// JSONL: the same fields (label null when empty; draw_id and the key fields null for
/// imports) plus `raw_response`, `settings` and `created_at`.
///
/// Returns the number of rows written via `rows` (may be nullptr). Errors: the store's read
/// errors; DataLoss on a write failure.
Status export_judgments(Store& store, bool csv, std::ostream& out, size_t* rows = nullptr);

/// Writes every human label (`human_labels` table) as rater,subject,item,label (CSV) or one
/// object per line (JSONL): the `import labels` format. Returns the rows written via `rows`.
/// Errors as export_judgments.
Status export_human_labels(Store& store, bool csv, std::ostream& out, size_t* rows = nullptr);

}  // namespace nf
