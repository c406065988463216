// The messages of `import draws` that more than one import path words: the SQLite import
// (runner/import.cc), the PostgreSQL one (runner/import_staged.cc) and read_long_draws
// (data/draws_import.cc) must say the same thing (tests/cli/pg_import_draws_test.cc
// compares the SQLite and PostgreSQL messages), so each is built in one place.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "core/types.h"
#include "util/status.h"

namespace nf {

/// "item 'I' is given two clusters ('A' and 'B')": an item whose rows name two clusters
/// (`first` met first). Values as written, not escaped.
inline std::string two_clusters_message(const std::string& item, const std::string& first,
                                        const std::string& second) {
  return fmt::format("item '{}' is given two clusters ('{}' and '{}')", item, first, second);
}

/// InvalidArgument "path:line: cluster: item 'I' is given two clusters ('A' and 'B')" for
/// the row on `line` (1-based) of file `path`.
inline Status two_clusters_error(const std::string& path, size_t line, const std::string& item,
                                 const std::string& first, const std::string& second) {
  return InvalidArgument(fmt::format("{}:{}: cluster: {}", path, line, two_clusters_message(item, first, second)));
}

/// InvalidArgument "path:line: outcome: duplicate row for (subject=S, item=I, condition=C,
/// config=K, replicate=R, outcome=O) (first on line N)": the row on `line` repeats the
/// (draw, outcome) first written on `first_line`. Values as written, not escaped.
inline Status duplicate_row_error(const std::string& path, size_t line, const DrawKey& key,
                                  const std::string& outcome, size_t first_line) {
  return InvalidArgument(fmt::format("{}:{}: outcome: duplicate row for (subject={}, item={}, condition={}, "
                                     "config={}, replicate={}, outcome={}) (first on line {})",
                                     path, line, key.subject, key.item, key.condition, key.config, key.replicate,
                                     outcome, first_line));
}

/// "(subject=S, item=I, condition=C, config=K, replicate=R)": a draw key in messages.
inline std::string draw_key_message(const DrawKey& key) {
  return fmt::format("(subject={}, item={}, condition={}, config={}, replicate={})", key.subject, key.item,
                     key.condition, key.config, key.replicate);
}

/// InvalidArgument "path:line: status: 'ok', but line N gave the draw (subject=S, ...)
/// status 'parse_error': ..." for the row on `line` whose draw an earlier row (on
/// `first_line`) gave another status.
inline Status status_conflict_error(const std::string& path, size_t line, const DrawKey& key,
                                    std::string_view status, size_t first_line, std::string_view first_status) {
  return InvalidArgument(fmt::format("{}:{}: status: '{}', but line {} gave the draw {} status '{}': the rows of "
                                     "one draw agree on its status (a draw that is not ok has one row, with empty "
                                     "outcome and value)",
                                     path, line, status, first_line, draw_key_message(key), first_status));
}

/// InvalidArgument "path:line: status: a second row of the parse_error draw (subject=S,
/// ...) (first on line N): ...": a draw that is not ok has one row.
inline Status second_status_row_error(const std::string& path, size_t line, const DrawKey& key,
                                      std::string_view status, size_t first_line) {
  return InvalidArgument(fmt::format("{}:{}: status: a second row of the {} draw {} (first on line {}): a draw that "
                                     "is not ok has one row, with empty outcome and value",
                                     path, line, status, draw_key_message(key), first_line));
}

}  // namespace nf
