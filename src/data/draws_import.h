// Published per-draw data in long format -> rows the store can take
// (`noisefloor import draws FILE`).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/types.h"
#include "util/status.h"

namespace nf {

/// One row of the long format: a single outcome of a single draw.
struct LongDrawRow {
  std::string subject, item, cluster, condition, config;
  int replicate = 0;
  std::string outcome;
  double value = 0.0;
  std::string label;  // the value as written, when it is not numeric (e.g. "B")
  /// The draw's status (the `status` column; empty = ok). A row of a draw that is not ok
  /// has no outcome: `outcome` and `label` are empty and `value` 0.
  DrawStatus status = DrawStatus::kOk;
  /// Streaming only (for_each_long_draw): the string fields that differ from the previous
  /// row handed to the same scan's `fn`, as kChanged* bits (all set on the first row), so
  /// a consumer that keeps the previous row's strings copies only these (issue 14: most
  /// keys repeat from row to row). read_long_draws leaves it at its default.
  unsigned changed = kChangedAll;

  static constexpr unsigned kChangedSubject = 1u << 0, kChangedItem = 1u << 1, kChangedCluster = 1u << 2,
                            kChangedCondition = 1u << 3, kChangedConfig = 1u << 4, kChangedOutcome = 1u << 5,
                            kChangedLabel = 1u << 6, kChangedAll = (1u << 7) - 1;
};

/// Checks on the `value` column across rows (beyond each row's own syntax).
struct LongDrawChecks {
  /// Outcomes declared binary (`import draws --binary NAME`): each of their values must
  /// be 0, 1, true or false; any other value is an error at its line, and a declared name
  /// that no row carries is an error too. Default: none declared (see the warning below).
  std::vector<std::string> binary;
};

/// Reads a CSV (header row required; columns in any order; RFC 4180 quoting) or JSONL
/// (one object per line) file with columns
///   required: subject,item,condition,config,replicate,outcome,value
///   optional: cluster (empty or absent = the item), label, status
/// Format chosen by extension (.csv, .jsonl/.json) . `value` is a finite number, or
/// true/false (-> 1/0); other strings are category labels, mapped to a stable category
/// index per outcome (first seen = 0) with `label` kept. In JSONL a value may be a JSON
/// number, true/false or a string; a string is read as a CSV field is ("0.5" is a
/// number). Optional columns as `noisefloor export` writes them: `label` (kept with a
/// numeric value, so an export -> import round trip keeps "B") and `status` (ok or
/// empty = ok, parse_error, refused, api_error; other columns are ignored). An ok draw has
/// a row per outcome; a draw of another status has ONE row whose outcome, value and label
/// are empty (in JSONL absent or null too), read as a row with that status, outcome "",
/// value 0. A JSONL line with an "outcomes" array (and no "outcome" key) is one draw as
/// `noisefloor export --format jsonl` writes it; its outcomes are expanded into rows (a
/// draw that is not ok, with none: its one row), so both export formats import back; an
/// ok draw line without outcomes (a chat study's) is skipped and counted in a warning
/// ("path: N ok draw lines without outcomes (first on line L) skipped ..."; a file of
/// only such lines is an error).
/// Category labels (and the `label` column) are kept as written; numbers are trimmed.
/// Errors (InvalidArgument "path:line: column: problem"): missing column, empty
/// subject/item, an empty outcome or value on an ok row, non-integer or negative
/// replicate, an unknown status, an outcome, value or label on a row that is not ok, two
/// statuses among the rows of one draw (subject,item,condition,config,replicate) or a
/// second row of a draw that is not ok (data/import_messages.h status_conflict_error,
/// second_status_row_error; the streaming form checks adjacent rows only), duplicate
/// (subject,item,condition,config,replicate,outcome); a non-finite value
/// (nan, inf, infinity in any case, or beyond a double's range such as 1e999; in JSONL
/// the JSON parser already refuses 1e999, NaN and Infinity as malformed JSON); a
/// non-zero value that underflows (magnitude below DBL_MIN, e.g. 1e-400, which would read
/// as 0, or 1e-310; for a JSON number its text as written is checked; 0e-400 is 0); two
/// labels of one outcome (category values, or the `label` column of numeric rows) that
/// differ only by surrounding whitespace ("B", "B "), naming both with their first
/// lines, and so for two outcome names ("correct", "correct ") and for two values of one
/// key column (subject, item, cluster, condition, config, each after its default: an
/// empty condition is "none", config "default", cluster the item), e.g. "q1" and "q1 "
/// (data/key_spellings.h; a key value with surrounding whitespace and no twin is kept as
/// written, "q 1" and "q1" are not twins), and a key value that is only whitespace; in
/// JSONL a key repeated
/// in one object ("path:line: key: the key appears twice ..."); a file without rows
/// ("path: no rows ..."); an outcome whose values mix numbers (true/false included) and category labels (a typo
/// such as `1O` among 0/1 values), reported on the line where the second kind first
/// appears, naming the outcome and the first line and value of each kind; a value other
/// than 0/1/true/false of an outcome in `checks.binary`; a `checks.binary` name that no
/// row carries (reported as "path: --binary: ...").
/// Warnings (appended to `*warnings` when given, one line each, at the end of the file;
/// the rows are still imported): an outcome that looks binary with a few exceptions,
/// i.e. every value is a number, no row carries a category label, at least one value is
/// 0 or 1, and the other values are at most 5 distinct numbers on fewer than 10% of the
/// outcome's rows (say 2, -1, 1.5 among 0/1). The warning names the outcome, the count
/// and each other value with its first line and count; `checks.binary` turns it into an
/// error. Two labels of one outcome that differ only by letter case ("yes", "Yes") are
/// imported as two categories with a warning naming both; so are two values of one key
/// column (at most 5 warnings per column, then one counting the rest). The key checks
/// cost a string compare per row and column and a hash lookup when a column's value
/// changes; their memory is one hash-map node per distinct key value (about 75 bytes plus
/// the value's bytes beyond 15: 1M items in 100k clusters about 83 MB; defaulted clusters
/// are checked as the items they are, so a file without a cluster column holds its items
/// once). The label whitespace and case checks
/// keep at most 100 distinct spellings per outcome (and per `label` column); past that
/// a warning says the rest are not checked. Outcomes not declared binary are never
/// changed or dropped.
Result<std::vector<LongDrawRow>> read_long_draws(const std::string& path, const LongDrawChecks& checks = {},
                                                 std::vector<std::string>* warnings = nullptr);

/// The streaming form of read_long_draws, for files of any size: reads `path` in 1 MiB
/// blocks and calls `fn(row, line)` for each row in file order (`line` is the 1-based
/// line on which the row starts). The row object is reused between calls (copy what you
/// keep). Memory is bounded by the longest record plus per-outcome state (the category
/// maps, and for the checks each outcome's first line and value of each kind, at most
/// 6 distinct values other than 0/1 and at most 100 label spellings), whatever the file
/// size. Same format, checks,
/// warnings and errors as read_long_draws, except that duplicates, and rows of one draw
/// with two statuses, are NOT detected here unless the rows are adjacent (the caller's
/// store detects them; see find_long_draw_line and find_long_draw_first for naming the
/// first occurrence). An error returned by `fn` stops the scan and is returned as is. The
/// cross-row checks that can only be decided at the end (an undeclared --binary name)
/// fail after the last `fn` call: a caller that writes rows must commit only after this
/// function returns Ok.
Status for_each_long_draw(const std::string& path,
                          const std::function<Status(const LongDrawRow& row, size_t line)>& fn,
                          const LongDrawChecks& checks = {}, std::vector<std::string>* warnings = nullptr);

/// The line of the first row of `path` with this (subject, item, condition, config,
/// replicate, outcome), or 0 if none (for "duplicate row ... (first on line N)" errors
/// of a streaming import; rescans the file).
size_t find_long_draw_line(const std::string& path, const LongDrawRow& key);

/// The first row of `path` of the draw `key` (any outcome): true with its line and status,
/// or false if none (for "status: ... but line N gave the draw ..." errors of a streaming
/// import; rescans the file).
bool find_long_draw_first(const std::string& path, const DrawKey& key, size_t* line, DrawStatus* status);

}  // namespace nf
