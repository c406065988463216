// Reads a property of a SQLite file directly (not through the Store), for tests that check
// what the store leaves on disk.
#pragma once

#include <sqlite3.h>

#include <string>

namespace nf::testing {

/// The journal mode recorded in the SQLite file at `path` ("wal", "delete", ...), read by a
/// read-only connection; "" when the file cannot be opened or read.
inline std::string journal_mode(const std::string& path) {
  sqlite3* db = nullptr;
  std::string mode;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, nullptr) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
      mode = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    }
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  return mode;
}

}  // namespace nf::testing
