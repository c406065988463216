// The CSV reader of `noisefloor stats` (every entry that takes FILE.csv): RFC 4180
// (comma-separated, double-quoted fields may hold commas, quotes doubled inside quotes),
// first line a header, columns chosen by header name only (issue 13 item 1).
#pragma once

#include <string>
#include <vector>

#include <fmt/format.h>

#include "util/status.h"

namespace nf::cli {

/// One field: its trimmed text and where it is (1-based line and field number).
struct Cell {
  std::string text;
  int line = 0;    // 1-based
  int column = 0;  // 1-based field number
};

/// A CSV file: the header names and the data rows, each padded to the header width.
struct Csv {
  std::string path;
  std::vector<std::string> header;
  std::vector<std::vector<Cell>> rows;  // data rows, each padded to the header width
  int header_line = 1;

  /// "FILE:LINE:FIELD" of `c`, the prefix of every error about a cell.
  std::string where(const Cell& c) const { return fmt::format("{}:{}:{}", path, c.line, c.column); }
};

/// Reads `path` as CSV with a header line; a leading UTF-8 byte-order mark is dropped.
/// Errors (InvalidArgument, "FILE:LINE[:FIELD]:
/// message"): unreadable file, empty file, a row wider than the header, an unterminated
/// or misplaced quote, no data rows.
Result<Csv> read_csv(const std::string& path);

/// The index of the column headed `name` (exact match). Errors: InvalidArgument
/// "FILE:LINE: no column named 'x'" with a did-you-mean suggestion from the header.
Result<size_t> column_index(const Csv& csv, const std::string& name);

/// The cell as a finite number. Errors: InvalidArgument "FILE:LINE:FIELD: 'x' is not a number".
Result<double> cell_number(const Csv& csv, const Cell& c);

/// The numeric columns named `names` (in that order), one vector per name, every row
/// required. Errors: column_index's and cell_number's.
Result<std::vector<std::vector<double>>> numeric_columns(const Csv& csv, const std::vector<std::string>& names);

}  // namespace nf::cli
