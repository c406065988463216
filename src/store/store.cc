// The SQLite store (docs/store.md). Every statement is prepared with bound parameters;
// values never enter SQL text. All public methods lock mu_, so the connection is opened
// in SQLite's multi-thread mode (SQLITE_OPEN_NOMUTEX): one thread at a time, ensured here.
#include "store/sqlite_store.h"

#include "store/export_format.h"
#include "store/group_commit.h"
#include "store/outcome_chunks.h"
#include "store/status_tally.h"
#include "store/store_internal.h"

#include <dirent.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string_view>
#include <system_error>
#include <thread>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "util/clock.h"
#include "util/file.h"
#include "util/output_file.h"

#ifndef NOISEFLOOR_VERSION
#define NOISEFLOOR_VERSION "0.1.0"  // the CLI target defines it from project(VERSION)
#endif

namespace nf {
namespace {

using store_export::axis_value_json;
using store_export::config_axes;
using store_export::csv_field;
using store_export::write_csv_row;

using nlohmann::json;

constexpr std::string_view kToolVersion = NOISEFLOOR_VERSION;

// Maps a SQLite result code to a Status naming the operation, the store path and
// sqlite3_errmsg. CORRUPT/NOTADB are DataLoss (docs/store.md "Errors").
Status sqlite_status(sqlite3* db, int rc, std::string_view op, const std::string& path) {
  const char* msg = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  std::string text = fmt::format("store {}: {}: {} (sqlite code {})", path, op,
                                 msg != nullptr ? msg : sqlite3_errstr(rc), rc);
  switch (rc & 0xff) {
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return DataLoss(std::move(text));
    case SQLITE_CONSTRAINT:
    case SQLITE_MISMATCH:
    case SQLITE_TOOBIG:
      return InvalidArgument(std::move(text));
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
      return InvalidArgument(std::move(text));
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_READONLY:
    case SQLITE_FULL:
    case SQLITE_IOERR:
      return FailedPrecondition(std::move(text));
    default:
      return Internal(std::move(text));
  }
}

// RAII prepared statement. Bind failures are remembered and reported by step().
class Stmt {
 public:
  static Result<Stmt> prepare(sqlite3* db, std::string_view sql, std::string_view op,
                              const std::string& path) {
    sqlite3_stmt* s = nullptr;
    int rc = sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &s, nullptr);
    if (rc != SQLITE_OK) {
      sqlite3_finalize(s);
      return sqlite_status(db, rc, op, path);
    }
    return Stmt(db, s, op, path);
  }

  Stmt(Stmt&& o) noexcept
      : db_(o.db_), s_(std::exchange(o.s_, nullptr)), op_(o.op_), path_(o.path_),
        bind_rc_(o.bind_rc_) {}
  Stmt& operator=(Stmt&&) = delete;
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  ~Stmt() { sqlite3_finalize(s_); }

  Stmt& bind(int i, std::string_view v) {
    note(sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
    return *this;
  }
  Stmt& bind(int i, const char* v) { return bind(i, std::string_view(v)); }
  /// Binds `v` without a copy: the caller keeps its bytes alive and unchanged until the
  /// statement has been stepped and reset (the per-draw put path binds the Draw's own
  /// strings this way).
  Stmt& bind_static(int i, std::string_view v) {
    note(sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_STATIC));
    return *this;
  }
  Stmt& bind(int i, const std::string& v) { return bind(i, std::string_view(v)); }
  Stmt& bind(int i, int64_t v) {
    note(sqlite3_bind_int64(s_, i, v));
    return *this;
  }
  Stmt& bind(int i, int v) { return bind(i, static_cast<int64_t>(v)); }
  Stmt& bind(int i, double v) {
    note(sqlite3_bind_double(s_, i, v));
    return *this;
  }
  Stmt& bind_null(int i) {
    note(sqlite3_bind_null(s_, i));
    return *this;
  }

  /// true: a row is ready; false: done.
  Result<bool> step() {
    if (bind_rc_ != SQLITE_OK) return sqlite_status(db_, bind_rc_, op_, *path_);
    int rc = sqlite3_step(s_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    return sqlite_status(db_, rc, op_, *path_);
  }
  /// Runs a statement that returns no rows we need.
  Status run() {
    Result<bool> r = step();
    while (r.ok() && *r) r = step();
    return r.status();
  }
  void reset() {
    sqlite3_reset(s_);
    sqlite3_clear_bindings(s_);
    bind_rc_ = SQLITE_OK;
  }

  std::string text(int i) const {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s_, i));
    if (p == nullptr) return {};
    return std::string(p, static_cast<size_t>(sqlite3_column_bytes(s_, i)));
  }
  /// The column's text without a copy: valid until the next step() or reset().
  std::string_view view(int i) const {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s_, i));
    if (p == nullptr) return {};
    return std::string_view(p, static_cast<size_t>(sqlite3_column_bytes(s_, i)));
  }
  int64_t int64(int i) const { return static_cast<int64_t>(sqlite3_column_int64(s_, i)); }
  double dbl(int i) const { return sqlite3_column_double(s_, i); }
  bool is_null(int i) const { return sqlite3_column_type(s_, i) == SQLITE_NULL; }

 private:
  Stmt(sqlite3* db, sqlite3_stmt* s, std::string_view op, const std::string& path)
      : db_(db), s_(s), op_(op), path_(&path) {}
  void note(int rc) {
    if (rc != SQLITE_OK && bind_rc_ == SQLITE_OK) bind_rc_ = rc;
  }

  sqlite3* db_;
  sqlite3_stmt* s_;
  std::string_view op_;  // a string literal
  const std::string* path_;
  int bind_rc_ = SQLITE_OK;
};

Status exec(sqlite3* db, const char* sql, std::string_view op, const std::string& path) {
  int rc = sqlite3_exec(db, sql, nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return sqlite_status(db, rc, op, path);
  return Status::Ok();
}

// RAII write transaction: BEGIN IMMEDIATE takes the write lock up front (waiting up to
// busy_timeout), so a read-then-write never fails with SQLITE_BUSY half way. Rolled back
// unless commit() succeeded.
class WriteTxn {
 public:
  WriteTxn(sqlite3* db, std::string_view op, const std::string& path)
      : db_(db), op_(op), path_(path) {}
  WriteTxn(const WriteTxn&) = delete;
  WriteTxn& operator=(const WriteTxn&) = delete;
  ~WriteTxn() {
    if (active_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  Status begin() {
    NF_RETURN_IF_ERROR(exec(db_, "BEGIN IMMEDIATE", op_, path_));
    active_ = true;
    return Status::Ok();
  }
  Status commit() {
    NF_RETURN_IF_ERROR(exec(db_, "COMMIT", op_, path_));
    active_ = false;
    return Status::Ok();
  }

 private:
  sqlite3* db_;
  std::string_view op_;
  const std::string& path_;
  bool active_ = false;
};

// JSON text for the store. Invalid UTF-8 in strings is replaced (U+FFFD) rather than
// thrown, so a model's odd bytes never abort a draw.
std::string dump_json(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

Result<json> parse_json(const std::string& text, std::string_view what, const std::string& path) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return DataLoss(fmt::format("store {}: {} is not valid JSON: {:.80}", path, what, text));
  }
  return j;
}

int64_t now_s() { return real_clock().unix_time_s(); }

// ---- schema -------------------------------------------------------------------------

// Schema v1 (docs/store.md documents every table and column).
constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE meta(
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE study(
  id         INTEGER PRIMARY KEY CHECK (id = 1),
  name       TEXT NOT NULL,
  hash       TEXT NOT NULL,
  seed       INTEGER NOT NULL,
  spec       TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE TABLE items(
  item    TEXT PRIMARY KEY,
  cluster TEXT NOT NULL,
  data    TEXT NOT NULL
);
CREATE TABLE subjects(
  subject TEXT PRIMARY KEY,
  spec    TEXT NOT NULL
);
CREATE TABLE configs(
  config TEXT PRIMARY KEY,
  spec   TEXT NOT NULL
);
CREATE TABLE draws(
  id                 INTEGER PRIMARY KEY,
  subject            TEXT NOT NULL,
  item               TEXT NOT NULL,
  condition          TEXT NOT NULL,
  config             TEXT NOT NULL,
  replicate          INTEGER NOT NULL CHECK (replicate >= 0),
  cluster            TEXT NOT NULL,
  status             TEXT NOT NULL CHECK (status IN ('ok', 'parse_error', 'api_error', 'refused')),
  request            TEXT NOT NULL,
  response           TEXT NOT NULL,
  content            TEXT NOT NULL,
  error              TEXT NOT NULL,
  latency_ms         REAL,
  prompt_tokens      INTEGER,
  completion_tokens  INTEGER,
  finish_reason      TEXT NOT NULL,
  served_model       TEXT NOT NULL,
  system_fingerprint TEXT NOT NULL,
  cached             INTEGER NOT NULL CHECK (cached IN (0, 1)),
  attempts           INTEGER NOT NULL,
  extra              TEXT NOT NULL,
  created_at         INTEGER NOT NULL,
  UNIQUE (subject, item, condition, config, replicate)
);
CREATE INDEX draws_by_cell ON draws(status, subject, config, condition, item, replicate);
CREATE TABLE outcomes(
  draw_id INTEGER NOT NULL REFERENCES draws(id) ON DELETE CASCADE,
  name    TEXT NOT NULL,
  value   REAL NOT NULL,
  label   TEXT NOT NULL,
  PRIMARY KEY (draw_id, name)
);
CREATE TABLE response_cache(
  key        TEXT PRIMARY KEY,
  response   TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
)sql";

// A migration rewrites a store of schema version `from` into version `from + 1`, inside
// the transaction the caller opened. Append one per schema change; never edit or reorder
// published ones (duckdb storage-version rule). v1 is the first published schema, so
// the list is empty and a store older than kOldestMigratable is refused.
struct Migration {
  int from;
  Status (*apply)(sqlite3* db, const std::string& path);
};
constexpr int kOldestMigratable = 1;

// Schema v2 (issue 4, seed 004 §2.6, §3.4): judge votes and human labels. A judgment is
// keyed by (subject, item, judge, draw) — imported votes have draw_id NULL, so the
// expression index makes (subject, item, judge) unique for them.
constexpr const char* kSchemaV2Delta = R"sql(
CREATE TABLE judgments(
  id               INTEGER PRIMARY KEY,
  subject          TEXT NOT NULL,
  subject_provider TEXT NOT NULL,
  item             TEXT NOT NULL,
  cluster          TEXT NOT NULL,
  judge            TEXT NOT NULL,
  judge_provider   TEXT NOT NULL,
  label            INTEGER CHECK (label IN (0, 1)),
  status           TEXT NOT NULL CHECK (status IN ('ok', 'parse_error', 'api_error')),
  draw_id          INTEGER REFERENCES draws(id) ON DELETE SET NULL,
  raw_response     TEXT NOT NULL,
  settings         TEXT NOT NULL,
  created_at       INTEGER NOT NULL,
  CHECK (status != 'ok' OR label IS NOT NULL)
);
CREATE UNIQUE INDEX judgments_key ON judgments(subject, item, judge, ifnull(draw_id, 0));
CREATE TABLE human_labels(
  rater   TEXT NOT NULL,
  subject TEXT NOT NULL,
  item    TEXT NOT NULL,
  label   INTEGER NOT NULL CHECK (label IN (0, 1)),
  PRIMARY KEY (rater, subject, item)
) WITHOUT ROWID;
)sql";

Status migrate_v1_to_v2(sqlite3* db, const std::string& path) {
  return exec(db, kSchemaV2Delta, "create judgments and human_labels", path);
}

// Schema v3 (issue 14): outcomes WITHOUT ROWID, keyed (draw_id, name), so an outcome value
// is one B-tree insert instead of two (the rowid table and its primary-key index). Reads
// that returned a draw's outcomes "in rowid order" (the order they were written) order by
// the new column `ord` (0, 1, ... per draw), filled from the v2 rowids. The copy, drop and
// rename is SQLite's documented way to change a table's layout (no other table references
// outcomes, so no foreign key needs rewriting).
constexpr const char* kSchemaV3Delta = R"sql(
CREATE TABLE outcomes_v3(
  draw_id INTEGER NOT NULL REFERENCES draws(id) ON DELETE CASCADE,
  name    TEXT NOT NULL,
  ord     INTEGER NOT NULL,
  value   REAL NOT NULL,
  label   TEXT NOT NULL,
  PRIMARY KEY (draw_id, name)
) WITHOUT ROWID;
INSERT INTO outcomes_v3(draw_id, name, ord, value, label)
  SELECT draw_id, name, row_number() OVER (PARTITION BY draw_id ORDER BY rowid) - 1, value, label
  FROM outcomes ORDER BY draw_id, name;
DROP TABLE outcomes;
ALTER TABLE outcomes_v3 RENAME TO outcomes;
)sql";

Status migrate_v2_to_v3(sqlite3* db, const std::string& path) {
  return exec(db, kSchemaV3Delta, "rebuild outcomes WITHOUT ROWID", path);
}

// Schema v4 (issue 14): the columnar form of imported outcomes (store/outcome_chunks.h,
// docs/store.md "outcome_chunks"). Only `import draws` writes it; existing outcomes stay
// rows, so the migration only adds the (empty) table.
constexpr const char* kSchemaV4Delta = R"sql(
CREATE TABLE outcome_chunks(
  first_draw_id INTEGER PRIMARY KEY,
  last_draw_id  INTEGER NOT NULL,
  n             INTEGER NOT NULL,
  draws         BLOB NOT NULL,
  strings       BLOB NOT NULL,
  names         BLOB NOT NULL,
  labels        BLOB NOT NULL,
  vals          BLOB NOT NULL
);
)sql";

Status migrate_v3_to_v4(sqlite3* db, const std::string& path) {
  return exec(db, kSchemaV4Delta, "create outcome_chunks", path);
}

constexpr std::array<Migration, 3> kMigrations{
    {{1, &migrate_v1_to_v2}, {2, &migrate_v2_to_v3}, {3, &migrate_v3_to_v4}}};

// The schema version stored in `meta`, or nullopt for an empty database (no tables).
// DataLoss if the database has tables but is not a noisefloor store, or if its version
// entry is missing or not an integer.
Result<std::optional<int>> read_schema_version(sqlite3* db, const std::string& path) {
  NF_ASSIGN_OR_RETURN(Stmt tables, Stmt::prepare(db,
      "SELECT count(*), sum(name = 'meta') FROM sqlite_master WHERE type = 'table'",
      "read schema", path));
  NF_ASSIGN_OR_RETURN(bool row, tables.step());
  if (!row) return Internal("store " + path + ": read schema: no row");
  if (tables.int64(0) == 0) return std::optional<int>();
  if (tables.int64(1) == 0) {
    return DataLoss(fmt::format(
        "store {}: not a noisefloor store (a SQLite database without a 'meta' table)", path));
  }
  NF_ASSIGN_OR_RETURN(Stmt version, Stmt::prepare(db,
      "SELECT value FROM meta WHERE key = 'schema_version'", "read schema version", path));
  NF_ASSIGN_OR_RETURN(bool has, version.step());
  if (!has) return DataLoss("store " + path + ": meta table has no schema_version");
  std::string text = version.text(0);
  int v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 0) {
    return DataLoss(fmt::format("store {}: schema_version '{}' is not a version number", path, text));
  }
  return std::optional<int>(v);
}

Status check_not_newer(int version, const std::string& path) {
  if (version > kStoreSchemaVersion) {
    return FailedPrecondition(fmt::format(
        "store {}: schema version {} is newer than this build's schema version {} "
        "(written by a newer noisefloor; upgrade noisefloor to open it)",
        path, version, kStoreSchemaVersion));
  }
  return Status::Ok();
}

Status set_meta(sqlite3* db, const std::string& path, std::string_view key, std::string_view value) {
  NF_ASSIGN_OR_RETURN(Stmt s, Stmt::prepare(db,
      "INSERT INTO meta(key, value) VALUES(?1, ?2) "
      "ON CONFLICT(key) DO UPDATE SET value = excluded.value", "write meta", path));
  s.bind(1, key).bind(2, value);
  return s.run();
}

// ---- draws --------------------------------------------------------------------------

constexpr const char* kDrawColumns =
    "subject, item, condition, config, replicate, cluster, status, request, response, "
    "content, error, latency_ms, prompt_tokens, completion_tokens, finish_reason, "
    "served_model, system_fingerprint, cached, attempts, extra, created_at";

// The statements a draw write needs, prepared once per transaction and reused (imports
// of ~100k draws stay O(n) with no re-preparing).
struct DrawWriter {
  Stmt find, remove, insert, outcome;

  static Result<DrawWriter> prepare(sqlite3* db, const std::string& path) {
    NF_ASSIGN_OR_RETURN(Stmt find, Stmt::prepare(db,
        "SELECT id, status FROM draws WHERE subject = ?1 AND item = ?2 AND condition = ?3 "
        "AND config = ?4 AND replicate = ?5", "put_draw: find", path));
    NF_ASSIGN_OR_RETURN(Stmt remove, Stmt::prepare(db,
        "DELETE FROM draws WHERE id = ?1", "put_draw: replace api_error", path));
    NF_ASSIGN_OR_RETURN(Stmt insert, Stmt::prepare(db,
        fmt::format("INSERT INTO draws({}) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, "
                    "?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21)", kDrawColumns),
        "put_draw: insert", path));
    NF_ASSIGN_OR_RETURN(Stmt outcome, Stmt::prepare(db,
        "INSERT INTO outcomes(draw_id, name, ord, value, label) VALUES(?1, ?2, ?3, ?4, ?5)",
        "put_draw: insert outcome", path));
    return DrawWriter{std::move(find), std::move(remove), std::move(insert), std::move(outcome)};
  }

  Status write(sqlite3* db, const std::string& path, const Draw& d, int64_t created_at) {
    const DrawKey& k = d.key;
    if (k.replicate < 0) {
      return InvalidArgument(fmt::format("store {}: put_draw {}: replicate must be >= 0", path, k.to_string()));
    }
    for (size_t i = 0; i < d.outcomes.size(); ++i) {
      if (std::isnan(d.outcomes[i].value)) {
        return InvalidArgument(fmt::format("store {}: put_draw {}: outcome '{}' has value NaN",
                                           path, k.to_string(), d.outcomes[i].name));
      }
      for (size_t j = 0; j < i; ++j) {
        if (d.outcomes[j].name == d.outcomes[i].name) {
          return InvalidArgument(fmt::format("store {}: put_draw {}: outcome '{}' appears twice",
                                             path, k.to_string(), d.outcomes[i].name));
        }
      }
    }
    // Strings are bound without a copy (SQLITE_STATIC): `d` and `request_text` outlive
    // every step below, and each statement is reset before it is bound again.
    find.reset();
    find.bind_static(1, k.subject).bind_static(2, k.item).bind_static(3, k.condition).bind_static(4, k.config)
        .bind(5, k.replicate);
    NF_ASSIGN_OR_RETURN(bool exists, find.step());
    if (exists) {
      const int64_t id = find.int64(0);
      const std::string status = find.text(1);
      find.reset();
      if (status != draw_status_name(DrawStatus::kApiError)) {
        return AlreadyExists(fmt::format("store {}: draw {} is already stored with status {}",
                                         path, k.to_string(), status));
      }
      remove.reset();
      remove.bind(1, id);
      NF_RETURN_IF_ERROR(remove.run());  // outcomes go with it (ON DELETE CASCADE)
    }
    find.reset();

    // The bytes the runner already dumped when it has them (Draw::request_text), else the
    // same dump of `request`.
    const std::string request_dumped = d.request_text.empty() ? dump_json(d.request) : std::string();
    const std::string& request_text = d.request_text.empty() ? request_dumped : d.request_text;
    const std::string extra_text = dump_json(d.extra);
    insert.reset();
    insert.bind_static(1, k.subject).bind_static(2, k.item).bind_static(3, k.condition).bind_static(4, k.config)
        .bind(5, k.replicate).bind_static(6, d.cluster).bind_static(7, draw_status_name(d.status))
        .bind_static(8, request_text).bind_static(9, d.raw_response).bind_static(10, d.content)
        .bind_static(11, d.error);
    if (std::isnan(d.latency_ms)) insert.bind_null(12); else insert.bind(12, d.latency_ms);
    if (d.prompt_tokens < 0) insert.bind_null(13); else insert.bind(13, d.prompt_tokens);
    if (d.completion_tokens < 0) insert.bind_null(14); else insert.bind(14, d.completion_tokens);
    insert.bind_static(15, d.finish_reason).bind_static(16, d.served_model).bind_static(17, d.system_fingerprint)
        .bind(18, d.cached ? 1 : 0).bind(19, d.attempts).bind_static(20, extra_text)
        .bind(21, created_at);
    const Status inserted = insert.run();
    insert.reset();  // the bound bytes above end with this call
    NF_RETURN_IF_ERROR(inserted);
    const int64_t id = sqlite3_last_insert_rowid(db);
    for (size_t i = 0; i < d.outcomes.size(); ++i) {
      const Outcome& o = d.outcomes[i];
      outcome.reset();
      outcome.bind(1, id).bind_static(2, o.name).bind(3, static_cast<int64_t>(i)).bind(4, o.value)
          .bind_static(5, o.label);
      NF_RETURN_IF_ERROR(outcome.run());
    }
    find.reset();
    outcome.reset();
    return Status::Ok();
  }
};

// Exports stream to `out_path.tmp`, renamed over `out_path` on success (util/output_file.h).
// (csv_field, config_axes and axis_value_json are in store/export_format.h.)

}  // namespace

// ---- open / schema ------------------------------------------------------------------

namespace {

// "store PATH: read-only ..." for a write command on a store it cannot write.
Status read_only_store(const std::string& path, const std::string& what) {
  return FailedPrecondition(fmt::format(
      "store {}: {} is not writable, and this command writes to the store (analyze, export and check open a "
      "read-only store for reading; make it writable, or copy it, to write)",
      path, what));
}

// What a read command (or judge) says of a file that is no noisefloor store yet.
Status not_a_store(const std::string& path, const std::string& what) {
  return DataLoss(fmt::format(
      "store {} is not a noisefloor store: {}; nothing was ever run or imported into it (`run`, `audit` and `import` "
      "create a store; this command only opens one)",
      path, what));
}

// A read command (or judge) given a path where no store is.
Status no_such_store(const std::string& path) {
  return NotFound(fmt::format("store {}: no such store (no such file; `run`, `audit` and `import` create a store, this "
                              "command only opens one: check the path)",
                              path));
}

// `path` as an SQLite URI filename (file:...), with the characters a URI gives a meaning
// to percent-encoded.
std::string sqlite_uri(const std::string& path, const char* query) {
  std::string out = "file:";
  for (char c : path) {
    if (c == '%' || c == '?' || c == '#') out += fmt::format("%{:02X}", static_cast<unsigned char>(c));
    else out += c;
  }
  return out + "?" + query;
}

}  // namespace

Result<std::unique_ptr<Store>> SqliteStore::open_read_only(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return no_such_store(path);
  if (std::filesystem::is_directory(path, ec))
    return InvalidArgument("store " + path + ": is a directory, expected a store file");
  // mode=ro first: it sees a write-ahead log another process is writing. It needs the
  // -shm file, which it cannot create in a read-only folder; then (and only when there is
  // no uncheckpointed log to miss) the file is read as immutable.
  for (const char* query : {"mode=ro", "mode=ro&immutable=1"}) {
    sqlite3* raw = nullptr;
    int rc = sqlite3_open_v2(sqlite_uri(path, query).c_str(), &raw,
                             SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nullptr);
    if (rc != SQLITE_OK) {
      Status s = sqlite_status(raw, rc, "open read-only", path);
      sqlite3_close(raw);
      return s;
    }
    std::unique_ptr<SqliteStore> store(new SqliteStore(path, raw));
    sqlite3* db = store->db_;
    sqlite3_extended_result_codes(db, 1);
    sqlite3_busy_timeout(db, 10000);
    rc = sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", nullptr, nullptr, nullptr);
    // CANTOPEN, READONLY_CANTINIT or READONLY_DIRECTORY: the -shm file cannot be made.
    if (((rc & 0xff) == SQLITE_CANTOPEN || rc == SQLITE_READONLY_CANTINIT || rc == SQLITE_READONLY_DIRECTORY) &&
        std::string_view(query) == "mode=ro") {
      const auto wal = std::filesystem::file_size(path + "-wal", ec);
      if (!ec && wal > 0)
        return FailedPrecondition(fmt::format(
            "store {}: cannot be read: it is read-only and its write-ahead log {}-wal holds changes not yet in the "
            "file, which SQLite can only read with write access to the folder (make the folder writable once)",
            path, path));
      continue;  // no log to miss: read the file as immutable
    }
    if (rc != SQLITE_OK) return sqlite_status(db, rc, "open read-only", path);
    NF_ASSIGN_OR_RETURN(std::optional<int> version, read_schema_version(db, path));
    if (!version) {
      std::error_code size_ec;
      return not_a_store(path, std::filesystem::file_size(path, size_ec) == 0 && !size_ec
                                   ? "empty file (0 bytes)"
                                   : "a SQLite database without tables");
    }
    NF_RETURN_IF_ERROR(check_not_newer(*version, path));
    // A v3 store differs from v4 only by the missing (empty) outcome_chunks table, which
    // its readers query: a TEMP table of that name (the temp schema is writable on a
    // read-only connection, and is searched first) reads it exactly as migrated, without
    // writing the file. Older versions need a real migration.
    if (*version == 3 && kStoreSchemaVersion == 4) {
      const std::string temp = std::string("CREATE TEMP TABLE") + (kSchemaV4Delta + std::string_view(kSchemaV4Delta).find(" outcome_chunks("));
      NF_RETURN_IF_ERROR(exec(db, temp.c_str(), "read a schema v3 store read-only", path));
      return std::unique_ptr<Store>(std::move(store));
    }
    if (*version != kStoreSchemaVersion)
      return FailedPrecondition(fmt::format(
          "store {}: schema version {} needs migrating to version {}, which writes the file, but it is opened "
          "read-only (make it writable and run analyze once, or copy it)",
          path, *version, kStoreSchemaVersion));
    return std::unique_ptr<Store>(std::move(store));
  }
  return Internal("store " + path + ": open read-only: no attempt left");
}

Result<std::unique_ptr<Store>> SqliteStore::open(const std::string& path) { return open_sqlite(path, true); }

Result<std::unique_ptr<Store>> SqliteStore::open_store(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(path, ec) && std::filesystem::file_size(path, ec) == 0 && !ec)
    return not_a_store(path, "empty file (0 bytes)");
  return open_sqlite(path, false);
}

Result<std::unique_ptr<Store>> SqliteStore::open_sqlite(const std::string& path, bool create) {
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) NF_RETURN_IF_ERROR(make_dirs(parent.string()));
  {
    // A file or folder this process cannot write would fail later with SQLite's "attempt
    // to write a readonly database"; name it now.
    std::error_code ec;
    if (std::filesystem::exists(path, ec) && access(path.c_str(), W_OK) != 0) return read_only_store(path, "the file");
    const std::string dir = parent.empty() ? "." : parent.string();
    if (access(dir.c_str(), W_OK) != 0) return read_only_store(path, "its folder " + dir);
  }
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &raw,
                           SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    Status s = sqlite_status(raw, rc, "open", path);
    sqlite3_close(raw);
    return s;
  }
  // From here the Store owns the connection (its destructor closes it).
  std::unique_ptr<SqliteStore> store(new SqliteStore(path, raw));  // private constructor
  sqlite3* db = store->db_;
  sqlite3_extended_result_codes(db, 1);
  rc = sqlite3_busy_timeout(db, 10000);
  if (rc != SQLITE_OK) return sqlite_status(db, rc, "set busy_timeout", path);
  NF_RETURN_IF_ERROR(exec(db, "PRAGMA foreign_keys = ON", "enable foreign keys", path));

  // Refuse foreign and newer files before anything (journal mode included) is changed.
  NF_ASSIGN_OR_RETURN(std::optional<int> version, read_schema_version(db, path));
  if (version) NF_RETURN_IF_ERROR(check_not_newer(*version, path));
  if (!version && !create) return not_a_store(path, "a SQLite database without tables");

  {
    NF_ASSIGN_OR_RETURN(Stmt wal, Stmt::prepare(db, "PRAGMA journal_mode = WAL", "set WAL mode", path));
    NF_ASSIGN_OR_RETURN(bool row, wal.step());
    std::string mode = row ? wal.text(0) : "";
    if (mode != "wal") {
      return FailedPrecondition(fmt::format(
          "store {}: cannot switch to WAL journal mode (mode is '{}'; is the file on a network "
          "filesystem?)", path, mode));
    }
  }
  NF_RETURN_IF_ERROR(exec(db, "PRAGMA synchronous = NORMAL", "set synchronous", path));
  NF_RETURN_IF_ERROR(store->migrate());
  return std::unique_ptr<Store>(std::move(store));
}

Result<std::unique_ptr<Store>> Store::open_for_reading(const std::string& path) {
  if (is_postgresql_url(path)) return open(path);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return no_such_store(path);
  if (std::filesystem::is_directory(path, ec)) {
    return InvalidArgument("store " + path + ": is a directory, expected a store file");
  }
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  const std::string dir = parent.empty() ? "." : parent.string();
  if (access(path.c_str(), W_OK) != 0 || access(dir.c_str(), W_OK) != 0) return SqliteStore::open_read_only(path);
  return SqliteStore::open_store(path);
}

Result<std::unique_ptr<Store>> Store::open_read_only(const std::string& path) {
  if (is_postgresql_url(path)) return open(path);
  return SqliteStore::open_read_only(path);
}

Result<std::unique_ptr<Store>> Store::open_existing(const std::string& path) {
  if (is_postgresql_url(path)) return open(path);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return no_such_store(path);
  if (std::filesystem::is_directory(path, ec)) {
    return InvalidArgument("store " + path + ": is a directory, expected a store file");
  }
  return SqliteStore::open_store(path);
}

// The hot-path statements, prepared once per Store (re-preparing four statements per
// draw was a large share of `noisefloor run`'s CPU per draw; bench/README.md).
struct SqliteStore::HotStatements {
  std::optional<DrawWriter> draw_writer;
  std::optional<Stmt> cache_get, cache_put;
  // put_draw_group's savepoint around each draw, prepared once (sqlite3_exec parsed the
  // three statements again for every draw).
  std::optional<Stmt> savepoint, release, rollback_to;
};

SqliteStore::SqliteStore(std::string path, sqlite3* db)
    : Store(std::move(path)), db_(db), hot_(std::make_unique<HotStatements>()) {}

SqliteStore::~SqliteStore() {
  group_.reset();
  hot_.reset();  // finalize the cached statements before closing the connection
  sqlite3_close_v2(db_);
}

Status SqliteStore::migrate() {
  std::lock_guard lock(mu_);
  // Re-read the version under the write lock: another process may have created or
  // migrated the store since open() looked.
  {
    WriteTxn txn(db_, "create schema", path_);
    NF_RETURN_IF_ERROR(txn.begin());
    NF_ASSIGN_OR_RETURN(std::optional<int> version, read_schema_version(db_, path_));
    if (!version) {
      // A new store is created at v1 and brought to the current version by the same
      // migrations an old store goes through, so both paths give the same schema; all of
      // it in this one transaction (one commit, two syncs, where a transaction per step
      // cost `import` and `run` start-up 18 fdatasyncs; bench/README.md). A crash leaves
      // no store or a current one.
      NF_RETURN_IF_ERROR(exec(db_, kSchemaV1, "create schema v1", path_));
      for (const Migration& m : kMigrations) {
        NF_RETURN_IF_ERROR(m.apply(db_, path_).with_context(
            fmt::format("creating schema {} -> {}", m.from, m.from + 1)));
      }
      static_assert(kMigrations.back().from + 1 == kStoreSchemaVersion, "a migration per schema version");
      NF_RETURN_IF_ERROR(set_meta(db_, path_, "schema_version", std::to_string(kStoreSchemaVersion)));
      NF_RETURN_IF_ERROR(set_meta(db_, path_, "created_by", kToolVersion));
      NF_RETURN_IF_ERROR(set_meta(db_, path_, "tool_version", kToolVersion));
      return txn.commit();
    }
    NF_RETURN_IF_ERROR(check_not_newer(*version, path_));
    if (*version == kStoreSchemaVersion) return txn.commit();
    if (*version < kOldestMigratable) {
      return FailedPrecondition(fmt::format(
          "store {}: schema version {} is older than any this build can migrate "
          "(oldest {}, current {})", path_, *version, kOldestMigratable, kStoreSchemaVersion));
    }
    NF_RETURN_IF_ERROR(txn.commit());
  }
  // One transaction per step, so a crash leaves the store at a well-defined version.
  for (;;) {
    WriteTxn txn(db_, "migrate schema", path_);
    NF_RETURN_IF_ERROR(txn.begin());
    NF_ASSIGN_OR_RETURN(std::optional<int> version, read_schema_version(db_, path_));
    if (!version) return Internal("store " + path_ + ": schema vanished during migration");
    if (*version >= kStoreSchemaVersion) return txn.commit();
    const Migration* step = nullptr;
    for (const Migration& m : kMigrations) {
      if (m.from == *version) step = &m;
    }
    if (step == nullptr) {
      return FailedPrecondition(fmt::format("store {}: no migration from schema version {} to {}",
                                            path_, *version, *version + 1));
    }
    NF_RETURN_IF_ERROR(step->apply(db_, path_).with_context(
        fmt::format("migrating schema {} -> {}", *version, *version + 1)));
    NF_RETURN_IF_ERROR(set_meta(db_, path_, "schema_version", std::to_string(*version + 1)));
    NF_RETURN_IF_ERROR(set_meta(db_, path_, "tool_version", kToolVersion));
    NF_RETURN_IF_ERROR(txn.commit());
  }
}

// ---- study, items, subjects, configs ------------------------------------------------

Result<std::string> SqliteStore::put_study(const StudyRecord& study) {
  std::lock_guard lock(mu_);
  WriteTxn txn(db_, "put_study", path_);
  NF_RETURN_IF_ERROR(txn.begin());
  std::string previous;
  {
    NF_ASSIGN_OR_RETURN(Stmt get, Stmt::prepare(db_, "SELECT hash FROM study WHERE id = 1", "put_study", path_));
    NF_ASSIGN_OR_RETURN(bool row, get.step());
    if (row) previous = get.text(0);
  }
  const int64_t now = now_s();
  NF_ASSIGN_OR_RETURN(Stmt put, Stmt::prepare(db_,
      "INSERT INTO study(id, name, hash, seed, spec, created_at, updated_at) "
      "VALUES(1, ?1, ?2, ?3, ?4, ?5, ?5) ON CONFLICT(id) DO UPDATE SET name = excluded.name, "
      "hash = excluded.hash, seed = excluded.seed, spec = excluded.spec, "
      "updated_at = excluded.updated_at", "put_study", path_));
  put.bind(1, study.name).bind(2, study.hash).bind(3, study.seed).bind(4, dump_json(study.spec)).bind(5, now);
  NF_RETURN_IF_ERROR(put.run());
  NF_RETURN_IF_ERROR(txn.commit());
  return previous;
}

Result<StudyRecord> SqliteStore::get_study() {
  std::lock_guard lock(mu_);
  NF_ASSIGN_OR_RETURN(Stmt get, Stmt::prepare(db_,
      "SELECT name, hash, seed, spec FROM study WHERE id = 1", "get_study", path_));
  NF_ASSIGN_OR_RETURN(bool row, get.step());
  if (!row) return NotFound("store " + path_ + ": no study recorded");
  StudyRecord r;
  r.name = get.text(0);
  r.hash = get.text(1);
  r.seed = get.int64(2);
  NF_ASSIGN_OR_RETURN(r.spec, parse_json(get.text(3), "study spec", path_));
  return r;
}

Status SqliteStore::put_item(const std::string& id, const std::string& cluster, const json& data) {
  return put_items({ItemRow{id, cluster, data}});
}

Status SqliteStore::put_items(const std::vector<ItemRow>& items) {
  std::lock_guard lock(mu_);
  WriteTxn txn(db_, "put_items", path_);
  NF_RETURN_IF_ERROR(txn.begin());
  NF_ASSIGN_OR_RETURN(Stmt put, Stmt::prepare(db_,
      "INSERT INTO items(item, cluster, data) VALUES(?1, ?2, ?3) ON CONFLICT(item) DO UPDATE "
      "SET cluster = excluded.cluster, data = excluded.data", "put_items", path_));
  for (const ItemRow& it : items) {
    put.reset();
    put.bind(1, it.item).bind(2, it.cluster.empty() ? it.item : it.cluster).bind(3, dump_json(it.data));
    NF_RETURN_IF_ERROR(put.run());
  }
  return txn.commit();
}

Status SqliteStore::put_subject(const std::string& name, const json& spec) {
  std::lock_guard lock(mu_);
  NF_ASSIGN_OR_RETURN(Stmt put, Stmt::prepare(db_,
      "INSERT INTO subjects(subject, spec) VALUES(?1, ?2) ON CONFLICT(subject) DO UPDATE "
      "SET spec = excluded.spec", "put_subject", path_));
  put.bind(1, name).bind(2, dump_json(spec));
  return put.run();
}

Status SqliteStore::put_config(const std::string& id, const json& spec) {
  std::lock_guard lock(mu_);
  NF_ASSIGN_OR_RETURN(Stmt put, Stmt::prepare(db_,
      "INSERT INTO configs(config, spec) VALUES(?1, ?2) ON CONFLICT(config) DO UPDATE "
      "SET spec = excluded.spec", "put_config", path_));
  put.bind(1, id).bind(2, dump_json(spec));
  return put.run();
}

// ---- draws --------------------------------------------------------------------------

Result<std::unordered_set<std::string>> SqliteStore::finished_keys() {
  std::lock_guard lock(mu_);
  NF_ASSIGN_OR_RETURN(Stmt q, Stmt::prepare(db_,
      "SELECT subject, item, condition, config, replicate FROM draws WHERE status != 'api_error'",
      "finished_keys", path_));
  std::unordered_set<std::string> keys;
  for (;;) {
    NF_ASSIGN_OR_RETURN(bool row, q.step());
    if (!row) break;
    DrawKey k{q.text(0), q.text(1), q.text(2), q.text(3), static_cast<int>(q.int64(4))};
    keys.insert(k.to_string());
  }
  return keys;
}

Status SqliteStore::put_draw_locked(const Draw& draw) {
  WriteTxn txn(db_, "put_draw", path_);
  NF_RETURN_IF_ERROR(txn.begin());
  if (!hot_->draw_writer) {
    NF_ASSIGN_OR_RETURN(DrawWriter w, DrawWriter::prepare(db_, path_));
    hot_->draw_writer.emplace(std::move(w));
  }
  NF_RETURN_IF_ERROR(hot_->draw_writer->write(db_, path_, draw, now_s()));
  return txn.commit();
}

Status SqliteStore::put_draw(const Draw& draw) {
  std::lock_guard lock(mu_);
  return put_draw_locked(draw);
}

Status SqliteStore::put_draw_with_cache(const Draw& draw, const std::vector<CacheEntry>& cache) {
  std::lock_guard lock(mu_);
  WriteTxn txn(db_, "put_draw", path_);
  NF_RETURN_IF_ERROR(txn.begin());
  if (!hot_->draw_writer) {
    NF_ASSIGN_OR_RETURN(DrawWriter w, DrawWriter::prepare(db_, path_));
    hot_->draw_writer.emplace(std::move(w));
  }
  const int64_t now = now_s();
  NF_RETURN_IF_ERROR(hot_->draw_writer->write(db_, path_, draw, now));
  for (const CacheEntry& e : cache) NF_RETURN_IF_ERROR(cache_put_locked(e.key, e.response, now));
  return txn.commit();
}

Status SqliteStore::put_draw_group_locked(const std::vector<std::pair<const Draw*, const std::vector<CacheEntry>*>>& group,
                                    std::vector<Status>* statuses) {
  WriteTxn txn(db_, "put_draw", path_);
  NF_RETURN_IF_ERROR(txn.begin());
  if (!hot_->draw_writer) {
    NF_ASSIGN_OR_RETURN(DrawWriter w, DrawWriter::prepare(db_, path_));
    hot_->draw_writer.emplace(std::move(w));
  }
  if (!hot_->savepoint) {
    NF_ASSIGN_OR_RETURN(Stmt sp, Stmt::prepare(db_, "SAVEPOINT draw", "put_draw", path_));
    NF_ASSIGN_OR_RETURN(Stmt rel, Stmt::prepare(db_, "RELEASE draw", "put_draw", path_));
    NF_ASSIGN_OR_RETURN(Stmt back, Stmt::prepare(db_, "ROLLBACK TO draw", "put_draw", path_));
    hot_->savepoint.emplace(std::move(sp));
    hot_->release.emplace(std::move(rel));
    hot_->rollback_to.emplace(std::move(back));
  }
  auto run = [](Stmt& s) {
    s.reset();
    const Status st = s.run();
    s.reset();
    return st;
  };
  const int64_t now = now_s();
  statuses->assign(group.size(), Status::Ok());
  for (size_t i = 0; i < group.size(); ++i) {
    NF_RETURN_IF_ERROR(run(*hot_->savepoint));
    Status st = hot_->draw_writer->write(db_, path_, *group[i].first, now);
    for (size_t c = 0; st.ok() && c < group[i].second->size(); ++c)
      st = cache_put_locked((*group[i].second)[c].key, (*group[i].second)[c].response, now);
    if (!st.ok()) {
      hot_->draw_writer->find.reset();
      hot_->draw_writer->insert.reset();
      hot_->draw_writer->outcome.reset();
      NF_RETURN_IF_ERROR(run(*hot_->rollback_to));
      (*statuses)[i] = st;
    }
    NF_RETURN_IF_ERROR(run(*hot_->release));
  }
  return txn.commit();
}

Status SqliteStore::replace_draw(const Draw& draw) {
  std::lock_guard lock(mu_);
  WriteTxn txn(db_, "replace_draw", path_);
  NF_RETURN_IF_ERROR(txn.begin());
  NF_ASSIGN_OR_RETURN(Stmt del_judgments, Stmt::prepare(db_,
      "DELETE FROM judgments WHERE draw_id IN (SELECT id FROM draws WHERE subject = ?1 AND item = ?2 AND "
      "condition = ?3 AND config = ?4 AND replicate = ?5)",
      "replace_draw: judgments", path_));
  del_judgments.bind(1, draw.key.subject).bind(2, draw.key.item).bind(3, draw.key.condition)
      .bind(4, draw.key.config).bind(5, static_cast<int64_t>(draw.key.replicate));
  NF_RETURN_IF_ERROR(del_judgments.run());
  {
    // ON DELETE CASCADE removes row-form outcomes; chunked ones (schema v4) are removed here.
    NF_ASSIGN_OR_RETURN(Stmt find, Stmt::prepare(db_,
        "SELECT id FROM draws WHERE subject = ?1 AND item = ?2 AND condition = ?3 AND config = ?4 AND replicate = ?5",
        "replace_draw: find", path_));
    find.bind(1, draw.key.subject).bind(2, draw.key.item).bind(3, draw.key.condition).bind(4, draw.key.config)
        .bind(5, static_cast<int64_t>(draw.key.replicate));
    NF_ASSIGN_OR_RETURN(bool found, find.step());
    if (found) {
      const int64_t id = find.int64(0);
      find.reset();
      NF_RETURN_IF_ERROR(store_internal::detach_chunked_outcomes(db_, path_, id).status());
    }
  }
  NF_ASSIGN_OR_RETURN(Stmt del, Stmt::prepare(db_,
      "DELETE FROM draws WHERE subject = ?1 AND item = ?2 AND condition = ?3 AND config = ?4 AND replicate = ?5",
      "replace_draw", path_));
  del.bind(1, draw.key.subject).bind(2, draw.key.item).bind(3, draw.key.condition).bind(4, draw.key.config)
      .bind(5, static_cast<int64_t>(draw.key.replicate));
  NF_RETURN_IF_ERROR(del.run());  // outcomes go with it (ON DELETE CASCADE)
  NF_ASSIGN_OR_RETURN(DrawWriter w, DrawWriter::prepare(db_, path_));
  NF_RETURN_IF_ERROR(w.write(db_, path_, draw, now_s()));
  return txn.commit();
}

Status SqliteStore::put_draws(const std::vector<Draw>& draws) {
  std::lock_guard lock(mu_);
  WriteTxn txn(db_, "put_draws", path_);
  NF_RETURN_IF_ERROR(txn.begin());
  NF_ASSIGN_OR_RETURN(DrawWriter w, DrawWriter::prepare(db_, path_));
  const int64_t now = now_s();
  for (size_t i = 0; i < draws.size(); ++i) {
    Status s = w.write(db_, path_, draws[i], now);
    if (!s.ok()) return s.with_context(fmt::format("put_draws: draw {} of {}", i + 1, draws.size()));
  }
  return txn.commit();
}

// ---- streaming import ----------------------------------------------------------------

namespace {

// Restores what the import turned off, when destroyed: foreign-key and CHECK enforcement (after
// the import's transaction ended: the foreign_keys pragma is a no-op inside a transaction),
// and, when the import ran with a rollback journal (`rollback_journal`, below), the
// store's WAL mode and synchronous = NORMAL.
class ImportPragmasBack {
 public:
  explicit ImportPragmasBack(sqlite3* db) : db_(db) {}
  ImportPragmasBack(ImportPragmasBack&& o) noexcept
      : rollback_journal(o.rollback_journal), db_(std::exchange(o.db_, nullptr)) {}
  ImportPragmasBack& operator=(ImportPragmasBack&&) = delete;
  ~ImportPragmasBack() {
    if (db_ == nullptr) return;
    sqlite3_exec(db_, "PRAGMA foreign_keys = ON; PRAGMA ignore_check_constraints = OFF", nullptr, nullptr, nullptr);
    // Fails only if another connection opened the store meanwhile; Store::open sets WAL
    // mode again on every read-write open, so the file never stays in rollback mode.
    // synchronous = NORMAL first: the switch is a small rollback-journal transaction of its
    // own (the header's file-format bytes), which NORMAL writes with one fsync fewer than
    // FULL (the journal's second sync); the import itself was committed under FULL before
    // this.
    if (rollback_journal)
      sqlite3_exec(db_, "PRAGMA synchronous = NORMAL; PRAGMA journal_mode = WAL", nullptr, nullptr, nullptr);
  }
  bool rollback_journal = false;

 private:
  sqlite3* db_;
};

// `text` as an SQL string literal.
std::string sql_quote(std::string_view text) {
  std::string out = "'";
  for (char c : text) (out += c) += c == '\'' ? "'" : "";
  return out + "'";
}

// Switches an import into a store without draws from WAL to a rollback journal (issue 14).
// In WAL mode every page the import writes goes to the log first and is copied into the
// file by the checkpoint at the end (each page written twice, read once, and spilled
// pages rewritten); with a rollback journal the pages appended past the file's original
// end are written once, straight to the file, and only pages that existed before are
// journaled. Atomicity is SQLite's rollback-journal commit (synchronous = FULL while it
// lasts): a crash or SIGKILL leaves a hot journal that the next open rolls back, so the
// store is as before the import. Only when this connection is the store's only one (the
// switch needs an exclusive lock; it is tried without waiting) and the draws table is
// empty (a store just created, where no other process is expected to read concurrently:
// while the import runs, a process opening the store waits for it, where in WAL mode it
// could read). Returns whether the switch was made.
bool use_rollback_journal(sqlite3* db) {
  sqlite3_stmt* st = nullptr;
  bool empty = false;
  if (sqlite3_prepare_v2(db, "SELECT NOT EXISTS (SELECT 1 FROM draws)", -1, &st, nullptr) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    empty = sqlite3_column_int(st, 0) == 1;
  sqlite3_finalize(st);
  if (!empty) return false;
  sqlite3_busy_timeout(db, 0);
  st = nullptr;
  bool switched = false;
  if (sqlite3_prepare_v2(db, "PRAGMA journal_mode = DELETE", -1, &st, nullptr) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW) {
    const unsigned char* mode = sqlite3_column_text(st, 0);
    switched = mode != nullptr && std::string_view(reinterpret_cast<const char*>(mode)) == "delete";
  }
  sqlite3_finalize(st);
  sqlite3_busy_timeout(db, 10000);  // as Store::open sets it
  if (switched && sqlite3_exec(db, "PRAGMA synchronous = FULL", nullptr, nullptr, nullptr) != SQLITE_OK) {
    sqlite3_exec(db, "PRAGMA journal_mode = WAL", nullptr, nullptr, nullptr);
    return false;
  }
  return switched;
}

// Starts the kernel's write-back of the store file's dirty pages every few milliseconds
// while an import in rollback-journal mode runs (issue 14). SQLite writes the pages it
// spills from its cache into the page cache with pwrite; without this, all ~20 MB of a
// 1M-value import go to the disk only in the commit's fdatasync, which the import then
// waits for (45 ms measured on the development VM, ~10 ms with this). Started here, the
// write-back overlaps the parsing and the inserts. sync_file_range(SYNC_FILE_RANGE_WRITE)
// only queues the writes (no wait, no durability promise: the commit's fdatasync still
// gives that), from a thread of its own so the writing thread never waits for it.
//
// It uses the descriptor SQLite itself holds for the file, found through /proc/self/fd
// and fstat (same device and inode), and never opens or closes one of its own: closing
// any descriptor of a file drops every POSIX advisory lock this process holds on it,
// SQLite's included (the reason SQLite's unix VFS defers its own closes). Linux only
// (elsewhere a no-op); if the descriptor is not found, the import runs without it.
class WriteBehind {
 public:
  static constexpr std::chrono::milliseconds kInterval{10};

  explicit WriteBehind(const std::string& path) {
#ifdef __linux__
    const int fd = descriptor_of(path);
    if (fd < 0) return;
    try {
      thread_ = std::thread([this, fd] {
        std::unique_lock lock(mu_);
        while (!cv_.wait_for(lock, kInterval, [this] { return stop_; }))
          ::sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);  // advisory: errors ignored
      });
    } catch (const std::system_error&) {  // no thread to spare: the import runs without it
    }
#else
    (void)path;
#endif
  }
  ~WriteBehind() { stop(); }
  WriteBehind(const WriteBehind&) = delete;
  WriteBehind& operator=(const WriteBehind&) = delete;

  // Ends the thread (idempotent).
  void stop() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
#ifdef __linux__
  // A descriptor this process holds open on the regular file `path` (SQLite's), or -1.
  // Reads /proc/self/fd (a directory) and fstat()s its entries: no descriptor of the file
  // is opened or closed.
  static int descriptor_of(const std::string& path) {
    struct stat want {};
    if (::stat(path.c_str(), &want) != 0) return -1;
    DIR* dir = ::opendir("/proc/self/fd");
    if (dir == nullptr) return -1;
    int found = -1;
    const int own = ::dirfd(dir);
    while (const dirent* e = ::readdir(dir)) {
      int fd = -1;
      const char* end = e->d_name + std::strlen(e->d_name);
      if (std::from_chars(e->d_name, end, fd).ptr != end || fd < 0 || fd == own) continue;
      struct stat st {};
      if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_dev == want.st_dev && st.st_ino == want.st_ino) {
        found = fd;
        break;
      }
    }
    ::closedir(dir);
    return found;
  }
#endif

  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace

// Foreign keys are off for the import's transaction (issue 14): enforcing them costs a
// seek into draws per outcome row (0.2 s CPU per 1M values, measured with the sqlite3
// shell), and every outcome the import writes belongs to the draw it has just inserted or
// found in the same transaction, so the constraint holds by construction. The one action
// the constraints would take, when an api_error draw stored before is replaced, is done
// explicitly (its outcomes deleted, its judgments' draw_id set NULL), as ON DELETE CASCADE
// / SET NULL would. CHECK constraints are not evaluated either: the draws table's
// `status IN ('ok', 'parse_error', 'api_error', 'refused')` builds a temporary B-tree for
// the list on every insert (EXPLAIN: OpenEphemeral; about 8% of the import's CPU in the
// profile), and the import writes only status 'ok', cached 0 and replicates it checked to
// be >= 0 (the outcomes and items tables have no CHECK). pragmas_back is declared before txn, so it
// runs after the rollback or commit.
struct Store::BulkImport::Impl {
  std::unique_lock<std::mutex> lock;
  sqlite3* db;
  const std::string& path;
  ImportPragmasBack pragmas_back;
  WriteTxn txn;
  DrawWriter writer;
  Stmt outcome, item, drop_outcomes, unlink_judgments;
  // INSERT of a new imported draw, ON CONFLICT DO NOTHING: for new draws (the usual case)
  // the key lookup is the insert's own unique-index probe; the constant columns are SQL
  // literals or bound once-serialised strings, and the key strings are bound without a copy.
  std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> new_draw{nullptr, sqlite3_finalize};
  int64_t base_id = 0;  // draws with id <= base_id were stored before this import
  int64_t now = 0;
  DrawKey last_key;
  int64_t last_id = -1;
  // Outcomes of the draw last_id while it is new in this import: checked for duplicate names
  // in memory and appended to `chunk` (below) when the draw changes (schema v4, issue 14).
  bool buffering = false;
  std::vector<Outcome> pending;
  size_t pending_size = 0;
  // The chunk being filled with the new draws' outcomes (schema v4, store/outcome_chunks.h):
  // written as one outcome_chunks row once it holds kChunkValues values (at a draw boundary)
  // and at commit. With `pending`, all the import holds in memory besides the item map.
  store_internal::OutcomeChunk chunk;
  store_internal::ChunkWriter chunk_writer{db, path};
  // The constant columns of an imported draw (as DrawWriter::write binds them for a Draw
  // with status ok and extra {"imported": true}).
  std::string request_json, extra_json;
  // New draws queued for one multi-row INSERT (issue 14): one statement per kBatch draws
  // keeps SQLite's cursors open from row to row, so the rowid table and both indexes are
  // appended to without a seek from the root per draw (the per-draw INSERT was about half
  // of the import's instructions, callgrind). Only draws certainly new are queued, so a
  // queued row never has a problem found later than its own add_outcome call: the store
  // held no draw when the import began (`batching`), and the draw's key is greater than
  // every key this import wrote or queued before (`max_key`; files written draw by draw in
  // key order, as `export` writes them, queue every draw). Any other draw
  // goes the per-row way (add_now) after the queue is written.
  static constexpr size_t kBatch = 256;
  struct Queued {
    DrawKey key;
    std::string cluster;
    size_t begin = 0, end = 0;  // its outcomes: qout[begin, end)
  };
  std::vector<Queued> queue;
  size_t nqueue = 0;
  std::vector<Outcome> qout;
  size_t nqout = 0;
  bool batching = false;
  bool any_key = false;  // a draw was queued (after_max)
  DrawKey max_key;
  std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> batch_insert{nullptr, sqlite3_finalize};
  // Items queued by put_item, upserted kItemBatch per multi-row statement (one statement
  // step per item was ~2% of the import's writing thread at 10,000 items), the rest one
  // by one at commit; in put_item order, so rowids are as with one upsert per item.
  static constexpr size_t kItemBatch = 256;
  std::vector<std::pair<std::string, std::string>> items;  // (item, cluster)
  size_t nitems = 0;
  std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> item_batch{nullptr, sqlite3_finalize};
  // Started when the import runs with a rollback journal (pages go straight to the file);
  // last member, so it stops first.
  std::unique_ptr<WriteBehind> write_behind;
  Impl(std::unique_lock<std::mutex> l, sqlite3* d, const std::string& p, ImportPragmasBack back, DrawWriter w,
       Stmt o, Stmt i, Stmt drop, Stmt unlink)
      : lock(std::move(l)), db(d), path(p), pragmas_back(std::move(back)), txn(d, "import", p), writer(std::move(w)),
        outcome(std::move(o)), item(std::move(i)), drop_outcomes(std::move(drop)), unlink_judgments(std::move(unlink)) {}

  // Inserts key as a new imported draw; false (nothing written) if the key is stored.
  Result<bool> insert_new_draw(const DrawKey& key, const std::string& cluster) {
    sqlite3_stmt* st = new_draw.get();
    auto text = [&](int i, const std::string& v) {
      return sqlite3_bind_text(st, i, v.data(), static_cast<int>(v.size()), SQLITE_STATIC);
    };
    int rc = text(1, key.subject);
    if (rc == SQLITE_OK) rc = text(2, key.item);
    if (rc == SQLITE_OK) rc = text(3, key.condition);
    if (rc == SQLITE_OK) rc = text(4, key.config);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(st, 5, key.replicate);
    if (rc == SQLITE_OK) rc = text(6, cluster);
    if (rc == SQLITE_OK) rc = text(7, request_json);
    if (rc == SQLITE_OK) rc = text(8, extra_json);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(st, 9, now);
    if (rc == SQLITE_OK) {
      rc = sqlite3_step(st);
      if (rc == SQLITE_DONE) rc = SQLITE_OK;
    }
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);  // the bound strings are the caller's
    if (rc != SQLITE_OK) return sqlite_status(db, rc, "import: insert draw", path);
    return sqlite3_changes(db) == 1;
  }

  // Moves the buffered outcomes of the new draw last_id into the chunk, writing the chunk
  // when it is full (schema v4: imported draws' outcomes are chunked, not rows).
  Status flush() {
    if (pending_size == 0) return Status::Ok();
    chunk.append_draw(last_id, pending.data(), pending_size);
    pending_size = 0;
    if (chunk.size() >= store_internal::kChunkValues) return write_chunk();
    return Status::Ok();
  }

  Status write_chunk() {
    if (!chunk.empty()) NF_RETURN_IF_ERROR(chunk_writer.write(chunk));
    chunk.clear();
    return Status::Ok();
  }

  Status add_now(const DrawKey& key, const std::string& cluster, const Outcome& o, bool* duplicate, int64_t* draws);

  // Upserts the queued items: a full batch with one statement, fewer one by one.
  Status flush_items() {
    if (nitems == kItemBatch) {
      sqlite3_stmt* st = item_batch.get();
      int rc = SQLITE_OK;
      for (size_t i = 0; i < kItemBatch && rc == SQLITE_OK; ++i) {
        const int p = static_cast<int>(2 * i);
        const std::string& id = items[i].first;
        const std::string& cl = items[i].second;
        rc = sqlite3_bind_text(st, p + 1, id.data(), static_cast<int>(id.size()), SQLITE_STATIC);
        if (rc == SQLITE_OK) rc = sqlite3_bind_text(st, p + 2, cl.data(), static_cast<int>(cl.size()), SQLITE_STATIC);
      }
      if (rc == SQLITE_OK) {
        rc = sqlite3_step(st);
        if (rc == SQLITE_DONE) rc = SQLITE_OK;
      }
      sqlite3_reset(st);
      sqlite3_clear_bindings(st);  // the bound strings are the queue's
      if (rc != SQLITE_OK) return sqlite_status(db, rc, "import: items", path);
    } else {
      for (size_t i = 0; i < nitems; ++i) {
        item.reset();
        item.bind(1, items[i].first).bind(2, items[i].second).bind(3, item_data());
        NF_RETURN_IF_ERROR(item.run());
      }
    }
    nitems = 0;
    return Status::Ok();
  }
  // The data of an imported item.
  static const std::string& item_data() {
    static const std::string kData = dump_json(json{{"imported", true}});
    return kData;
  }

  // Whether `k` comes after the greatest key queued so far in (subject, item, condition,
  // config, replicate) order: the last queued draw's while the queue holds draws (keys
  // are queued in increasing order), else max_key (set when the queue is written).
  bool after_max(const DrawKey& k) const {
    if (!any_key) return true;
    const DrawKey& max = nqueue > 0 ? queue[nqueue - 1].key : max_key;
    if (const int c = k.subject.compare(max.subject)) return c > 0;
    if (const int c = k.item.compare(max.item)) return c > 0;
    if (const int c = k.condition.compare(max.condition)) return c > 0;
    if (const int c = k.config.compare(max.config)) return c > 0;
    return k.replicate > max.replicate;
  }
  // Short strings compared inline (std::string's == is an out-of-line call here, 7% of
  // the import's instructions at 5 per row).
  static bool same(const std::string& a, const std::string& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (a[i] != b[i]) return false;
    return true;
  }
  // to = from, unless it already is: a reused queue slot usually holds the same subject,
  // condition, config and outcome name as the one it gets (a compare is cheaper than an
  // assign).
  static void assign(std::string& to, const std::string& from) {
    if (!same(to, from)) to = from;
  }
  // Queues new draw `key` (its outcomes follow with push).
  void open_draw(const DrawKey& key, const std::string& cluster) {
    if (nqueue == queue.size()) queue.emplace_back();
    Queued& q = queue[nqueue++];
    assign(q.key.subject, key.subject);
    assign(q.key.item, key.item);
    assign(q.key.condition, key.condition);
    assign(q.key.config, key.config);
    q.key.replicate = key.replicate;
    assign(q.cluster, cluster);
    q.begin = q.end = nqout;
    any_key = true;
  }
  // Whether the last queued draw has an outcome named `name`.
  bool queued_name(const std::string& name) const {
    const Queued& q = queue[nqueue - 1];
    for (size_t j = q.begin; j < q.end; ++j)
      if (same(qout[j].name, name)) return true;
    return false;
  }
  void push(const Outcome& o) {
    if (nqout == qout.size()) qout.emplace_back();
    Outcome& p = qout[nqout++];
    assign(p.name, o.name);
    p.value = o.value;
    assign(p.label, o.label);
    queue[nqueue - 1].end = nqout;
  }
  // Queued draw i got id `id`: its outcomes into the chunk.
  Status chunk_queued(size_t i, int64_t id) {
    const Queued& q = queue[i];
    chunk.append_draw(id, qout.data() + q.begin, q.end - q.begin);
    if (chunk.size() >= store_internal::kChunkValues) return write_chunk();
    return Status::Ok();
  }
  // Writes the queued draws (a full group with one INSERT, fewer one by one) and their
  // outcomes into the chunk.
  Status flush_queue(int64_t* draws) {
    if (nqueue == 0) return Status::Ok();
    auto stored_already = [&](const DrawKey& k) {  // excluded by the queueing rule above
      return Internal(fmt::format("store {}: import {}: a queued new draw is stored already", path, k.to_string()));
    };
    if (nqueue < kBatch) {
      for (size_t i = 0; i < nqueue; ++i) {
        NF_ASSIGN_OR_RETURN(const bool inserted, insert_new_draw(queue[i].key, queue[i].cluster));
        if (!inserted) return stored_already(queue[i].key);
        NF_RETURN_IF_ERROR(chunk_queued(i, sqlite3_last_insert_rowid(db)));
      }
    } else {
      sqlite3_stmt* st = batch_insert.get();
      int rc = SQLITE_OK;
      auto text = [&](int i, const std::string& v) {
        if (rc == SQLITE_OK) rc = sqlite3_bind_text(st, i, v.data(), static_cast<int>(v.size()), SQLITE_STATIC);
      };
      for (size_t i = 0; i < kBatch; ++i) {
        const Queued& q = queue[i];
        const int p = static_cast<int>(6 * i);
        text(p + 1, q.key.subject);
        text(p + 2, q.key.item);
        text(p + 3, q.key.condition);
        text(p + 4, q.key.config);
        if (rc == SQLITE_OK) rc = sqlite3_bind_int64(st, p + 5, q.key.replicate);
        text(p + 6, q.cluster);
      }
      if (rc == SQLITE_OK) {
        rc = sqlite3_step(st);
        if (rc == SQLITE_DONE) rc = SQLITE_OK;
      }
      const int changes = sqlite3_changes(db);
      const int64_t last = sqlite3_last_insert_rowid(db);
      sqlite3_reset(st);
      sqlite3_clear_bindings(st);  // the bound strings are the queue's
      if (rc != SQLITE_OK) return sqlite_status(db, rc, "import: insert draws", path);
      if (static_cast<size_t>(changes) != kBatch) return stored_already(queue[0].key);
      // A new row's rowid is max(rowid) + 1 (a table without AUTOINCREMENT), rows in
      // VALUES order: draw i got last - (kBatch - 1) + i.
      for (size_t i = 0; i < kBatch; ++i)
        NF_RETURN_IF_ERROR(chunk_queued(i, last - static_cast<int64_t>(kBatch - 1 - i)));
    }
    *draws += static_cast<int64_t>(nqueue);
    max_key = queue[nqueue - 1].key;  // the greatest queued (after_max)
    nqueue = 0;
    nqout = 0;
    return Status::Ok();
  }

  // A draw of this import met again on a later, non-adjacent row: its outcomes so far move
  // from its chunk (in memory or written) to `outcomes` rows (ord 0, 1, ...), where the
  // primary key finds a repeated name as for any row-form draw.
  Status detach(int64_t id) {
    std::optional<std::vector<Outcome>> outs;
    if (const std::optional<size_t> i = chunk.empty() ? std::nullopt : chunk.find(id)) {
      outs = chunk.outcomes_of(*i);
      chunk.remove_draw(*i);
    } else {
      NF_ASSIGN_OR_RETURN(outs, store_internal::detach_chunked_outcomes(db, path, id));
    }
    if (!outs) return Status::Ok();
    for (size_t k = 0; k < outs->size(); ++k) {
      const Outcome& o = (*outs)[k];
      writer.outcome.reset();
      writer.outcome.bind(1, id).bind(2, o.name).bind(3, static_cast<int64_t>(k)).bind(4, o.value).bind(5, o.label);
      NF_RETURN_IF_ERROR(writer.outcome.run());
    }
    return Status::Ok();
  }
};

Store::BulkImport::BulkImport(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Store::BulkImport::~BulkImport() = default;  // WriteTxn rolls back if not committed

Result<std::unique_ptr<Store::BulkImport>> SqliteStore::begin_bulk_import() {
  std::unique_lock lock(mu_);
  // Before any statement is prepared (the pragma expires prepared statements) and outside a
  // transaction (where it is a no-op); back on when the import ends (Impl::pragmas_back).
  NF_RETURN_IF_ERROR(exec(db_, "PRAGMA foreign_keys = OFF", "import: foreign keys", path_));
  ImportPragmasBack pragmas_back(db_);
  NF_RETURN_IF_ERROR(exec(db_, "PRAGMA ignore_check_constraints = ON", "import: check constraints", path_));
  pragmas_back.rollback_journal = use_rollback_journal(db_);
  NF_ASSIGN_OR_RETURN(DrawWriter w, DrawWriter::prepare(db_, path_));
  NF_ASSIGN_OR_RETURN(Stmt outcome, Stmt::prepare(db_,
      "INSERT OR IGNORE INTO outcomes(draw_id, name, ord, value, label) "
      "VALUES(?1, ?2, (SELECT count(*) FROM outcomes WHERE draw_id = ?1), ?3, ?4)", "import: outcome",
      path_));
  NF_ASSIGN_OR_RETURN(Stmt item, Stmt::prepare(db_,
      "INSERT INTO items(item, cluster, data) VALUES(?1, ?2, ?3) ON CONFLICT(item) DO UPDATE "
      "SET cluster = excluded.cluster, data = excluded.data", "import: item", path_));
  NF_ASSIGN_OR_RETURN(Stmt drop, Stmt::prepare(db_, "DELETE FROM outcomes WHERE draw_id = ?1",
                                                "import: replace api_error: outcomes", path_));
  NF_ASSIGN_OR_RETURN(Stmt unlink, Stmt::prepare(db_, "UPDATE judgments SET draw_id = NULL WHERE draw_id = ?1",
                                                  "import: replace api_error: judgments", path_));
  auto impl = std::make_unique<BulkImport::Impl>(std::move(lock), db_, path_, std::move(pragmas_back), std::move(w),
                                                 std::move(outcome), std::move(item), std::move(drop),
                                                 std::move(unlink));
  {
    // The columns DrawWriter::write binds for a Draw with status ok and extra {"imported": true}.
    const std::string sql = fmt::format(
        "INSERT INTO draws({}) VALUES(?1, ?2, ?3, ?4, ?5, ?6, 'ok', ?7, '', '', '', 0.0, NULL, NULL, '', '', '', 0, "
        "1, ?8, ?9) ON CONFLICT(subject, item, condition, config, replicate) DO NOTHING", kDrawColumns);
    sqlite3_stmt* st = nullptr;
    const int rc = sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr);
    impl->new_draw.reset(st);
    if (rc != SQLITE_OK) return sqlite_status(db_, rc, "import: insert draw", path_);
  }
  {
    // kBatch rows of the statement above, 6 anonymous parameters each (numbered ones
    // cost SQLite a quadratic lookup when preparing); the constant columns as literals.
    // OR IGNORE, not ON CONFLICT DO NOTHING: with every constraint's conflict resolved by
    // ignoring the row, no row can abort the statement half way, so SQLite keeps no
    // statement journal (with DO NOTHING it copied ~3,000 pages per 1M values into one, a
    // temporary file). No row is ignored: no column is NULL, CHECKs are off for the import,
    // and a queued key is new (flush_queue checks that all kBatch rows were inserted).
    impl->now = now_s();
    const std::string row = fmt::format("(?, ?, ?, ?, ?, ?, 'ok', {}, '', '', '', 0.0, NULL, NULL, '', '', '', 0, 1, {}, {})",
                                        sql_quote(dump_json(json())), sql_quote(dump_json(json{{"imported", true}})),
                                        impl->now);
    std::string values;
    for (size_t i = 0; i < BulkImport::Impl::kBatch; ++i) (values += i == 0 ? "" : ", ") += row;
    const std::string sql = fmt::format(
        "INSERT OR IGNORE INTO draws({}) VALUES {}", kDrawColumns, values);
    sqlite3_stmt* st = nullptr;
    const int rc = sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr);
    impl->batch_insert.reset(st);
    if (rc != SQLITE_OK) return sqlite_status(db_, rc, "import: insert draws", path_);
  }
  {
    // kItemBatch rows of the `item` upsert above (anonymous parameters, data as a literal).
    const std::string row = fmt::format("(?, ?, {})", sql_quote(BulkImport::Impl::item_data()));
    std::string values;
    for (size_t i = 0; i < BulkImport::Impl::kItemBatch; ++i) (values += i == 0 ? "" : ", ") += row;
    const std::string sql = fmt::format(
        "INSERT INTO items(item, cluster, data) VALUES {} ON CONFLICT(item) DO UPDATE "
        "SET cluster = excluded.cluster, data = excluded.data", values);
    sqlite3_stmt* st = nullptr;
    const int rc = sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr);
    impl->item_batch.reset(st);
    if (rc != SQLITE_OK) return sqlite_status(db_, rc, "import: items", path_);
  }
  NF_RETURN_IF_ERROR(impl->txn.begin());
  {
    NF_ASSIGN_OR_RETURN(Stmt q, Stmt::prepare(db_, "SELECT coalesce(max(id), 0) FROM draws", "import", path_));
    NF_ASSIGN_OR_RETURN(bool row, q.step());
    impl->base_id = row ? q.int64(0) : 0;
  }
  impl->batching = impl->base_id == 0;  // no draw stored (Impl::queue)
  if (impl->pragmas_back.rollback_journal) impl->write_behind = std::make_unique<WriteBehind>(path_);
  impl->request_json = dump_json(json());
  impl->extra_json = dump_json(json{{"imported", true}});
  return std::unique_ptr<BulkImport>(new BulkImport(std::move(impl)));
}

// The per-row path (all the import did before new draws were queued; see Impl::queue).
Status Store::BulkImport::Impl::add_now(const DrawKey& key, const std::string& cluster, const Outcome& o,
                                        bool* duplicate, int64_t* draws) {
  Impl& m = *this;
  if (std::isnan(o.value))
    return InvalidArgument(fmt::format("store {}: import {}: outcome '{}' has value NaN", m.path, key.to_string(), o.name));
  if (m.last_id < 0 || key.replicate != m.last_key.replicate || key.item != m.last_key.item ||
      key.subject != m.last_key.subject || key.condition != m.last_key.condition || key.config != m.last_key.config) {
    NF_RETURN_IF_ERROR(m.flush());
    if (key.replicate < 0)
      return InvalidArgument(fmt::format("store {}: put_draw {}: replicate must be >= 0", m.path, key.to_string()));
    NF_ASSIGN_OR_RETURN(const bool inserted, m.insert_new_draw(key, cluster));
    Stmt& find = m.writer.find;
    bool exists = false;
    int64_t id = -1;
    std::string status;
    if (!inserted) {
      find.reset();
      find.bind(1, key.subject).bind(2, key.item).bind(3, key.condition).bind(4, key.config).bind(5, key.replicate);
      NF_ASSIGN_OR_RETURN(exists, find.step());
      if (!exists) return Internal(fmt::format("store {}: import {}: insert skipped but no such draw", m.path,
                                               key.to_string()));
      id = find.int64(0);
      status = find.text(1);
      find.reset();
    }
    if (inserted) {
      m.last_id = sqlite3_last_insert_rowid(m.db);
      m.buffering = true;
      ++*draws;
    } else if (id > m.base_id) {
      if (status != draw_status_name(DrawStatus::kOk))  // add_draw stored it, without outcomes
        return FailedPrecondition(fmt::format("store {}: import {}: an outcome of a draw this import stored with "
                                              "status {}",
                                              m.path, key.to_string(), status));
      m.last_id = id;  // a draw of this import, seen on an earlier row: its outcomes become rows
      m.buffering = false;
      NF_RETURN_IF_ERROR(m.detach(id));
    } else {
      if (status == draw_status_name(DrawStatus::kApiError)) {
        // What ON DELETE CASCADE / SET NULL do when writer.write deletes the draw (foreign
        // keys are off during the import).
        m.drop_outcomes.reset();
        m.drop_outcomes.bind(1, id);
        NF_RETURN_IF_ERROR(m.drop_outcomes.run());
        m.unlink_judgments.reset();
        m.unlink_judgments.bind(1, id);
        NF_RETURN_IF_ERROR(m.unlink_judgments.run());
      }
      Draw d;
      d.key = key;
      d.cluster = cluster;
      d.status = DrawStatus::kOk;
      d.extra = {{"imported", true}};
      // Refuses a draw stored before with status ok etc.; replaces an api_error one.
      NF_RETURN_IF_ERROR(m.writer.write(m.db, m.path, d, m.now));
      m.last_id = sqlite3_last_insert_rowid(m.db);
      m.buffering = true;
      ++*draws;
    }
    m.last_key = key;
  }
  if (m.buffering) {
    for (size_t j = 0; j < m.pending_size; ++j)
      if (m.pending[j].name == o.name) {
        *duplicate = true;
        return Status::Ok();
      }
    if (m.pending_size == m.pending.size()) m.pending.emplace_back();
    Outcome& p = m.pending[m.pending_size++];
    p.name = o.name;
    p.value = o.value;
    p.label = o.label;
    return Status::Ok();
  }
  m.outcome.reset();
  m.outcome.bind(1, m.last_id).bind(2, o.name).bind(3, o.value).bind(4, o.label);
  NF_RETURN_IF_ERROR(m.outcome.run());
  if (sqlite3_changes(m.db) == 0) *duplicate = true;
  return Status::Ok();
}

Status Store::BulkImport::put_item(const std::string& id, const std::string& cluster) {
  Impl& m = *impl_;
  if (m.nitems == m.items.size()) m.items.emplace_back();
  auto& [item, cl] = m.items[m.nitems++];
  item = id;
  cl = cluster.empty() ? id : cluster;
  if (m.nitems == Impl::kItemBatch) return m.flush_items();
  return Status::Ok();
}

Status Store::BulkImport::add_outcome(const DrawKey& key, const std::string& cluster, const Outcome& o,
                                      bool* duplicate) {
  Impl& m = *impl_;
  *duplicate = false;
  if (m.batching && !std::isnan(o.value)) {
    const Impl::Queued* last = m.nqueue > 0 ? &m.queue[m.nqueue - 1] : nullptr;
    if (last != nullptr && key.replicate == last->key.replicate && Impl::same(key.item, last->key.item) &&
        Impl::same(key.subject, last->key.subject) && Impl::same(key.condition, last->key.condition) &&
        Impl::same(key.config, last->key.config)) {
      if (m.queued_name(o.name)) {
        *duplicate = true;
        return Status::Ok();
      }
      m.push(o);
      return Status::Ok();
    }
    if (key.replicate >= 0 && m.after_max(key)) {
      if (m.nqueue == Impl::kBatch) NF_RETURN_IF_ERROR(m.flush_queue(&draws_));
      if (m.last_id >= 0) {  // the per-row path wrote the draw before: its outcomes into the chunk
        NF_RETURN_IF_ERROR(m.flush());
        m.last_id = -1;
      }
      m.open_draw(key, cluster);
      m.push(o);
      return Status::Ok();
    }
  }
  // Not queued (a key out of order, a store that held draws, a problem to report): the
  // queue is written first, so the per-row path sees every draw before this row.
  NF_RETURN_IF_ERROR(m.flush_queue(&draws_));
  return m.add_now(key, cluster, o, duplicate, &draws_);
}

Status Store::BulkImport::add_draw(const DrawKey& key, const std::string& cluster, DrawStatus status,
                                   bool* duplicate) {
  Impl& m = *impl_;
  *duplicate = false;
  if (status == DrawStatus::kOk)
    return InvalidArgument(fmt::format("store {}: import {}: add_draw with status ok (an ok draw is added through "
                                       "its outcomes)",
                                       m.path, key.to_string()));
  if (key.replicate < 0)
    return InvalidArgument(fmt::format("store {}: put_draw {}: replicate must be >= 0", m.path, key.to_string()));
  // The per-row way: the queued draws and the open draw's outcomes are written first, so
  // the lookup below sees every draw of this import; the next outcome row looks its draw
  // up again (last_id -1).
  NF_RETURN_IF_ERROR(m.flush_queue(&draws_));
  NF_RETURN_IF_ERROR(m.flush());
  m.last_id = -1;
  Stmt& find = m.writer.find;
  find.reset();
  find.bind(1, key.subject).bind(2, key.item).bind(3, key.condition).bind(4, key.config).bind(5, key.replicate);
  NF_ASSIGN_OR_RETURN(const bool exists, find.step());
  if (exists) {
    const int64_t id = find.int64(0);
    const std::string stored = find.text(1);
    find.reset();
    if (id > m.base_id) {  // a draw of this import
      if (stored == draw_status_name(status)) {
        *duplicate = true;
        return Status::Ok();
      }
      return FailedPrecondition(fmt::format("store {}: import {}: status {}, but this import stored the draw with "
                                            "status {}",
                                            m.path, key.to_string(), draw_status_name(status), stored));
    }
    if (stored == draw_status_name(DrawStatus::kApiError)) {  // replaced below, as in add_now
      m.drop_outcomes.reset();
      m.drop_outcomes.bind(1, id);
      NF_RETURN_IF_ERROR(m.drop_outcomes.run());
      m.unlink_judgments.reset();
      m.unlink_judgments.bind(1, id);
      NF_RETURN_IF_ERROR(m.unlink_judgments.run());
    }
  }
  find.reset();
  Draw d;
  d.key = key;
  d.cluster = cluster;
  d.status = status;
  d.extra = {{"imported", true}};
  // Refuses a draw stored before with a status other than api_error; replaces an api_error one.
  NF_RETURN_IF_ERROR(m.writer.write(m.db, m.path, d, m.now));
  ++draws_;
  // A later draw is queued only past every key written (Impl::after_max).
  if (m.after_max(key)) {
    m.max_key = key;
    m.any_key = true;
  }
  return Status::Ok();
}

Status Store::BulkImport::commit() {
  NF_RETURN_IF_ERROR(impl_->flush_queue(&draws_));
  NF_RETURN_IF_ERROR(impl_->flush());
  NF_RETURN_IF_ERROR(impl_->write_chunk());
  NF_RETURN_IF_ERROR(impl_->flush_items());
  if (impl_->write_behind) impl_->write_behind->stop();
  return impl_->txn.commit();
}

Result<std::optional<json>> SqliteStore::cache_get(const std::string& key) {
  std::lock_guard lock(mu_);
  if (!hot_->cache_get) {
    NF_ASSIGN_OR_RETURN(Stmt q, Stmt::prepare(db_,
        "SELECT response FROM response_cache WHERE key = ?1", "cache_get", path_));
    hot_->cache_get.emplace(std::move(q));
  }
  Stmt& q = *hot_->cache_get;
  q.reset();
  q.bind(1, key);
  NF_ASSIGN_OR_RETURN(bool row, q.step());
  if (!row) return std::optional<json>();
  const std::string text = q.text(0);
  q.reset();  // end the read now, not at the next call
  NF_ASSIGN_OR_RETURN(json j, parse_json(text, "cached response", path_));
  return std::optional<json>(std::move(j));
}

Status SqliteStore::cache_put(const std::string& key, const json& response) {
  std::lock_guard lock(mu_);
  return cache_put_locked(key, response, now_s());
}

Status SqliteStore::cache_put_locked(const std::string& key, const json& response, int64_t now) {
  if (!hot_->cache_put) {
    NF_ASSIGN_OR_RETURN(Stmt q, Stmt::prepare(db_,
        "INSERT INTO response_cache(key, response, created_at) VALUES(?1, ?2, ?3) "
        "ON CONFLICT(key) DO UPDATE SET response = excluded.response, created_at = excluded.created_at",
        "cache_put", path_));
    hot_->cache_put.emplace(std::move(q));
  }
  Stmt& q = *hot_->cache_put;
  q.reset();
  q.bind(1, key).bind(2, dump_json(response)).bind(3, now);
  Status st = q.run();
  q.reset();
  return st;
}

// Store::outcome_rows is in outcome_frame.cc (built on the integer-coded scan).

Result<std::vector<StatusCount>> SqliteStore::status_counts() {
  std::lock_guard lock(mu_);
  NF_ASSIGN_OR_RETURN(Stmt q, Stmt::prepare(db_,
      "SELECT subject, config, condition, status, count(*) FROM draws "
      "GROUP BY subject, config, condition, status ORDER BY subject, config, condition, status",
      "status_counts", path_));
  std::vector<StatusCount> out;
  for (;;) {
    NF_ASSIGN_OR_RETURN(bool row, q.step());
    if (!row) break;
    out.push_back({q.text(0), q.text(1), q.text(2), q.text(3), q.int64(4)});
  }
  return out;
}

Status SqliteStore::for_each_answer(
    const std::function<void(const std::string&, const std::string&, const std::string&, const std::string&)>& fn) {
  std::lock_guard lock(mu_);
  NF_ASSIGN_OR_RETURN(Stmt q, Stmt::prepare(db_,
      "SELECT subject, config, status, content FROM draws WHERE status != 'api_error' ORDER BY id",
      "for_each_answer", path_));
  for (;;) {
    NF_ASSIGN_OR_RETURN(bool row, q.step());
    if (!row) break;
    fn(q.text(0), q.text(1), q.text(2), q.text(3));
  }
  return Status::Ok();
}

Result<std::vector<StatusCount>> Store::status_counts_and_answers(
    const std::function<void(std::string_view, std::string_view, std::string_view, std::string_view)>& fn) {
  NF_ASSIGN_OR_RETURN(auto counts, status_counts());
  NF_RETURN_IF_ERROR(for_each_answer(
      [&](const std::string& subject, const std::string& config, const std::string& status,
          const std::string& content) { fn(subject, config, status, content); }));
  return counts;
}

Result<std::vector<StatusCount>> SqliteStore::status_counts_and_answers(
    const std::function<void(std::string_view, std::string_view, std::string_view, std::string_view)>& fn) {
  std::lock_guard lock(mu_);
  map_for_scans();
  // One scan of the table in id order (status_counts' GROUP BY sorted every draw into a
  // temporary B-tree, and for_each_answer read the table a second time; issue 14). Counts
  // go to the last key's counter while the key repeats (a store's draws come cell by cell).
  NF_ASSIGN_OR_RETURN(Stmt q, Stmt::prepare(db_, "SELECT subject, config, condition, status, content FROM draws ORDER BY id",
                                            "status_counts_and_answers", path_));
  store_internal::StatusCounter counts;
  for (;;) {
    NF_ASSIGN_OR_RETURN(bool row, q.step());
    if (!row) break;
    const std::string_view subject = q.view(0), config = q.view(1), condition = q.view(2), status = q.view(3);
    counts.add(subject, config, condition, status);
    if (status != "api_error") fn(subject, config, status, q.view(4));
  }
  return counts.counts();
}

Result<Draw> SqliteStore::get_draw(const DrawKey& key) {
  std::lock_guard lock(mu_);
  NF_ASSIGN_OR_RETURN(Stmt q, Stmt::prepare(db_,
      fmt::format("SELECT id, {} FROM draws WHERE subject = ?1 AND item = ?2 AND condition = ?3 "
                  "AND config = ?4 AND replicate = ?5", kDrawColumns),
      "get_draw", path_));
  q.bind(1, key.subject).bind(2, key.item).bind(3, key.condition).bind(4, key.config).bind(5, key.replicate);
  NF_ASSIGN_OR_RETURN(bool row, q.step());
  if (!row) return NotFound(fmt::format("store {}: no draw {}", path_, key.to_string()));
  const int64_t id = q.int64(0);
  Draw d;
  d.key = DrawKey{q.text(1), q.text(2), q.text(3), q.text(4), static_cast<int>(q.int64(5))};
  d.cluster = q.text(6);
  NF_ASSIGN_OR_RETURN(d.status, parse_draw_status(q.text(7)));
  NF_ASSIGN_OR_RETURN(d.request, parse_json(q.text(8), "draw request", path_));
  d.raw_response = q.text(9);
  d.content = q.text(10);
  d.error = q.text(11);
  d.latency_ms = q.is_null(12) ? std::nan("") : q.dbl(12);
  d.prompt_tokens = q.is_null(13) ? -1 : q.int64(13);
  d.completion_tokens = q.is_null(14) ? -1 : q.int64(14);
  d.finish_reason = q.text(15);
  d.served_model = q.text(16);
  d.system_fingerprint = q.text(17);
  d.cached = q.int64(18) != 0;
  d.attempts = static_cast<int>(q.int64(19));
  NF_ASSIGN_OR_RETURN(d.extra, parse_json(q.text(20), "draw extra", path_));

  NF_ASSIGN_OR_RETURN(Stmt o, Stmt::prepare(db_,
      "SELECT name, value, label FROM outcomes WHERE draw_id = ?1 ORDER BY ord", "get_draw: outcomes", path_));
  o.bind(1, id);
  for (;;) {
    NF_ASSIGN_OR_RETURN(bool more, o.step());
    if (!more) break;
    d.outcomes.push_back({o.text(0), o.dbl(1), o.text(2)});
  }
  if (d.outcomes.empty()) {  // an imported draw's outcomes may be chunked (schema v4)
    store_internal::ChunkLookup chunks(db_, path_);
    NF_RETURN_IF_ERROR(chunks.outcomes(id, &d.outcomes).status());
  }
  return d;
}

Result<int64_t> SqliteStore::draw_count() {
  std::lock_guard lock(mu_);
  NF_ASSIGN_OR_RETURN(Stmt q, Stmt::prepare(db_, "SELECT count(*) FROM draws", "draw_count", path_));
  NF_ASSIGN_OR_RETURN(bool row, q.step());
  return row ? q.int64(0) : int64_t{0};
}

Result<int64_t> SqliteStore::count_key(const DrawKey& key) {
  std::lock_guard lock(mu_);
  NF_ASSIGN_OR_RETURN(Stmt q, Stmt::prepare(db_,
      "SELECT count(*) FROM draws WHERE subject = ?1 AND item = ?2 AND condition = ?3 "
      "AND config = ?4 AND replicate = ?5", "count_key", path_));
  q.bind(1, key.subject).bind(2, key.item).bind(3, key.condition).bind(4, key.config).bind(5, key.replicate);
  NF_ASSIGN_OR_RETURN(bool row, q.step());
  return row ? q.int64(0) : int64_t{0};
}

// ---- judgments and human labels (schema v2) -----------------------------------------

using store_internal::check_judgment;
using store_internal::judgment_key;

namespace {

// The judgment insert of put_judgments and replace_judgments: one statement, one binding.
Result<Stmt> prepare_judgment_insert(sqlite3* db, const std::string& path, std::string_view op) {
  return Stmt::prepare(db,
      "INSERT INTO judgments(subject, subject_provider, item, cluster, judge, judge_provider, label, status, "
      "draw_id, raw_response, settings, created_at) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
      op, path);
}

Status insert_judgment(Stmt& insert, const JudgmentRow& r, int64_t now) {
  insert.reset();
  insert.bind(1, r.subject).bind(2, r.subject_provider).bind(3, r.item)
      .bind(4, r.cluster.empty() ? r.item : r.cluster).bind(5, r.judge).bind(6, r.judge_provider);
  if (r.label) insert.bind(7, *r.label); else insert.bind_null(7);
  insert.bind(8, r.status);
  if (r.draw_id) insert.bind(9, *r.draw_id); else insert.bind_null(9);
  insert.bind(10, r.raw_response).bind(11, dump_json(r.settings)).bind(12, r.created_at != 0 ? r.created_at : now);
  return insert.run();
}

}  // namespace

Status SqliteStore::put_judgments(const std::vector<JudgmentRow>& rows) {
  std::lock_guard lock(mu_);
  WriteTxn txn(db_, "put_judgments", path_);
  NF_RETURN_IF_ERROR(txn.begin());
  NF_ASSIGN_OR_RETURN(Stmt find, Stmt::prepare(db_,
      "SELECT id, status FROM judgments WHERE subject = ?1 AND item = ?2 AND judge = ?3 "
      "AND ifnull(draw_id, 0) = ?4", "put_judgments: find", path_));
  NF_ASSIGN_OR_RETURN(Stmt remove, Stmt::prepare(db_, "DELETE FROM judgments WHERE id = ?1",
                                                 "put_judgments: replace api_error", path_));
  NF_ASSIGN_OR_RETURN(Stmt insert, prepare_judgment_insert(db_, path_, "put_judgments: insert"));
  const int64_t now = now_s();
  for (const JudgmentRow& r : rows) {
    NF_RETURN_IF_ERROR(check_judgment(r, path_));
    find.reset();
    find.bind(1, r.subject).bind(2, r.item).bind(3, r.judge).bind(4, r.draw_id.value_or(0));
    NF_ASSIGN_OR_RETURN(bool exists, find.step());
    if (exists) {
      const int64_t id = find.int64(0);
      const std::string status = find.text(1);
      find.reset();
      if (status != "api_error")
        return AlreadyExists(fmt::format("store {}: judgment {} is already stored with status {}", path_,
                                         judgment_key(r), status));
      remove.reset();
      remove.bind(1, id);
      NF_RETURN_IF_ERROR(remove.run());
    }
    find.reset();
    NF_RETURN_IF_ERROR(insert_judgment(insert, r, now));
  }
  return txn.commit();
}

Result<std::vector<JudgmentRow>> SqliteStore::judgments() {
  std::lock_guard lock(mu_);
  NF_ASSIGN_OR_RETURN(Stmt q, Stmt::prepare(db_,
      "SELECT subject, subject_provider, item, cluster, judge, judge_provider, label, status, draw_id, "
      "raw_response, settings, created_at FROM judgments ORDER BY subject, item, judge, id",
      "judgments", path_));
  std::vector<JudgmentRow> out;
  for (;;) {
    NF_ASSIGN_OR_RETURN(bool row, q.step());
    if (!row) break;
    JudgmentRow& r = out.emplace_back();
    r.subject = q.text(0);
    r.subject_provider = q.text(1);
    r.item = q.text(2);
    r.cluster = q.text(3);
    r.judge = q.text(4);
    r.judge_provider = q.text(5);
    if (!q.is_null(6)) r.label = static_cast<int>(q.int64(6));
    r.status = q.text(7);
    if (!q.is_null(8)) r.draw_id = q.int64(8);
    r.raw_response = q.text(9);
    NF_ASSIGN_OR_RETURN(r.settings, parse_json(q.text(10), "judgment settings", path_));
    r.created_at = q.int64(11);
  }
  return out;
}

Result<int64_t> SqliteStore::judgment_count() {
  std::lock_guard lock(mu_);
  NF_ASSIGN_OR_RETURN(Stmt q, Stmt::prepare(db_, "SELECT count(*) FROM judgments", "judgment_count", path_));
  NF_ASSIGN_OR_RETURN(bool row, q.step());
  return row ? q.int64(0) : int64_t{0};
}

Status SqliteStore::put_human_labels(const std::vector<HumanLabelRow>& rows) {
  std::lock_guard lock(mu_);
  WriteTxn txn(db_, "put_human_labels", path_);
  NF_RETURN_IF_ERROR(txn.begin());
  NF_ASSIGN_OR_RETURN(Stmt find, Stmt::prepare(db_,
      "SELECT 1 FROM human_labels WHERE rater = ?1 AND subject = ?2 AND item = ?3", "put_human_labels: find", path_));
  NF_ASSIGN_OR_RETURN(Stmt insert, Stmt::prepare(db_,
      "INSERT INTO human_labels(rater, subject, item, label) VALUES(?1, ?2, ?3, ?4)", "put_human_labels: insert",
      path_));
  for (const HumanLabelRow& r : rows) {
    NF_RETURN_IF_ERROR(store_internal::check_human_label(r, path_));
    find.reset();
    find.bind(1, r.rater).bind(2, r.subject).bind(3, r.item);
    NF_ASSIGN_OR_RETURN(bool exists, find.step());
    find.reset();
    if (exists)
      return AlreadyExists(fmt::format("store {}: human label (rater {}, subject {}, item {}) is already stored",
                                       path_, r.rater, r.subject, r.item));
    insert.reset();
    insert.bind(1, r.rater).bind(2, r.subject).bind(3, r.item).bind(4, r.label);
    NF_RETURN_IF_ERROR(insert.run());
  }
  return txn.commit();
}

Result<std::vector<HumanLabelRow>> SqliteStore::human_labels() {
  std::lock_guard lock(mu_);
  NF_ASSIGN_OR_RETURN(Stmt q, Stmt::prepare(db_,
      "SELECT rater, subject, item, label FROM human_labels ORDER BY rater, subject, item", "human_labels", path_));
  std::vector<HumanLabelRow> out;
  for (;;) {
    NF_ASSIGN_OR_RETURN(bool row, q.step());
    if (!row) break;
    out.push_back({q.text(0), q.text(1), q.text(2), static_cast<int>(q.int64(3))});
  }
  return out;
}

Result<std::vector<ItemRow>> SqliteStore::items() {
  std::lock_guard lock(mu_);
  NF_ASSIGN_OR_RETURN(Stmt q, Stmt::prepare(db_, "SELECT item, cluster, data FROM items ORDER BY item", "items",
                                            path_));
  std::vector<ItemRow> out;
  for (;;) {
    NF_ASSIGN_OR_RETURN(bool row, q.step());
    if (!row) break;
    ItemRow r{q.text(0), q.text(1), {}};
    NF_ASSIGN_OR_RETURN(r.data, parse_json(q.text(2), "item data", path_));
    out.push_back(std::move(r));
  }
  return out;
}

// ---- export -------------------------------------------------------------------------

Status Store::export_jsonl(const std::string& out_path) {
  AtomicOutputFile file(out_path);
  NF_RETURN_IF_ERROR(file.open());
  NF_RETURN_IF_ERROR(export_jsonl(file.out()));
  return file.commit();
}

Status Store::export_csv(const std::string& out_path) {
  AtomicOutputFile file(out_path);
  NF_RETURN_IF_ERROR(file.open());
  NF_RETURN_IF_ERROR(export_csv(file.out()));
  return file.commit();
}

Status SqliteStore::export_jsonl(std::ostream& out) {
  std::lock_guard lock(mu_);
  // One read transaction, so the export is a consistent snapshot even while a runner in
  // another process keeps writing (WAL readers do not block writers).
  NF_RETURN_IF_ERROR(exec(db_, "BEGIN", "export_jsonl", path_));
  struct EndRead {
    sqlite3* db;
    ~EndRead() { sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr); }
  } end_read{db_};
  NF_ASSIGN_OR_RETURN(Stmt q, Stmt::prepare(db_,
      fmt::format("SELECT id, {} FROM draws ORDER BY subject, item, condition, config, replicate", kDrawColumns),
      "export_jsonl", path_));
  NF_ASSIGN_OR_RETURN(Stmt o, Stmt::prepare(db_,
      "SELECT name, value, label FROM outcomes WHERE draw_id = ?1 ORDER BY ord",
      "export_jsonl: outcomes", path_));
  store_internal::ChunkLookup chunks(db_, path_);
  std::vector<Outcome> chunked;
  for (;;) {
    NF_ASSIGN_OR_RETURN(bool row, q.step());
    if (!row) break;
    json j;
    j["subject"] = q.text(1);
    j["item"] = q.text(2);
    j["condition"] = q.text(3);
    j["config"] = q.text(4);
    j["config_axes"] = json::object();
    for (const auto& [axis, value] : config_axes(q.text(4)))
      j["config_axes"][axis] = axis_value_json(value);
    j["replicate"] = q.int64(5);
    j["cluster"] = q.text(6);
    j["status"] = q.text(7);
    NF_ASSIGN_OR_RETURN(j["request"], parse_json(q.text(8), "draw request", path_));
    j["response"] = q.text(9);
    j["content"] = q.text(10);
    j["error"] = q.text(11);
    j["latency_ms"] = q.is_null(12) ? json(nullptr) : json(q.dbl(12));
    j["prompt_tokens"] = q.is_null(13) ? json(nullptr) : json(q.int64(13));
    j["completion_tokens"] = q.is_null(14) ? json(nullptr) : json(q.int64(14));
    j["finish_reason"] = q.text(15);
    j["served_model"] = q.text(16);
    j["system_fingerprint"] = q.text(17);
    j["cached"] = q.int64(18) != 0;
    j["attempts"] = q.int64(19);
    NF_ASSIGN_OR_RETURN(j["extra"], parse_json(q.text(20), "draw extra", path_));
    j["created_at"] = q.int64(21);
    json outs = json::array();
    o.reset();
    o.bind(1, q.int64(0));
    for (;;) {
      NF_ASSIGN_OR_RETURN(bool more, o.step());
      if (!more) break;
      outs.push_back({{"name", o.text(0)}, {"value", o.dbl(1)}, {"label", o.text(2)}});
    }
    if (outs.empty()) {  // chunked outcomes (schema v4)
      chunked.clear();
      NF_RETURN_IF_ERROR(chunks.outcomes(q.int64(0), &chunked).status());
      for (const Outcome& c : chunked) outs.push_back({{"name", c.name}, {"value", c.value}, {"label", c.label}});
    }
    j["outcomes"] = std::move(outs);
    out << dump_json(j) << '\n';
  }
  out.flush();
  if (!out) return DataLoss("export_jsonl: write failed");
  return Status::Ok();
}

Status SqliteStore::export_csv(std::ostream& out) {
  std::lock_guard lock(mu_);
  NF_RETURN_IF_ERROR(exec(db_, "BEGIN", "export_csv", path_));
  struct EndRead {
    sqlite3* db;
    ~EndRead() { sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr); }
  } end_read{db_};
  // The config axes that vary in this store (from the config ids), one numeric column each.
  std::vector<std::string> axes;
  {
    NF_ASSIGN_OR_RETURN(Stmt c, Stmt::prepare(db_, "SELECT DISTINCT config FROM draws ORDER BY config",
                                              "export_csv: configs", path_));
    for (;;) {
      NF_ASSIGN_OR_RETURN(bool row, c.step());
      if (!row) break;
      for (const auto& [axis, value] : config_axes(c.text(0)))
        if (std::find(axes.begin(), axes.end(), axis) == axes.end()) axes.push_back(axis);
    }
  }
  // Draws in key order, each draw's outcomes in written order: its `outcomes` rows, or its
  // values in a chunk (schema v4). Same rows as the v3 join of draws and outcomes.
  NF_ASSIGN_OR_RETURN(Stmt q, Stmt::prepare(db_,
      "SELECT d.subject, d.item, d.cluster, d.condition, d.config, d.replicate, d.status, d.id "
      "FROM draws d ORDER BY d.subject, d.item, d.condition, d.config, d.replicate", "export_csv", path_));
  NF_ASSIGN_OR_RETURN(Stmt o, Stmt::prepare(db_,
      "SELECT name, value, label FROM outcomes WHERE draw_id = ?1 ORDER BY ord", "export_csv: outcomes", path_));
  store_internal::ChunkLookup chunks(db_, path_);
  std::vector<Outcome> outs;
  out << "subject,item,cluster,condition,config,replicate,status,outcome,value,label";
  for (const auto& a : axes) out << ',' << csv_field(a);
  out << '\n';
  for (;;) {
    NF_ASSIGN_OR_RETURN(bool row, q.step());
    if (!row) break;
    outs.clear();
    o.reset();
    o.bind(1, q.int64(7));
    for (;;) {
      NF_ASSIGN_OR_RETURN(bool more, o.step());
      if (!more) break;
      outs.push_back({o.text(0), o.dbl(1), o.text(2)});
    }
    if (outs.empty()) NF_RETURN_IF_ERROR(chunks.outcomes(q.int64(7), &outs).status());
    if (outs.empty() && q.text(6) != draw_status_name(DrawStatus::kOk)) {
      // A draw that is not ok (parse_error, refused, api_error): one row with empty outcome,
      // value and label, so that `import draws` reads its status back. An ok draw without
      // outcomes (a chat study's, scored by judge votes) has no row.
      write_csv_row(out, [&](int c) { return q.text(c); }, [&](int c) { return q.int64(c); },
                    [&](int c) { return q.dbl(c); }, axes, /*no_outcome=*/true);
      continue;
    }
    for (const Outcome& oc : outs) {
      // Columns 0-6 are the draw's, 7-9 the outcome's (name, value, label), as write_csv_row reads them.
      write_csv_row(out, [&](int c) { return c == 7 ? oc.name : c == 9 ? oc.label : q.text(c); },
                    [&](int c) { return q.int64(c); }, [&](int c) { return c == 8 ? oc.value : q.dbl(c); }, axes);
    }
  }
  out.flush();
  if (!out) return DataLoss("export_csv: write failed");
  return Status::Ok();
}

// ---- judging stored draws -------------------------------------------------------------

Result<std::vector<Store::JudgeableDraw>> SqliteStore::ok_draws_for_judging() {
  std::lock_guard lock(mu_);
  NF_ASSIGN_OR_RETURN(Stmt q, Stmt::prepare(db_,
      "SELECT id, subject, item, condition, config, replicate, cluster, request, content FROM draws "
      "WHERE status = 'ok' ORDER BY id", "ok_draws_for_judging", path_));
  std::vector<JudgeableDraw> out;
  for (;;) {
    NF_ASSIGN_OR_RETURN(bool row, q.step());
    if (!row) break;
    JudgeableDraw d;
    d.id = q.int64(0);
    d.key = DrawKey{q.text(1), q.text(2), q.text(3), q.text(4), static_cast<int>(q.int64(5))};
    d.cluster = q.text(6);
    NF_ASSIGN_OR_RETURN(d.request, parse_json(q.text(7), "draw request", path_));
    d.content = q.text(8);
    out.push_back(std::move(d));
  }
  return out;
}

Result<std::map<std::pair<int64_t, std::string>, std::string>> SqliteStore::judgment_status_by_draw() {
  std::lock_guard lock(mu_);
  NF_ASSIGN_OR_RETURN(Stmt q, Stmt::prepare(db_,
      "SELECT draw_id, judge, status FROM judgments WHERE draw_id IS NOT NULL", "judgment_status_by_draw", path_));
  std::map<std::pair<int64_t, std::string>, std::string> out;
  for (;;) {
    NF_ASSIGN_OR_RETURN(bool row, q.step());
    if (!row) break;
    out[{q.int64(0), q.text(1)}] = q.text(2);
  }
  return out;
}

Result<std::map<std::string, json>> SqliteStore::subject_specs() {
  std::lock_guard lock(mu_);
  NF_ASSIGN_OR_RETURN(Stmt q, Stmt::prepare(db_, "SELECT subject, spec FROM subjects ORDER BY subject",
                                            "subject_specs", path_));
  std::map<std::string, json> out;
  for (;;) {
    NF_ASSIGN_OR_RETURN(bool row, q.step());
    if (!row) break;
    NF_ASSIGN_OR_RETURN(out[q.text(0)], parse_json(q.text(1), "subject spec", path_));
  }
  return out;
}

Result<std::map<std::string, std::vector<std::string>>> SqliteStore::served_models() {
  std::lock_guard lock(mu_);
  NF_ASSIGN_OR_RETURN(Stmt q, Stmt::prepare(db_,
      "SELECT DISTINCT subject, served_model FROM draws WHERE status = 'ok' AND served_model != '' "
      "ORDER BY subject, served_model",
      "served_models", path_));
  std::map<std::string, std::vector<std::string>> out;
  for (;;) {
    NF_ASSIGN_OR_RETURN(bool row, q.step());
    if (!row) break;
    out[q.text(0)].push_back(q.text(1));
  }
  return out;
}

Result<std::optional<std::string>> SqliteStore::meta_value(const std::string& key) {
  std::lock_guard lock(mu_);
  NF_ASSIGN_OR_RETURN(Stmt q, Stmt::prepare(db_, "SELECT value FROM meta WHERE key = ?1", "read meta", path_));
  q.bind(1, key);
  NF_ASSIGN_OR_RETURN(bool row, q.step());
  if (!row) return std::optional<std::string>();
  return std::optional<std::string>(q.text(0));
}

Status SqliteStore::set_meta_value(const std::string& key, const std::string& value) {
  NF_RETURN_IF_ERROR(store_internal::check_meta_key_writable(key));
  std::lock_guard lock(mu_);
  WriteTxn txn(db_, "write meta", path_);
  NF_RETURN_IF_ERROR(txn.begin());
  NF_RETURN_IF_ERROR(set_meta(db_, path_, key, value));
  return txn.commit();
}

Result<std::unordered_set<std::string>> SqliteStore::refreshed_keys(const std::string& refresh_id) {
  std::lock_guard lock(mu_);
  NF_ASSIGN_OR_RETURN(Stmt q, Stmt::prepare(db_,
      "SELECT subject, item, condition, config, replicate FROM draws WHERE status != 'api_error' AND "
      "json_extract(extra, '$.refresh') = ?1",
      "refreshed_keys", path_));
  q.bind(1, refresh_id);
  std::unordered_set<std::string> keys;
  for (;;) {
    NF_ASSIGN_OR_RETURN(bool row, q.step());
    if (!row) break;
    keys.insert(DrawKey{q.text(0), q.text(1), q.text(2), q.text(3), static_cast<int>(q.int64(4))}.to_string());
  }
  return keys;
}

Result<std::map<int64_t, std::string>> SqliteStore::judged_draw_conditions() {
  std::lock_guard lock(mu_);
  NF_ASSIGN_OR_RETURN(Stmt q, Stmt::prepare(db_,
      "SELECT id, condition FROM draws WHERE id IN (SELECT draw_id FROM judgments WHERE draw_id IS NOT NULL)",
      "judged_draw_conditions", path_));
  std::map<int64_t, std::string> out;
  for (;;) {
    NF_ASSIGN_OR_RETURN(bool row, q.step());
    if (!row) break;
    out[q.int64(0)] = q.text(1);
  }
  return out;
}

Status SqliteStore::replace_judgments(const std::vector<JudgmentRow>& rows) {
  std::lock_guard lock(mu_);
  WriteTxn txn(db_, "replace_judgments", path_);
  NF_RETURN_IF_ERROR(txn.begin());
  NF_ASSIGN_OR_RETURN(Stmt remove, Stmt::prepare(db_,
      "DELETE FROM judgments WHERE judge = ?3 AND ((?4 != 0 AND draw_id = ?4) OR "
      "(?4 = 0 AND draw_id IS NULL AND subject = ?1 AND item = ?2))",
      "replace_judgments: delete", path_));
  NF_ASSIGN_OR_RETURN(Stmt insert, prepare_judgment_insert(db_, path_, "replace_judgments: insert"));
  const int64_t now = now_s();
  for (const JudgmentRow& r : rows) {
    NF_RETURN_IF_ERROR(check_judgment(r, path_));
    remove.reset();
    remove.bind(1, r.subject).bind(2, r.item).bind(3, r.judge).bind(4, r.draw_id.value_or(0));
    NF_RETURN_IF_ERROR(remove.run());
    NF_RETURN_IF_ERROR(insert_judgment(insert, r, now));
  }
  return txn.commit();
}

}  // namespace nf
