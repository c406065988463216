// An RFC 4180 CSV reader shared by the dataset readers (data/) and the simulator's keys
// (backend/): quoted fields may hold commas, doubled quotes and newlines; a UTF-8 byte
// order mark is skipped; columns are looked up by header name, never by position.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "util/status.h"

namespace nf {

/// A parsed CSV file: the header row and every data record with the 1-based line it
/// starts on (a quoted field may span lines). Every record has header.size() fields.
struct CsvTable {
  std::vector<std::string> header;
  size_t header_line = 1;
  std::vector<std::pair<size_t, std::vector<std::string>>> records;  // (line, fields)

  /// The index of column `name`, or npos when the header lacks it.
  size_t column(const std::string& name) const;
};

/// Parses `text` (the contents of `path`, named in errors). Blank lines are skipped.
/// Errors: InvalidArgument "path:line: ..." for an unterminated quoted field, a record
/// whose field count differs from the header's, a duplicate header name; "path: empty
/// file (expected a header row)" when there is no header.
Result<CsvTable> parse_csv(const std::string& path, const std::string& text);

}  // namespace nf
