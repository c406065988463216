// The PostgreSQL store (pg_store.h; docs/store.md "PostgreSQL"), on libpq's C API.
//
// One connection per PgStore, used under mu_ by one thread at a time. Every statement is
// sent with PQexecParams (text parameters, bytea as binary), so no value is ever spliced
// into SQL text. Text is compared and ordered with COLLATE "C" (byte order), as SQLite's
// BINARY collation orders it, so analyses see the same order on both stores.
#include "store/pg_store.h"

#include <postgresql/libpq-fe.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <ostream>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "store/export_format.h"
#include "store/store_internal.h"
#include "util/clock.h"

namespace nf {

using json = nlohmann::json;

namespace {

using store_export::axis_value_json;
using store_export::config_axes;
using store_export::csv_field;
using store_export::write_csv_row;
using store_internal::check_judgment;
using store_internal::Encoder;
using store_internal::judgment_key;

// The PostgreSQL schema version (meta.schema_version; docs/store.md "PostgreSQL"): v1 is
// the SQLite store's tables without judgments and human_labels, plus planned_draws
// (kSchemaV1); v2 adds judgments and human_labels (kSchemaV2Delta). Its own numbering:
// the SQLite store's version (kStoreSchemaVersion) counts SQLite files.
constexpr int kPgSchemaVersion = 2;

std::string dump_json(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

int64_t now_s() { return real_clock().unix_time_s(); }

// Valid UTF-8 without NUL, as PostgreSQL TEXT requires: invalid sequences and NUL bytes
// become U+FFFD (the raw response, content and error are stored byte for byte as bytea).
std::string text_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t len = 0;
    if (c >= 0x01 && c < 0x80) len = 1;
    else if (c >= 0xC2 && c <= 0xDF) len = 2;
    else if (c >= 0xE0 && c <= 0xEF) len = 3;
    else if (c >= 0xF0 && c <= 0xF4) len = 4;
    bool ok = len > 0 && i + len <= s.size();
    for (size_t k = 1; ok && k < len; ++k) ok = (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80;
    if (ok && len == 3) {
      const auto c1 = static_cast<unsigned char>(s[i + 1]);
      ok = !(c == 0xE0 && c1 < 0xA0) && !(c == 0xED && c1 >= 0xA0);
    }
    if (ok && len == 4) {
      const auto c1 = static_cast<unsigned char>(s[i + 1]);
      ok = !(c == 0xF0 && c1 < 0x90) && !(c == 0xF4 && c1 >= 0x90);
    }
    if (ok) {
      out.append(s.substr(i, len));
      i += len;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
    }
  }
  return out;
}

// The URL as shown in messages: the password (user:PASSWORD@ or password=...) masked.
std::string display_url(const std::string& url) {
  std::string out = url;
  const size_t scheme = out.find("://");
  if (scheme != std::string::npos) {
    const size_t at = out.find('@', scheme + 3);
    const size_t slash = out.find('/', scheme + 3);
    if (at != std::string::npos && (slash == std::string::npos || at < slash)) {
      const size_t colon = out.find(':', scheme + 3);
      if (colon != std::string::npos && colon < at) out.replace(colon + 1, at - colon - 1, "***");
    }
  }
  const size_t pw = out.find("password=");
  if (pw != std::string::npos) {
    const size_t end = out.find('&', pw);
    out.replace(pw + 9, (end == std::string::npos ? out.size() : end) - pw - 9, "***");
  }
  return out;
}

/// One statement parameter: text, bytea (binary) or NULL.
struct Param {
  std::string value;
  bool null = false;
  bool binary = false;
};
Param text(std::string_view s) { return {text_utf8(s)}; }
Param bytes(std::string s) { return {std::move(s), false, true}; }
Param num(int64_t v) { return {std::to_string(v)}; }
Param num(double v) { return {fmt::format("{}", v)}; }  // shortest decimal that reads back exactly
Param null_param() { return {"", true}; }
Param boolean(bool b) { return {b ? "true" : "false"}; }

/// A query result (owned).
class Res {
 public:
  explicit Res(PGresult* r) : r_(r, PQclear) {}
  int rows() const { return PQntuples(r_.get()); }
  bool is_null(int row, int col) const { return PQgetisnull(r_.get(), row, col) != 0; }
  std::string str(int row, int col) const {
    return std::string(PQgetvalue(r_.get(), row, col), static_cast<size_t>(PQgetlength(r_.get(), row, col)));
  }
  /// The value as a view into the result (valid while this Res lives).
  std::string_view view(int row, int col) const {
    return std::string_view(PQgetvalue(r_.get(), row, col), static_cast<size_t>(PQgetlength(r_.get(), row, col)));
  }
  int64_t int64(int row, int col) const { return std::strtoll(PQgetvalue(r_.get(), row, col), nullptr, 10); }
  double dbl(int row, int col) const { return std::strtod(PQgetvalue(r_.get(), row, col), nullptr); }
  bool boolean(int row, int col) const { return PQgetvalue(r_.get(), row, col)[0] == 't'; }
  /// A bytea column in text (hex) output: "\x0a1b..." -> the bytes.
  std::string bytea(int row, int col) const {
    const char* p = PQgetvalue(r_.get(), row, col);
    const size_t n = static_cast<size_t>(PQgetlength(r_.get(), row, col));
    std::string out;
    if (n < 2 || p[0] != '\\' || p[1] != 'x') return std::string(p, n);
    out.reserve((n - 2) / 2);
    auto hex = [](char c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; };
    for (size_t i = 2; i + 1 < n; i += 2) out.push_back(static_cast<char>(hex(p[i]) * 16 + hex(p[i + 1])));
    return out;
  }

 private:
  std::unique_ptr<PGresult, void (*)(PGresult*)> r_;
};

// The draw key in columns col..col+4 (subject, item, condition, config, replicate) of row 0.
DrawKey key_at(const Res& r, int col) {
  return DrawKey{r.str(0, col), r.str(0, col + 1), r.str(0, col + 2), r.str(0, col + 3),
                 static_cast<int>(r.int64(0, col + 4))};
}

}  // namespace

struct PgStore::Conn {
  PGconn* c = nullptr;
  std::string name;  // display URL
  ~Conn() {
    if (c != nullptr) PQfinish(c);
  }

  Status error(PGresult* r, std::string_view op) const {
    const char* state = r != nullptr ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : nullptr;
    std::string msg = r != nullptr ? PQresultErrorMessage(r) : "";
    if (msg.empty()) msg = PQerrorMessage(c);
    while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
    const std::string sqlstate = state != nullptr ? state : "";
    const std::string text = fmt::format("store {}: {}: {}{}", name, op, msg,
                                         sqlstate.empty() ? "" : fmt::format(" (sqlstate {})", sqlstate));
    if (PQstatus(c) != CONNECTION_OK || sqlstate.rfind("08", 0) == 0 || sqlstate.rfind("57P", 0) == 0)
      return Unavailable(text);
    if (sqlstate == "23505") return AlreadyExists(text);
    if (sqlstate.rfind("23", 0) == 0 || sqlstate.rfind("22", 0) == 0) return InvalidArgument(text);
    if (sqlstate.rfind("40", 0) == 0 || sqlstate.rfind("55", 0) == 0 || sqlstate.rfind("53", 0) == 0)
      return FailedPrecondition(text);
    if (sqlstate.rfind("42", 0) == 0) return Internal(text);
    return DataLoss(text);
  }
};

namespace {

// Runs and checks: the statement must succeed (command or rows).
Result<Res> exec(PgStore::Conn& conn, std::string_view op, const std::string& sql,
                 const std::vector<Param>& params = {}) {
  std::vector<const char*> values(params.size());
  std::vector<int> lengths(params.size()), formats(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    values[i] = params[i].null ? nullptr : params[i].value.data();
    lengths[i] = static_cast<int>(params[i].value.size());
    formats[i] = params[i].binary ? 1 : 0;
  }
  // Without parameters PQexec (which also takes several statements, e.g. the schema).
  PGresult* r = params.empty() ? PQexec(conn.c, sql.c_str())
                               : PQexecParams(conn.c, sql.c_str(), static_cast<int>(params.size()), nullptr,
                                              values.data(), lengths.data(), formats.data(), 0);
  const ExecStatusType st = r != nullptr ? PQresultStatus(r) : PGRES_FATAL_ERROR;
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
    Status s = conn.error(r, op);
    if (r != nullptr) PQclear(r);
    return s;
  }
  return Res(r);
}

/// BEGIN ... COMMIT; rolls back when destroyed uncommitted.
class Txn {
 public:
  Txn(PgStore::Conn& c, std::string_view op) : c_(c), op_(op) {}
  ~Txn() {
    if (open_) PQclear(PQexec(c_.c, "ROLLBACK"));
  }
  Status begin() {
    NF_RETURN_IF_ERROR(exec(c_, op_, "BEGIN").status());
    open_ = true;
    return Status::Ok();
  }
  Status commit() {
    open_ = false;
    return exec(c_, op_, "COMMIT").status();
  }
  void rollback() {
    if (open_) PQclear(PQexec(c_.c, "ROLLBACK"));
    open_ = false;
  }

 private:
  PgStore::Conn& c_;
  std::string op_;
  bool open_ = false;
};

/// Streams the rows of `sql` through a cursor in batches of 5,000 (memory bounded by the
/// batch), calling fn(res, row) for each. Runs in its own read transaction.
Status for_each_row(PgStore::Conn& conn, std::string_view op, const std::string& sql,
                    const std::vector<Param>& params, const std::function<void(const Res&, int)>& fn) {
  Txn txn(conn, op);
  NF_RETURN_IF_ERROR(txn.begin());
  NF_RETURN_IF_ERROR(exec(conn, op, "DECLARE nf_rows NO SCROLL CURSOR FOR " + sql, params).status());
  for (;;) {
    NF_ASSIGN_OR_RETURN(Res res, exec(conn, op, "FETCH 5000 FROM nf_rows"));
    for (int i = 0; i < res.rows(); ++i) fn(res, i);
    if (res.rows() < 5000) break;
  }
  NF_RETURN_IF_ERROR(exec(conn, op, "CLOSE nf_rows").status());
  return txn.commit();
}

Result<json> parse_json_text(const std::string& text, std::string_view what, const std::string& name) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return DataLoss(fmt::format("store {}: {} is not valid JSON: {:.80}", name, what, text));
  return j;
}

std::vector<Param> key_params(const DrawKey& k) {
  return {text(k.subject), text(k.item), text(k.condition), text(k.config), num(static_cast<int64_t>(k.replicate))};
}

constexpr const char* kKeyWhere = "subject = $1 AND item = $2 AND condition = $3 AND config = $4 AND replicate = $5";

constexpr const char* kDrawColumns =
    "subject, item, condition, config, replicate, cluster, status, request, response, "
    "content, error, latency_ms, prompt_tokens, completion_tokens, finish_reason, "
    "served_model, system_fingerprint, cached, attempts, extra, created_at";

// Schema v1 exactly as the first published build created it (never edit it: a v1 store on
// a server is migrated by the deltas below, a new store is created as v1 and migrated the
// same way, so both paths give the same tables). The SQLite store's tables, with bytea for
// the bytes the model sent, plus the shared plan.
constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS study(
  id INTEGER PRIMARY KEY CHECK (id = 1), name TEXT NOT NULL, hash TEXT NOT NULL, seed BIGINT NOT NULL,
  spec TEXT NOT NULL, created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL);
CREATE TABLE IF NOT EXISTS items(item TEXT PRIMARY KEY, cluster TEXT NOT NULL, data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS subjects(subject TEXT PRIMARY KEY, spec TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS configs(config TEXT PRIMARY KEY, spec TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS draws(
  id                 BIGSERIAL PRIMARY KEY,
  subject            TEXT NOT NULL,
  item               TEXT NOT NULL,
  condition          TEXT NOT NULL,
  config             TEXT NOT NULL,
  replicate          INTEGER NOT NULL CHECK (replicate >= 0),
  cluster            TEXT NOT NULL,
  status             TEXT NOT NULL CHECK (status IN ('ok', 'parse_error', 'api_error', 'refused')),
  request            TEXT NOT NULL,
  response           BYTEA NOT NULL,
  content            BYTEA NOT NULL,
  error              BYTEA NOT NULL,
  latency_ms         DOUBLE PRECISION,
  prompt_tokens      BIGINT,
  completion_tokens  BIGINT,
  finish_reason      TEXT NOT NULL,
  served_model       TEXT NOT NULL,
  system_fingerprint TEXT NOT NULL,
  cached             BOOLEAN NOT NULL,
  attempts           INTEGER NOT NULL,
  extra              TEXT NOT NULL,
  created_at         BIGINT NOT NULL,
  UNIQUE (subject, item, condition, config, replicate));
CREATE INDEX IF NOT EXISTS draws_by_cell ON draws(status, subject, config, condition, item, replicate);
CREATE TABLE IF NOT EXISTS outcomes(
  draw_id BIGINT NOT NULL REFERENCES draws(id) ON DELETE CASCADE,
  ord     INTEGER NOT NULL,
  name    TEXT NOT NULL,
  value   DOUBLE PRECISION NOT NULL,
  label   TEXT NOT NULL,
  PRIMARY KEY (draw_id, name));
CREATE TABLE IF NOT EXISTS response_cache(key TEXT PRIMARY KEY, response TEXT NOT NULL, created_at BIGINT NOT NULL);
CREATE TABLE IF NOT EXISTS planned_draws(
  id          BIGSERIAL PRIMARY KEY,
  subject     TEXT NOT NULL,
  item        TEXT NOT NULL,
  condition   TEXT NOT NULL,
  config      TEXT NOT NULL,
  replicate   INTEGER NOT NULL,
  done        BOOLEAN NOT NULL DEFAULT false,
  lease_owner TEXT,
  lease_until TIMESTAMPTZ,
  claims      INTEGER NOT NULL DEFAULT 0,
  UNIQUE (subject, item, condition, config, replicate));
CREATE INDEX IF NOT EXISTS planned_draws_open ON planned_draws(id) WHERE NOT done;
)sql";

// Schema v2: judge votes and human labels, with the SQLite store's rules (store.cc schema
// v2, seed 004 §2.6, §3.4): a judgment is unique on (subject, item, judge, draw), imported
// votes have draw_id NULL and the expression index makes (subject, item, judge) unique for
// them; an ok judgment has a label. The judge's raw reply is bytea (the bytes as received).
constexpr const char* kSchemaV2Delta = R"sql(
CREATE TABLE judgments(
  id               BIGSERIAL PRIMARY KEY,
  subject          TEXT NOT NULL,
  subject_provider TEXT NOT NULL,
  item             TEXT NOT NULL,
  cluster          TEXT NOT NULL,
  judge            TEXT NOT NULL,
  judge_provider   TEXT NOT NULL,
  label            INTEGER CHECK (label IN (0, 1)),
  status           TEXT NOT NULL CHECK (status IN ('ok', 'parse_error', 'api_error')),
  draw_id          BIGINT REFERENCES draws(id) ON DELETE SET NULL,
  raw_response     BYTEA NOT NULL,
  settings         TEXT NOT NULL,
  created_at       BIGINT NOT NULL,
  CHECK (status <> 'ok' OR label IS NOT NULL));
CREATE UNIQUE INDEX judgments_key ON judgments(subject, item, judge, coalesce(draw_id, 0));
CREATE INDEX judgments_by_draw ON judgments(draw_id) WHERE draw_id IS NOT NULL;
CREATE TABLE human_labels(
  rater   TEXT NOT NULL,
  subject TEXT NOT NULL,
  item    TEXT NOT NULL,
  label   INTEGER NOT NULL CHECK (label IN (0, 1)),
  PRIMARY KEY (rater, subject, item));
)sql";

// A migration turns schema `from` into `from + 1` inside the schema transaction (under the
// advisory lock). Append one per schema change; never edit or reorder published ones.
struct PgMigration {
  int from;
  const char* sql;
};
constexpr PgMigration kPgMigrations[] = {{1, kSchemaV2Delta}};

Status check_draw(const Draw& d, const std::string& name) {
  const DrawKey& k = d.key;
  if (k.replicate < 0)
    return InvalidArgument(fmt::format("store {}: put_draw {}: replicate must be >= 0", name, k.to_string()));
  for (size_t i = 0; i < d.outcomes.size(); ++i) {
    if (std::isnan(d.outcomes[i].value))
      return InvalidArgument(
          fmt::format("store {}: put_draw {}: outcome '{}' has value NaN", name, k.to_string(), d.outcomes[i].name));
    for (size_t j = 0; j < i; ++j)
      if (d.outcomes[j].name == d.outcomes[i].name)
        return InvalidArgument(fmt::format("store {}: put_draw {}: outcome '{}' appears twice", name, k.to_string(),
                                           d.outcomes[i].name));
  }
  return Status::Ok();
}

Status unimplemented(const std::string& name, std::string_view op) {
  return Unimplemented(fmt::format("store {}: {} is not supported by the PostgreSQL store (docs/store.md lists "
                                   "what it offers; use a SQLite store for this step)",
                                   name, op));
}

}  // namespace

// ---- open / schema --------------------------------------------------------------------

PgStore::PgStore(std::string display, std::unique_ptr<Conn> conn) : Store(std::move(display)), conn_(std::move(conn)) {}

PgStore::~PgStore() = default;

Result<std::unique_ptr<Store>> PgStore::open(const std::string& url) {
  auto conn = std::make_unique<Conn>();
  conn->name = display_url(url);
  conn->c = PQconnectdb(url.c_str());
  if (conn->c == nullptr) return Unavailable("store " + conn->name + ": cannot allocate a libpq connection");
  if (PQstatus(conn->c) != CONNECTION_OK) {
    std::string msg = PQerrorMessage(conn->c);
    while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
    return Unavailable(fmt::format("store {}: cannot connect to PostgreSQL: {}", conn->name, msg));
  }
  PQclear(PQexec(conn->c, "SET client_min_messages = warning"));
  std::string display = conn->name;
  std::unique_ptr<PgStore> store(new PgStore(std::move(display), std::move(conn)));
  NF_RETURN_IF_ERROR(store->create_schema());
  return std::unique_ptr<Store>(std::move(store));
}

Status PgStore::create_schema() {
  std::lock_guard lock(mu_);
  Conn& c = *conn_;
  Txn txn(c, "create schema");
  NF_RETURN_IF_ERROR(txn.begin());
  // One creator at a time, the schema included: neither CREATE SCHEMA IF NOT EXISTS nor
  // CREATE TABLE IF NOT EXISTS is safe under concurrency (two workers starting together
  // got "duplicate key ... pg_namespace_nspname_index").
  NF_RETURN_IF_ERROR(exec(c, "create schema", "SELECT pg_advisory_xact_lock(7346119051)").status());
  // search_path's first schema is the study's; create it if the URL names a new one.
  NF_ASSIGN_OR_RETURN(Res cur, exec(c, "open", "SELECT current_schema(), current_setting('search_path')"));
  if (cur.is_null(0, 0)) {
    std::string first = cur.str(0, 1);
    first = first.substr(0, first.find(','));
    while (!first.empty() && first.front() == ' ') first.erase(first.begin());
    if (first.size() >= 2 && first.front() == '"') first = first.substr(1, first.size() - 2);
    if (first.empty() || first == "$user")
      return FailedPrecondition(fmt::format("store {}: search_path names no schema to create the tables in", c.name));
    NF_ASSIGN_OR_RETURN(Res quoted, exec(c, "open", "SELECT quote_ident($1)", {text(first)}));
    NF_RETURN_IF_ERROR(exec(c, "create schema", "CREATE SCHEMA IF NOT EXISTS " + quoted.str(0, 0)).status());
  }
  NF_ASSIGN_OR_RETURN(Res has_meta, exec(c, "create schema", "SELECT to_regclass('meta') IS NOT NULL"));
  int version = 0;
  if (has_meta.boolean(0, 0)) {
    NF_ASSIGN_OR_RETURN(Res v, exec(c, "read schema version", "SELECT value FROM meta WHERE key = 'schema_version'"));
    if (v.rows() == 0) return DataLoss(fmt::format("store {}: table meta has no schema_version: not a noisefloor store", c.name));
    version = std::atoi(v.str(0, 0).c_str());
    if (version < 1)
      return DataLoss(fmt::format("store {}: meta.schema_version '{}' is not a schema version", c.name, v.str(0, 0)));
    if (version > kPgSchemaVersion)
      return FailedPrecondition(fmt::format("store {}: PostgreSQL schema version {} is newer than this build's ({})",
                                            c.name, version, kPgSchemaVersion));
  } else {
    NF_RETURN_IF_ERROR(exec(c, "create schema", kSchemaV1).status());
    NF_RETURN_IF_ERROR(exec(c, "create schema",
                            "INSERT INTO meta(key, value) VALUES ('schema_version', '1'), ('created_by', $1)",
                            {text(NOISEFLOOR_VERSION)})
                           .status());
    version = 1;
  }
  if (version == kPgSchemaVersion) return txn.commit();
  for (const PgMigration& m : kPgMigrations) {
    if (m.from < version) continue;
    if (m.from != version)
      return Internal(fmt::format("store {}: no migration from PostgreSQL schema version {}", c.name, version));
    NF_RETURN_IF_ERROR(exec(c, fmt::format("migrate schema {} -> {}", m.from, m.from + 1), m.sql).status());
    ++version;
  }
  NF_RETURN_IF_ERROR(exec(c, "migrate schema",
                          "INSERT INTO meta(key, value) VALUES ('schema_version', $1), ('tool_version', $2) "
                          "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                          {num(static_cast<int64_t>(version)), text(NOISEFLOOR_VERSION)})
                         .status());
  return txn.commit();
}

// ---- study, items, subjects, configs --------------------------------------------------

Result<std::string> PgStore::put_study(const StudyRecord& study) {
  std::lock_guard lock(mu_);
  Conn& c = *conn_;
  Txn txn(c, "put_study");
  NF_RETURN_IF_ERROR(txn.begin());
  NF_ASSIGN_OR_RETURN(Res prev, exec(c, "put_study", "SELECT hash FROM study WHERE id = 1 FOR UPDATE"));
  std::string previous = prev.rows() > 0 ? prev.str(0, 0) : "";
  NF_RETURN_IF_ERROR(exec(c, "put_study",
                          "INSERT INTO study(id, name, hash, seed, spec, created_at, updated_at) "
                          "VALUES (1, $1, $2, $3, $4, $5, $5) ON CONFLICT (id) DO UPDATE SET name = excluded.name, "
                          "hash = excluded.hash, seed = excluded.seed, spec = excluded.spec, "
                          "updated_at = excluded.updated_at",
                          {text(study.name), text(study.hash), num(study.seed), text(dump_json(study.spec)),
                           num(now_s())})
                         .status());
  NF_RETURN_IF_ERROR(txn.commit());
  return previous;
}

Result<StudyRecord> PgStore::get_study() {
  std::lock_guard lock(mu_);
  NF_ASSIGN_OR_RETURN(Res r, exec(*conn_, "get_study", "SELECT name, hash, seed, spec FROM study WHERE id = 1"));
  if (r.rows() == 0) return NotFound("store " + path_ + ": no study recorded");
  StudyRecord s;
  s.name = r.str(0, 0);
  s.hash = r.str(0, 1);
  s.seed = r.int64(0, 2);
  NF_ASSIGN_OR_RETURN(s.spec, parse_json_text(r.str(0, 3), "study spec", path_));
  return s;
}

namespace {
constexpr const char* kPutItem =
    "INSERT INTO items(item, cluster, data) VALUES ($1, $2, $3) ON CONFLICT (item) DO UPDATE "
    "SET cluster = excluded.cluster, data = excluded.data";
}  // namespace

Status PgStore::put_items(const std::vector<ItemRow>& items) {
  std::lock_guard lock(mu_);
  Txn txn(*conn_, "put_items");
  NF_RETURN_IF_ERROR(txn.begin());
  for (const ItemRow& it : items)
    NF_RETURN_IF_ERROR(exec(*conn_, "put_items", kPutItem,
                            {text(it.item), text(it.cluster.empty() ? it.item : it.cluster), text(dump_json(it.data))})
                           .status());
  return txn.commit();
}

Status PgStore::put_item(const std::string& id, const std::string& cluster, const json& data) {
  return put_items({ItemRow{id, cluster, data}});
}

Status PgStore::put_subject(const std::string& name, const json& spec) {
  std::lock_guard lock(mu_);
  return exec(*conn_, "put_subject",
              "INSERT INTO subjects(subject, spec) VALUES ($1, $2) ON CONFLICT (subject) DO UPDATE SET spec = excluded.spec",
              {text(name), text(dump_json(spec))})
      .status();
}

Status PgStore::put_config(const std::string& id, const json& spec) {
  std::lock_guard lock(mu_);
  return exec(*conn_, "put_config",
              "INSERT INTO configs(config, spec) VALUES ($1, $2) ON CONFLICT (config) DO UPDATE SET spec = excluded.spec",
              {text(id), text(dump_json(spec))})
      .status();
}

// ---- draws ----------------------------------------------------------------------------

Result<std::unordered_set<std::string>> PgStore::finished_keys() {
  std::lock_guard lock(mu_);
  std::unordered_set<std::string> keys;
  NF_RETURN_IF_ERROR(for_each_row(*conn_, "finished_keys",
                                  "SELECT subject, item, condition, config, replicate FROM draws WHERE status <> 'api_error'",
                                  {}, [&](const Res& r, int i) {
                                    DrawKey k{r.str(i, 0), r.str(i, 1), r.str(i, 2), r.str(i, 3),
                                              static_cast<int>(r.int64(i, 4))};
                                    keys.insert(k.to_string());
                                  }));
  return keys;
}

namespace {

constexpr const char* kDrawValues =
    "$1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21";

// The 21 parameters of kDrawColumns for draw `d` written at `now`.
std::vector<Param> draw_params(const Draw& d, int64_t now) {
  std::vector<Param> p = key_params(d.key);
  p.reserve(21);
  p.push_back(text(d.cluster));
  p.push_back(text(draw_status_name(d.status)));
  p.push_back(text(d.request_text.empty() ? dump_json(d.request) : d.request_text));  // Draw::request_text
  p.push_back(bytes(d.raw_response));
  p.push_back(bytes(d.content));
  p.push_back(bytes(d.error));
  p.push_back(std::isnan(d.latency_ms) ? null_param() : num(d.latency_ms));
  p.push_back(d.prompt_tokens < 0 ? null_param() : num(d.prompt_tokens));
  p.push_back(d.completion_tokens < 0 ? null_param() : num(d.completion_tokens));
  p.push_back(text(d.finish_reason));
  p.push_back(text(d.served_model));
  p.push_back(text(d.system_fingerprint));
  p.push_back(boolean(d.cached));
  p.push_back(num(static_cast<int64_t>(d.attempts)));
  p.push_back(text(dump_json(d.extra)));
  p.push_back(num(now));
  return p;
}

// A new draw with its outcomes, its cache entries and (`mark_planned`) its planned row
// marked done, as ONE statement: data-modifying CTEs, atomic without BEGIN/COMMIT, so the
// common case of the hot path is one round trip instead of six. Outcomes and cache entries
// travel as JSON arrays (values as their shortest round-trip decimal text, so every double
// reads back exactly; "inf" included). The draw insert does nothing when the key is
// stored (ON CONFLICT DO NOTHING), and then neither do the others: false is returned and
// the caller takes the transactional path (api_error replaced, AlreadyExists otherwise).
Result<bool> insert_new_draw(PgStore::Conn& c, const Draw& d, const std::vector<Store::CacheEntry>& cache,
                             bool mark_planned, int64_t now) {
  std::vector<Param> p = draw_params(d, now);
  json outcomes = json::array();
  for (const Outcome& o : d.outcomes)
    outcomes.push_back(json::array({text_utf8(o.name), fmt::format("{}", o.value), text_utf8(o.label)}));
  json entries = json::array();
  for (const Store::CacheEntry& e : cache) entries.push_back(json::array({text_utf8(e.key), dump_json(e.response)}));
  p.push_back(text(dump_json(outcomes)));
  p.push_back(text(dump_json(entries)));
  std::string sql = fmt::format(
      "WITH d AS (INSERT INTO draws({}) VALUES ({}) ON CONFLICT (subject, item, condition, config, replicate) DO NOTHING "
      "RETURNING id), "
      "o AS (INSERT INTO outcomes(draw_id, ord, name, value, label) SELECT d.id, e.n - 1, e.v->>0, (e.v->>1)::float8, "
      "e.v->>2 FROM d, json_array_elements($22::json) WITH ORDINALITY AS e(v, n)), "
      "c AS (INSERT INTO response_cache(key, response, created_at) SELECT e->>0, e->>1, $21 FROM d, "
      "json_array_elements($23::json) AS e ON CONFLICT (key) DO UPDATE SET response = excluded.response, "
      "created_at = excluded.created_at)",
      kDrawColumns, kDrawValues);
  if (mark_planned)
    sql += fmt::format(", m AS (UPDATE planned_draws SET done = true, lease_owner = NULL, lease_until = NULL WHERE {} "
                       "AND EXISTS (SELECT 1 FROM d))",
                       kKeyWhere);
  sql += " SELECT id FROM d";
  NF_ASSIGN_OR_RETURN(Res r, exec(c, "put_draw", sql, p));
  return r.rows() > 0;
}

}  // namespace

Status PgStore::write_draw_locked(const Draw& d, const std::vector<CacheEntry>& cache, int64_t now) {
  Conn& c = *conn_;
  NF_RETURN_IF_ERROR(check_draw(d, path_));
  const DrawKey& k = d.key;
  NF_ASSIGN_OR_RETURN(Res found, exec(c, "put_draw: find",
                                      std::string("SELECT id, status FROM draws WHERE ") + kKeyWhere + " FOR UPDATE",
                                      key_params(k)));
  if (found.rows() > 0) {
    const std::string status = found.str(0, 1);
    if (status != draw_status_name(DrawStatus::kApiError))
      return AlreadyExists(
          fmt::format("store {}: draw {} is already stored with status {}", path_, k.to_string(), status));
    NF_RETURN_IF_ERROR(exec(c, "put_draw: replace api_error", "DELETE FROM draws WHERE id = $1", {num(found.int64(0, 0))})
                           .status());
  }
  auto inserted = exec(c, "put_draw: insert",
                       fmt::format("INSERT INTO draws({}) VALUES ({}) RETURNING id", kDrawColumns, kDrawValues),
                       draw_params(d, now));
  if (!inserted.ok()) {
    // Another worker committed the same key since our look-up (unique violation).
    if (inserted.status().code() == StatusCode::kAlreadyExists)
      return AlreadyExists(fmt::format("store {}: draw {} was stored by another writer", path_, k.to_string()));
    return inserted.status();
  }
  const int64_t id = inserted->int64(0, 0);
  if (!d.outcomes.empty()) {
    std::string sql = "INSERT INTO outcomes(draw_id, ord, name, value, label) VALUES ";
    std::vector<Param> op;
    for (size_t i = 0; i < d.outcomes.size(); ++i) {
      const size_t b = op.size();
      sql += fmt::format("{}(${}, ${}, ${}, ${}, ${})", i ? ", " : "", b + 1, b + 2, b + 3, b + 4, b + 5);
      op.push_back(num(id));
      op.push_back(num(static_cast<int64_t>(i)));
      op.push_back(text(d.outcomes[i].name));
      op.push_back(num(d.outcomes[i].value));
      op.push_back(text(d.outcomes[i].label));
    }
    NF_RETURN_IF_ERROR(exec(c, "put_draw: insert outcomes", sql, op).status());
  }
  for (const CacheEntry& e : cache) {
    NF_RETURN_IF_ERROR(exec(c, "cache_put",
                            "INSERT INTO response_cache(key, response, created_at) VALUES ($1, $2, $3) "
                            "ON CONFLICT (key) DO UPDATE SET response = excluded.response, created_at = excluded.created_at",
                            {text(e.key), text(dump_json(e.response)), num(now)})
                           .status());
  }
  return Status::Ok();
}

Status PgStore::put_draw_txn(const Draw& draw, const std::vector<CacheEntry>& cache, bool mark_planned) {
  std::lock_guard lock(mu_);
  Conn& c = *conn_;
  const std::string mark =
      std::string("UPDATE planned_draws SET done = true, lease_owner = NULL, lease_until = NULL WHERE ") + kKeyWhere;
  NF_RETURN_IF_ERROR(check_draw(draw, path_));
  // The common case (a key not stored yet): one statement, one round trip.
  NF_ASSIGN_OR_RETURN(bool inserted, insert_new_draw(c, draw, cache, mark_planned, now_s()));
  if (inserted) return Status::Ok();
  // The key is stored: replace an api_error draw, else AlreadyExists (write_draw_locked).
  {
    Txn txn(c, "put_draw");
    NF_RETURN_IF_ERROR(txn.begin());
    Status st = write_draw_locked(draw, cache, now_s());
    if (st.ok()) {
      if (mark_planned) NF_RETURN_IF_ERROR(exec(c, "put_draw: mark planned draw done", mark, key_params(draw.key)).status());
      return txn.commit();
    }
    if (st.code() != StatusCode::kAlreadyExists || !mark_planned) return st;
    txn.rollback();
    // The draw is stored (by another worker after our lease expired): the planned row is done.
    NF_RETURN_IF_ERROR(exec(c, "put_draw: mark planned draw done", mark, key_params(draw.key)).status());
    return st;
  }
}

Status PgStore::put_draw(const Draw& draw) { return put_draw_txn(draw, {}, false); }

Status PgStore::put_draw_with_cache(const Draw& draw, const std::vector<CacheEntry>& cache) {
  return put_draw_txn(draw, cache, false);
}

Status PgStore::put_draw_grouped(const Draw& draw, const std::vector<CacheEntry>& cache) {
  return put_draw_txn(draw, cache, false);
}

Status PgStore::put_claimed_draw(const Draw& draw, const std::vector<CacheEntry>& cache) {
  return put_draw_txn(draw, cache, true);
}

// ---- group commit (Store::put_draw_group; issue 14 item 5) -----------------------------

namespace {

std::string hex_of(const std::string& s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * s.size());
  for (const char ch : s) {
    const auto b = static_cast<unsigned char>(ch);
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 15]);
  }
  return out;
}

// One draw of a group as the JSON array the group statement reads (kGroupInsert): the 20
// columns of kDrawColumns before created_at (bytes as hex, NULL as null, the doubles as
// their shortest round-trip text), then its outcomes and its cache entries.
json group_row(const Draw& d, const std::vector<Store::CacheEntry>& cache) {
  json outcomes = json::array();
  for (const Outcome& o : d.outcomes)
    outcomes.push_back(json::array({text_utf8(o.name), fmt::format("{}", o.value), text_utf8(o.label)}));
  json entries = json::array();
  for (const Store::CacheEntry& e : cache) entries.push_back(json::array({text_utf8(e.key), dump_json(e.response)}));
  return json::array({text_utf8(d.key.subject), text_utf8(d.key.item), text_utf8(d.key.condition),
                      text_utf8(d.key.config), d.key.replicate, text_utf8(d.cluster),
                      std::string(draw_status_name(d.status)), text_utf8(d.request_text.empty() ? dump_json(d.request) : d.request_text), hex_of(d.raw_response),
                      hex_of(d.content), hex_of(d.error),
                      std::isnan(d.latency_ms) ? json(nullptr) : json(fmt::format("{}", d.latency_ms)),
                      d.prompt_tokens < 0 ? json(nullptr) : json(d.prompt_tokens),
                      d.completion_tokens < 0 ? json(nullptr) : json(d.completion_tokens),
                      text_utf8(d.finish_reason), text_utf8(d.served_model), text_utf8(d.system_fingerprint), d.cached,
                      d.attempts, text_utf8(dump_json(d.extra)), std::move(outcomes), std::move(entries)});
}

// Every draw of $1 (a JSON array of group_row arrays, keys distinct) whose key is not
// stored, with its outcomes, cache entries and (kGroupMark) planned row, in ONE statement;
// returns the 1-based positions in $1 of the draws it inserted. $2 = created_at.
constexpr const char* kGroupInsert =
    "WITH src AS (SELECT e.v, e.n FROM json_array_elements($1::json) WITH ORDINALITY AS e(v, n)), "
    "d AS (INSERT INTO draws({}) SELECT v->>0, v->>1, v->>2, v->>3, (v->>4)::int, v->>5, v->>6, v->>7, "
    "decode(v->>8, 'hex'), decode(v->>9, 'hex'), decode(v->>10, 'hex'), (v->>11)::float8, (v->>12)::bigint, "
    "(v->>13)::bigint, v->>14, v->>15, v->>16, (v->>17)::boolean, (v->>18)::int, v->>19, $2::bigint FROM src "
    "ORDER BY n ON CONFLICT (subject, item, condition, config, replicate) DO NOTHING "
    "RETURNING id, subject, item, condition, config, replicate), "
    "j AS (SELECT d.*, s.v, s.n FROM d JOIN src s ON s.v->>0 = d.subject AND s.v->>1 = d.item AND "
    "s.v->>2 = d.condition AND s.v->>3 = d.config AND (s.v->>4)::int = d.replicate), "
    "o AS (INSERT INTO outcomes(draw_id, ord, name, value, label) SELECT j.id, e.k - 1, e.o->>0, (e.o->>1)::float8, "
    "e.o->>2 FROM j, json_array_elements(j.v->20) WITH ORDINALITY AS e(o, k)), "
    // The last entry of a key wins, as consecutive cache_put calls leave it.
    "c AS (INSERT INTO response_cache(key, response, created_at) SELECT DISTINCT ON (e.x->>0) e.x->>0, e.x->>1, "
    "$2::bigint FROM j, json_array_elements(j.v->21) WITH ORDINALITY AS e(x, k) ORDER BY e.x->>0, j.n DESC, e.k DESC "
    "ON CONFLICT (key) DO UPDATE SET response = excluded.response, created_at = excluded.created_at)";
constexpr const char* kGroupMark =
    ", m AS (UPDATE planned_draws p SET done = true, lease_owner = NULL, lease_until = NULL FROM j "
    "WHERE p.subject = j.subject AND p.item = j.item AND p.condition = j.condition AND p.config = j.config AND "
    "p.replicate = j.replicate)";

bool is_retryable(const Status& st) {
  return st.message().find("sqlstate 40P01") != std::string::npos ||
         st.message().find("sqlstate 40001") != std::string::npos;
}

}  // namespace

Status PgStore::put_draw_group(const DrawGroup& group, std::vector<Status>* statuses) {
  return put_group(group, statuses, false);
}

Status PgStore::put_claimed_draw_group(const DrawGroup& group, std::vector<Status>* statuses) {
  return put_group(group, statuses, true);
}

Status PgStore::put_group(const DrawGroup& group, std::vector<Status>* statuses, bool mark_planned) {
  statuses->clear();
  if (group.empty()) return Status::Ok();
  std::lock_guard lock(mu_);
  // Two workers whose groups share keys (a lease that expired) may deadlock; the server
  // aborts one transaction (40P01), which is then written again from the start.
  for (int attempt = 1;; ++attempt) {
    Status st = put_group_locked(group, statuses, mark_planned);
    if (st.ok() || attempt == 3 || !is_retryable(st)) return st;
  }
}

Status PgStore::put_group_locked(const DrawGroup& group, std::vector<Status>* statuses, bool mark_planned) {
  Conn& c = *conn_;
  const int64_t now = now_s();
  statuses->assign(group.size(), Status::Ok());
  // A draw the store would refuse before any statement fails alone, as put_draw does.
  std::vector<size_t> fast, slow;  // group positions: the one statement / one by one after it
  {
    std::unordered_set<std::string> keys;
    for (size_t i = 0; i < group.size(); ++i) {
      (*statuses)[i] = check_draw(*group[i].first, path_);
      if (!(*statuses)[i].ok()) continue;
      // A key repeated in the group: its later draws go one by one, after the first is in.
      (keys.insert(group[i].first->key.to_string()).second ? fast : slow).push_back(i);
    }
  }
  Txn txn(c, "put_draw_group");
  NF_RETURN_IF_ERROR(txn.begin());
  std::vector<bool> inserted(group.size(), false);
  if (!fast.empty()) {
    json rows = json::array();
    for (size_t i : fast) rows.push_back(group_row(*group[i].first, *group[i].second));
    std::string sql = fmt::format(kGroupInsert, kDrawColumns);
    if (mark_planned) sql += kGroupMark;
    sql += " SELECT n FROM j";
    auto r = exec(c, "put_draw_group", sql, {text(dump_json(rows)), num(now)});
    if (r.ok()) {
      for (int k = 0; k < r->rows(); ++k) inserted[fast[static_cast<size_t>(r->int64(k, 0) - 1)]] = true;
    } else {
      // The server refused the statement (nothing of it was written): start again and
      // write every draw on its own, so the one it refuses fails alone.
      if (r.status().code() == StatusCode::kUnavailable || is_retryable(r.status())) return r.status();
      txn.rollback();
      NF_RETURN_IF_ERROR(txn.begin());
    }
  }
  std::vector<size_t> rest;
  for (size_t i = 0; i < group.size(); ++i)
    if ((*statuses)[i].ok() && !inserted[i]) rest.push_back(i);
  const std::string mark =
      std::string("UPDATE planned_draws SET done = true, lease_owner = NULL, lease_until = NULL WHERE ") + kKeyWhere;
  for (size_t i : rest) {
    const Draw& d = *group[i].first;
    NF_RETURN_IF_ERROR(exec(c, "put_draw_group", "SAVEPOINT nf_draw").status());
    Status st = write_draw_locked(d, *group[i].second, now);
    if (!st.ok()) {
      if (st.code() == StatusCode::kUnavailable || is_retryable(st)) return st;
      NF_RETURN_IF_ERROR(exec(c, "put_draw_group", "ROLLBACK TO SAVEPOINT nf_draw").status());
      (*statuses)[i] = st;
    }
    NF_RETURN_IF_ERROR(exec(c, "put_draw_group", "RELEASE SAVEPOINT nf_draw").status());
    // Stored (or stored before by another worker after this lease expired): done.
    if (mark_planned && (st.ok() || st.code() == StatusCode::kAlreadyExists))
      NF_RETURN_IF_ERROR(exec(c, "put_draw_group: mark planned draw done", mark, key_params(d.key)).status());
  }
  return txn.commit();
}

Status PgStore::replace_draw(const Draw& draw) {
  std::lock_guard lock(mu_);
  Conn& c = *conn_;
  Txn txn(c, "replace_draw");
  NF_RETURN_IF_ERROR(txn.begin());
  // Judgments of the replaced draw judged an answer that no longer exists (as SQLite).
  NF_RETURN_IF_ERROR(exec(c, "replace_draw: judgments",
                          std::string("DELETE FROM judgments WHERE draw_id IN (SELECT id FROM draws WHERE ") + kKeyWhere +
                              ")",
                          key_params(draw.key))
                         .status());
  NF_RETURN_IF_ERROR(
      exec(c, "replace_draw", std::string("DELETE FROM draws WHERE ") + kKeyWhere, key_params(draw.key)).status());
  NF_RETURN_IF_ERROR(write_draw_locked(draw, {}, now_s()));
  return txn.commit();
}

Status PgStore::put_draws(const std::vector<Draw>& draws) {
  std::lock_guard lock(mu_);
  Txn txn(*conn_, "put_draws");
  NF_RETURN_IF_ERROR(txn.begin());
  const int64_t now = now_s();
  for (size_t i = 0; i < draws.size(); ++i) {
    Status s = write_draw_locked(draws[i], {}, now);
    if (!s.ok()) return s.with_context(fmt::format("put_draws: draw {} of {}", i + 1, draws.size()));
  }
  return txn.commit();
}

Result<std::unique_ptr<Store::BulkImport>> PgStore::begin_bulk_import() {
  return unimplemented(path_, "import draws (begin_bulk_import)");
}

// ---- staged import (`import draws`; Store::StagedImport) -------------------------------

namespace {

// A field of COPY's text format: backslash, tab, newline and carriage return escaped.
void copy_field(std::string& out, std::string_view s) {
  for (const char ch : s) {
    switch (ch) {
      case '\\': out += "\\\\"; break;
      case '\t': out += "\\t"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      default: out.push_back(ch);
    }
  }
}

// The staged rows: one per outcome, with its place in the file. A temporary table (no WAL,
// dropped at the end of the transaction).
constexpr const char* kStageTable =
    "CREATE TEMPORARY TABLE nf_import(seq BIGINT NOT NULL, line BIGINT NOT NULL, subject TEXT NOT NULL, "
    "item TEXT NOT NULL, condition TEXT NOT NULL, config TEXT NOT NULL, replicate INTEGER NOT NULL, "
    "cluster TEXT NOT NULL, outcome TEXT NOT NULL, value DOUBLE PRECISION NOT NULL, label TEXT NOT NULL, "
    "status TEXT NOT NULL) ON COMMIT DROP";

constexpr const char* kStageKeyJoin =
    "d.subject = s.subject AND d.item = s.item AND d.condition = s.condition AND d.config = s.config AND "
    "d.replicate = s.replicate";

class PgStagedImport final : public Store::StagedImport {
 public:
  PgStagedImport(std::unique_lock<std::mutex> lock, PgStore::Conn& c, const std::string& name)
      : lock_(std::move(lock)), c_(c), name_(name), txn_(c, "import") {}
  ~PgStagedImport() override {
    if (copying_) {
      PQputCopyEnd(c_.c, "import abandoned");
      (void)drain();  // the COPY fails by design; the transaction rolls back next
    }
  }

  Status start() {
    NF_RETURN_IF_ERROR(txn_.begin());
    // The checks and the writes group and sort every staged row: in memory on the server
    // rather than in temporary files (this transaction only).
    NF_RETURN_IF_ERROR(exec(c_, "import: work_mem", "SET LOCAL work_mem = '256MB'").status());
    // JIT compiling these few large statements costs more than it saves.
    NF_RETURN_IF_ERROR(exec(c_, "import: jit", "SET LOCAL jit = off").status());
    NF_RETURN_IF_ERROR(exec(c_, "import: staging table", kStageTable).status());
    PGresult* r = PQexec(c_.c, "COPY nf_import FROM STDIN");
    const bool ok = r != nullptr && PQresultStatus(r) == PGRES_COPY_IN;
    Status st = ok ? Status::Ok() : c_.error(r, "import: COPY");
    if (r != nullptr) PQclear(r);
    if (ok) copying_ = true;
    buf_.reserve(kFlushBytes + 4096);
    return st;
  }

  Status add(const DrawKey& key, const std::string& cluster, const Outcome& o, int64_t line, int64_t seq) override {
    if (!copying_) return Internal(fmt::format("store {}: import: add after the stream ended", name_));
    if (key.replicate < 0)
      return InvalidArgument(fmt::format("store {}: put_draw {}: replicate must be >= 0", name_, key.to_string()));
    if (std::isnan(o.value))
      return InvalidArgument(fmt::format("store {}: import {}: outcome '{}' has value NaN", name_, key.to_string(), o.name));
    fmt::format_to(std::back_inserter(buf_), "{}\t{}\t", seq, line);
    for (const std::string* f : {&key.subject, &key.item, &key.condition, &key.config}) {
      copy_field(buf_, text_utf8(*f));
      buf_.push_back('\t');
    }
    fmt::format_to(std::back_inserter(buf_), "{}\t", key.replicate);
    copy_field(buf_, text_utf8(cluster));
    buf_.push_back('\t');
    copy_field(buf_, text_utf8(o.name));
    fmt::format_to(std::back_inserter(buf_), "\t{}\t", o.value);  // shortest text that reads back exactly
    copy_field(buf_, text_utf8(o.label));
    buf_ += "\tok\n";
    return buf_.size() >= kFlushBytes ? flush() : Status::Ok();
  }

  // A draw that is not ok: one staged row with an empty outcome (never written as one).
  Status add_draw(const DrawKey& key, const std::string& cluster, DrawStatus status, int64_t line,
                  int64_t seq) override {
    if (!copying_) return Internal(fmt::format("store {}: import: add after the stream ended", name_));
    if (status == DrawStatus::kOk)
      return InvalidArgument(fmt::format("store {}: import {}: add_draw with status ok (an ok draw is added "
                                         "through its outcomes)",
                                         name_, key.to_string()));
    if (key.replicate < 0)
      return InvalidArgument(fmt::format("store {}: put_draw {}: replicate must be >= 0", name_, key.to_string()));
    fmt::format_to(std::back_inserter(buf_), "{}\t{}\t", seq, line);
    for (const std::string* f : {&key.subject, &key.item, &key.condition, &key.config}) {
      copy_field(buf_, text_utf8(*f));
      buf_.push_back('\t');
    }
    fmt::format_to(std::back_inserter(buf_), "{}\t", key.replicate);
    copy_field(buf_, text_utf8(cluster));
    fmt::format_to(std::back_inserter(buf_), "\t\t0\t\t{}\n", draw_status_name(status));
    any_not_ok_ = true;
    return buf_.size() >= kFlushBytes ? flush() : Status::Ok();
  }

  Result<Problem> finish(bool write, int64_t* draws) override {
    NF_RETURN_IF_ERROR(end_copy());
    NF_RETURN_IF_ERROR(exec(c_, "import: analyze", "ANALYZE nf_import").status());  // row counts for the planner
    // The draws of the import, each at its first row, with its cluster (one per item, or
    // the import fails before writing); those stored before are looked up once per draw.
    NF_RETURN_IF_ERROR(exec(c_, "import: draws",
                            "CREATE TEMPORARY TABLE nf_import_draws ON COMMIT DROP AS SELECT subject, item, condition, "
                            "config, replicate, min(seq) AS seq, min(cluster) AS cluster, min(status) AS status "
                            "FROM nf_import GROUP BY subject, item, condition, config, replicate")
                           .status());
    NF_ASSIGN_OR_RETURN(Res stored, exec(c_, "import: stored draws",
                                         fmt::format("SELECT s.seq, s.subject, s.item, s.condition, s.config, "
                                                     "s.replicate, d.status FROM nf_import_draws s JOIN draws d ON {} "
                                                     "WHERE d.status <> 'api_error' ORDER BY s.seq LIMIT 1",
                                                     kStageKeyJoin)));
    // A problem row of the queries below: seq, line, first_line in columns 0-2, the key at key_col.
    const auto problem_at = [](const Res& r, int key_col) {
      Problem q;
      q.seq = r.int64(0, 0);
      q.line = r.int64(0, 1);
      q.first_line = r.int64(0, 2);
      q.key = key_at(r, key_col);
      return q;
    };
    Problem p;
    if (stored.rows() > 0) {
      p.seq = stored.int64(0, 0);
      p.key = key_at(stored, 1);
      p.stored = AlreadyExists(
          fmt::format("store {}: draw {} is already stored with status {}", name_, p.key.to_string(), stored.str(0, 6)));
      NF_ASSIGN_OR_RETURN(Res l, exec(c_, "import: stored draws", "SELECT line FROM nf_import WHERE seq = $1",
                                      {num(p.seq)}));
      if (l.rows() > 0) p.line = l.int64(0, 0);
    }
    if (any_not_ok_) {
      // A row whose draw an earlier row gave another status, or a second row of a draw that
      // is not ok (rows of one draw agree on its status; a draw that is not ok has one row):
      // the first in file order, before the stored draw's row (if any).
      NF_ASSIGN_OR_RETURN(
          Res st, exec(c_, "import: draw statuses",
                       "SELECT seq, line, first_line, status, first_status, subject, item, condition, config, replicate "
                       "FROM (SELECT seq, line, status, subject, item, condition, config, replicate, "
                       "first_value(line) OVER w AS first_line, first_value(status) OVER w AS first_status, "
                       "row_number() OVER w AS n FROM nf_import WHERE seq < $1 AND (subject, item, condition, config, "
                       "replicate) IN (SELECT subject, item, condition, config, replicate FROM nf_import WHERE seq < $1 "
                       "GROUP BY 1, 2, 3, 4, 5 HAVING count(DISTINCT status) > 1 OR (min(status) <> 'ok' AND "
                       "count(*) > 1)) WINDOW w AS (PARTITION BY subject, item, condition, config, replicate ORDER BY "
                       "seq)) x WHERE n >= 2 AND (status <> first_status OR first_status <> 'ok') ORDER BY seq LIMIT 1",
                       {num(p.seq > 0 ? p.seq : std::numeric_limits<int64_t>::max())}));
      if (st.rows() > 0) {
        p = problem_at(st, 5);
        p.status = st.str(0, 3);
        p.first_status = st.str(0, 4);
      }
    }
    if (write && p.seq == 0) {
      NF_RETURN_IF_ERROR(exec(c_, "import", "SAVEPOINT nf_write").status());
      auto written = write_all();
      if (written.ok()) {
        NF_RETURN_IF_ERROR(txn_.commit());
        *draws = *written;
        return p;
      }
      // The outcomes' primary key (draw_id, name) refused a repeated (draw, outcome): the
      // first one in file order is found below. Any other error is the server's.
      if (written.status().code() != StatusCode::kAlreadyExists) return written.status();
      NF_RETURN_IF_ERROR(exec(c_, "import", "ROLLBACK TO SAVEPOINT nf_write").status());
    }
    // A repeated (draw, outcome): the second row in file order of each, the earliest one;
    // only rows before a stored draw's first row can come first.
    NF_ASSIGN_OR_RETURN(Res dup, exec(c_, "import: duplicate rows",
                                      "SELECT seq, line, first_line, subject, item, condition, config, replicate, outcome "
                                      "FROM (SELECT seq, line, subject, item, condition, config, replicate, outcome, "
                                      "first_value(line) OVER w AS first_line, row_number() OVER w AS n FROM nf_import "
                                      "WHERE seq < $1 AND (subject, item, condition, config, replicate, outcome) IN "
                                      "(SELECT subject, item, condition, config, replicate, outcome FROM nf_import "
                                      "WHERE seq < $1 GROUP BY 1, 2, 3, 4, 5, 6 HAVING count(*) > 1) "
                                      "WINDOW w AS (PARTITION BY subject, item, condition, config, replicate, outcome "
                                      "ORDER BY seq)) x WHERE n = 2 ORDER BY seq LIMIT 1",
                                      {num(p.seq > 0 ? p.seq : std::numeric_limits<int64_t>::max())}));
    if (dup.rows() > 0) {
      p = problem_at(dup, 3);
      p.outcome = dup.str(0, 8);
    }
    if (write && p.seq == 0)
      return Internal(fmt::format("store {}: import: the outcomes' key refused a row but no row repeats", name_));
    return p;  // nothing written: the transaction rolls back when this object goes
  }

 private:
  // The writes of finish(): the number of draws, or the first error (AlreadyExists: the
  // outcomes' primary key met a repeated (draw, outcome)).
  Result<int64_t> write_all() {
    const std::string request = dump_json(json()), extra = dump_json(json{{"imported", true}});
    // An api_error draw stored before is replaced (as put_draw): its outcomes go with it
    // (ON DELETE CASCADE), its judgments keep their rows with draw_id NULL (SET NULL).
    NF_RETURN_IF_ERROR(exec(c_, "import: replace api_error draws",
                            fmt::format("DELETE FROM draws d USING nf_import_draws s WHERE {} AND d.status = 'api_error'",
                                        kStageKeyJoin))
                           .status());
    // The constant columns as put_draw writes a Draw with extra {"imported": true}; the
    // status is the draw's rows' (they agree: checked above).
    NF_RETURN_IF_ERROR(
        exec(c_, "import: draws",
             fmt::format("INSERT INTO draws({}) SELECT subject, item, condition, config, replicate, cluster, status, "
                         "$1::text, ''::bytea, ''::bytea, ''::bytea, 0.0, NULL, NULL, '', '', '', false, 1, $2::text, "
                         "$3::bigint FROM nf_import_draws ORDER BY seq",
                         kDrawColumns),
             {text(request), text(extra), num(now_s())})
            .status());
    NF_ASSIGN_OR_RETURN(Res n, exec(c_, "import: draws", "SELECT count(*) FROM nf_import_draws"));
    NF_RETURN_IF_ERROR(exec(c_, "import: outcomes",
                            fmt::format("INSERT INTO outcomes(draw_id, ord, name, value, label) SELECT d.id, "
                                        "row_number() OVER (PARTITION BY d.id ORDER BY s.seq) - 1, s.outcome, s.value, "
                                        "s.label FROM nf_import s JOIN draws d ON {} WHERE s.status = 'ok'",
                                        kStageKeyJoin))
                           .status());
    NF_RETURN_IF_ERROR(exec(c_, "import: items",
                            "INSERT INTO items(item, cluster, data) SELECT item, min(cluster), $1::text FROM "
                            "nf_import_draws GROUP BY item ON CONFLICT (item) DO UPDATE SET cluster = "
                            "excluded.cluster, data = excluded.data",
                            {text(extra)})
                           .status());
    return n.int64(0, 0);
  }

  static constexpr size_t kFlushBytes = 1 << 20;

  Status flush() {
    if (buf_.empty()) return Status::Ok();
    if (PQputCopyData(c_.c, buf_.data(), static_cast<int>(buf_.size())) != 1) {
      copying_ = false;
      return c_.error(nullptr, "import: COPY");
    }
    buf_.clear();
    return Status::Ok();
  }
  Status end_copy() {
    if (!copying_) return Internal(fmt::format("store {}: import: the stream ended twice", name_));
    NF_RETURN_IF_ERROR(flush());
    copying_ = false;
    if (PQputCopyEnd(c_.c, nullptr) != 1) return c_.error(nullptr, "import: COPY");
    return drain();
  }
  // The COPY's results: the first error, if any.
  Status drain() {
    Status st = Status::Ok();
    while (PGresult* r = PQgetResult(c_.c)) {
      if (st.ok() && PQresultStatus(r) != PGRES_COMMAND_OK) st = c_.error(r, "import: COPY");
      PQclear(r);
    }
    return st;
  }

  std::unique_lock<std::mutex> lock_;
  PgStore::Conn& c_;
  const std::string& name_;
  Txn txn_;  // after lock_: rolls back first when destroyed
  bool copying_ = false;
  bool any_not_ok_ = false;  // add_draw was called: the statuses are checked at finish
  std::string buf_;
};

}  // namespace

Result<std::unique_ptr<Store::StagedImport>> PgStore::begin_staged_import() {
  auto imp = std::make_unique<PgStagedImport>(std::unique_lock(mu_), *conn_, path_);
  NF_RETURN_IF_ERROR(imp->start());
  return std::unique_ptr<StagedImport>(std::move(imp));
}

Result<std::optional<json>> PgStore::cache_get(const std::string& key) {
  std::lock_guard lock(mu_);
  NF_ASSIGN_OR_RETURN(Res r, exec(*conn_, "cache_get", "SELECT response FROM response_cache WHERE key = $1", {text(key)}));
  if (r.rows() == 0) return std::optional<json>();
  NF_ASSIGN_OR_RETURN(json j, parse_json_text(r.str(0, 0), "cached response", path_));
  return std::optional<json>(std::move(j));
}

Status PgStore::cache_put(const std::string& key, const json& response) {
  std::lock_guard lock(mu_);
  return exec(*conn_, "cache_put",
              "INSERT INTO response_cache(key, response, created_at) VALUES ($1, $2, $3) "
              "ON CONFLICT (key) DO UPDATE SET response = excluded.response, created_at = excluded.created_at",
              {text(key), text(dump_json(response)), num(now_s())})
      .status();
}

// ---- reads ----------------------------------------------------------------------------

Status PgStore::scan_outcome_codes(bool include_cached, OutcomeDictionaries* dict,
                                   const std::function<void(const OutcomeCodes&)>& fn) {
  std::lock_guard lock(mu_);
  Encoder subjects(&dict->subjects), configs(&dict->configs), conditions(&dict->conditions), items(&dict->items),
      clusters(&dict->clusters), outcomes(&dict->outcomes), labels(&dict->labels);
  OutcomeCodes oc;
  int64_t last_draw = -1;
  return for_each_row(
      *conn_, "outcome scan",
      "SELECT d.id, d.subject, d.config, d.condition, d.item, d.cluster, d.replicate, o.name, o.value, o.label "
      "FROM draws d JOIN outcomes o ON o.draw_id = d.id WHERE d.status = 'ok' AND ($1 OR NOT d.cached) "
      "ORDER BY d.id, o.ord",
      {boolean(include_cached)}, [&](const Res& r, int i) {
        const int64_t id = r.int64(i, 0);
        if (id != last_draw) {
          last_draw = id;
          oc.subject = subjects.code(r.view(i, 1));
          oc.config = configs.code(r.view(i, 2));
          oc.condition = conditions.code(r.view(i, 3));
          const std::string_view item = r.view(i, 4);
          oc.item = items.code(item);
          const std::string_view cluster = r.view(i, 5);
          oc.cluster = clusters.code(cluster.empty() ? item : cluster);
          oc.cluster_given = !cluster.empty();
          oc.replicate = static_cast<int32_t>(r.int64(i, 6));
        }
        oc.outcome = outcomes.code(r.view(i, 7));
        oc.value = r.dbl(i, 8);
        oc.label = labels.code(r.view(i, 9));
        fn(oc);
      });
}

Result<std::vector<StatusCount>> PgStore::status_counts() {
  std::lock_guard lock(mu_);
  NF_ASSIGN_OR_RETURN(Res r, exec(*conn_, "status_counts",
                                  "SELECT subject, config, condition, status, count(*) FROM draws "
                                  "GROUP BY subject, config, condition, status ORDER BY subject COLLATE \"C\", "
                                  "config COLLATE \"C\", condition COLLATE \"C\", status COLLATE \"C\""));
  std::vector<StatusCount> out;
  for (int i = 0; i < r.rows(); ++i) out.push_back({r.str(i, 0), r.str(i, 1), r.str(i, 2), r.str(i, 3), r.int64(i, 4)});
  return out;
}

Status PgStore::for_each_answer(
    const std::function<void(const std::string&, const std::string&, const std::string&, const std::string&)>& fn) {
  std::lock_guard lock(mu_);
  return for_each_row(*conn_, "for_each_answer",
                      "SELECT subject, config, status, content FROM draws WHERE status <> 'api_error' ORDER BY id", {},
                      [&](const Res& r, int i) { fn(r.str(i, 0), r.str(i, 1), r.str(i, 2), r.bytea(i, 3)); });
}

namespace {

Result<Draw> draw_from_row(const Res& r, int i, const std::string& name) {
  Draw d;
  d.key = DrawKey{r.str(i, 1), r.str(i, 2), r.str(i, 3), r.str(i, 4), static_cast<int>(r.int64(i, 5))};
  d.cluster = r.str(i, 6);
  NF_ASSIGN_OR_RETURN(d.status, parse_draw_status(r.str(i, 7)));
  NF_ASSIGN_OR_RETURN(d.request, parse_json_text(r.str(i, 8), "draw request", name));
  d.raw_response = r.bytea(i, 9);
  d.content = r.bytea(i, 10);
  d.error = r.bytea(i, 11);
  d.latency_ms = r.is_null(i, 12) ? std::nan("") : r.dbl(i, 12);
  d.prompt_tokens = r.is_null(i, 13) ? -1 : r.int64(i, 13);
  d.completion_tokens = r.is_null(i, 14) ? -1 : r.int64(i, 14);
  d.finish_reason = r.str(i, 15);
  d.served_model = r.str(i, 16);
  d.system_fingerprint = r.str(i, 17);
  d.cached = r.boolean(i, 18);
  d.attempts = static_cast<int>(r.int64(i, 19));
  NF_ASSIGN_OR_RETURN(d.extra, parse_json_text(r.str(i, 20), "draw extra", name));
  return d;
}

}  // namespace

Result<Draw> PgStore::get_draw(const DrawKey& key) {
  std::lock_guard lock(mu_);
  NF_ASSIGN_OR_RETURN(Res r, exec(*conn_, "get_draw",
                                  fmt::format("SELECT id, {} FROM draws WHERE {}", kDrawColumns, kKeyWhere),
                                  key_params(key)));
  if (r.rows() == 0) return NotFound(fmt::format("store {}: no draw {}", path_, key.to_string()));
  NF_ASSIGN_OR_RETURN(Draw d, draw_from_row(r, 0, path_));
  NF_ASSIGN_OR_RETURN(Res o, exec(*conn_, "get_draw: outcomes",
                                  "SELECT name, value, label FROM outcomes WHERE draw_id = $1 ORDER BY ord",
                                  {num(r.int64(0, 0))}));
  for (int i = 0; i < o.rows(); ++i) d.outcomes.push_back({o.str(i, 0), o.dbl(i, 1), o.str(i, 2)});
  return d;
}

Result<int64_t> PgStore::draw_count() {
  std::lock_guard lock(mu_);
  NF_ASSIGN_OR_RETURN(Res r, exec(*conn_, "draw_count", "SELECT count(*) FROM draws"));
  return r.int64(0, 0);
}

Result<int64_t> PgStore::count_key(const DrawKey& key) {
  std::lock_guard lock(mu_);
  NF_ASSIGN_OR_RETURN(Res r, exec(*conn_, "count_key", std::string("SELECT count(*) FROM draws WHERE ") + kKeyWhere,
                                  key_params(key)));
  return r.int64(0, 0);
}

// ---- judgments and human labels (schema v2) ------------------------------------------

namespace {

constexpr const char* kInsertJudgment =
    "INSERT INTO judgments(subject, subject_provider, item, cluster, judge, judge_provider, label, status, draw_id, "
    "raw_response, settings, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)";

std::vector<Param> judgment_params(const JudgmentRow& r, int64_t now) {
  return {text(r.subject),
          text(r.subject_provider),
          text(r.item),
          text(r.cluster.empty() ? r.item : r.cluster),
          text(r.judge),
          text(r.judge_provider),
          r.label ? num(static_cast<int64_t>(*r.label)) : null_param(),
          text(r.status),
          r.draw_id ? num(*r.draw_id) : null_param(),
          bytes(r.raw_response),
          text(dump_json(r.settings)),
          num(r.created_at != 0 ? r.created_at : now)};
}

}  // namespace

Status PgStore::put_judgments(const std::vector<JudgmentRow>& rows) {
  std::lock_guard lock(mu_);
  Conn& c = *conn_;
  Txn txn(c, "put_judgments");
  NF_RETURN_IF_ERROR(txn.begin());
  const int64_t now = now_s();
  for (const JudgmentRow& r : rows) {
    NF_RETURN_IF_ERROR(check_judgment(r, path_));
    // The row under the same key is locked until COMMIT, so a concurrent judge waits here.
    NF_ASSIGN_OR_RETURN(Res found, exec(c, "put_judgments: find",
                                        "SELECT id, status FROM judgments WHERE subject = $1 AND item = $2 AND "
                                        "judge = $3 AND coalesce(draw_id, 0) = $4 FOR UPDATE",
                                        {text(r.subject), text(r.item), text(r.judge), num(r.draw_id.value_or(0))}));
    if (found.rows() > 0) {
      const std::string status = found.str(0, 1);
      if (status != "api_error")
        return AlreadyExists(fmt::format("store {}: judgment {} is already stored with status {}", path_,
                                         judgment_key(r), status));
      NF_RETURN_IF_ERROR(exec(c, "put_judgments: replace api_error", "DELETE FROM judgments WHERE id = $1",
                              {num(found.int64(0, 0))})
                             .status());
    }
    auto inserted = exec(c, "put_judgments: insert", kInsertJudgment, judgment_params(r, now));
    if (!inserted.ok() && inserted.status().code() == StatusCode::kAlreadyExists)  // another writer, since the find
      return AlreadyExists(fmt::format("store {}: judgment {} was stored by another writer", path_, judgment_key(r)));
    NF_RETURN_IF_ERROR(inserted.status());
  }
  return txn.commit();
}

Status PgStore::replace_judgments(const std::vector<JudgmentRow>& rows) {
  std::lock_guard lock(mu_);
  Conn& c = *conn_;
  Txn txn(c, "replace_judgments");
  NF_RETURN_IF_ERROR(txn.begin());
  const int64_t now = now_s();
  for (const JudgmentRow& r : rows) {
    NF_RETURN_IF_ERROR(check_judgment(r, path_));
    NF_RETURN_IF_ERROR(exec(c, "replace_judgments: delete",
                            "DELETE FROM judgments WHERE judge = $3 AND (($4::bigint <> 0 AND draw_id = $4::bigint) OR "
                            "($4::bigint = 0 AND draw_id IS NULL AND subject = $1 AND item = $2))",
                            {text(r.subject), text(r.item), text(r.judge), num(r.draw_id.value_or(0))})
                           .status());
    NF_RETURN_IF_ERROR(exec(c, "replace_judgments: insert", kInsertJudgment, judgment_params(r, now)).status());
  }
  return txn.commit();
}

Result<std::vector<JudgmentRow>> PgStore::judgments() {
  std::lock_guard lock(mu_);
  std::vector<JudgmentRow> out;
  Status row_error;
  NF_RETURN_IF_ERROR(for_each_row(
      *conn_, "judgments",
      "SELECT subject, subject_provider, item, cluster, judge, judge_provider, label, status, draw_id, raw_response, "
      "settings, created_at FROM judgments ORDER BY subject COLLATE \"C\", item COLLATE \"C\", judge COLLATE \"C\", id",
      {}, [&](const Res& q, int i) {
        if (!row_error.ok()) return;
        JudgmentRow& r = out.emplace_back();
        r.subject = q.str(i, 0);
        r.subject_provider = q.str(i, 1);
        r.item = q.str(i, 2);
        r.cluster = q.str(i, 3);
        r.judge = q.str(i, 4);
        r.judge_provider = q.str(i, 5);
        if (!q.is_null(i, 6)) r.label = static_cast<int>(q.int64(i, 6));
        r.status = q.str(i, 7);
        if (!q.is_null(i, 8)) r.draw_id = q.int64(i, 8);
        r.raw_response = q.bytea(i, 9);
        auto settings = parse_json_text(q.str(i, 10), "judgment settings", path_);
        if (!settings.ok()) row_error = settings.status();
        else r.settings = std::move(*settings);
        r.created_at = q.int64(i, 11);
      }));
  NF_RETURN_IF_ERROR(row_error);
  return out;
}

Result<int64_t> PgStore::judgment_count() {
  std::lock_guard lock(mu_);
  NF_ASSIGN_OR_RETURN(Res r, exec(*conn_, "judgment_count", "SELECT count(*) FROM judgments"));
  return r.int64(0, 0);
}

Status PgStore::put_human_labels(const std::vector<HumanLabelRow>& rows) {
  std::lock_guard lock(mu_);
  Conn& c = *conn_;
  Txn txn(c, "put_human_labels");
  NF_RETURN_IF_ERROR(txn.begin());
  for (const HumanLabelRow& r : rows) {
    NF_RETURN_IF_ERROR(store_internal::check_human_label(r, path_));
    NF_ASSIGN_OR_RETURN(Res ins, exec(c, "put_human_labels: insert",
                                      "INSERT INTO human_labels(rater, subject, item, label) VALUES ($1, $2, $3, $4) "
                                      "ON CONFLICT DO NOTHING RETURNING 1",
                                      {text(r.rater), text(r.subject), text(r.item), num(static_cast<int64_t>(r.label))}));
    if (ins.rows() == 0)
      return AlreadyExists(fmt::format("store {}: human label (rater {}, subject {}, item {}) is already stored",
                                       path_, r.rater, r.subject, r.item));
  }
  return txn.commit();
}

Result<std::vector<HumanLabelRow>> PgStore::human_labels() {
  std::lock_guard lock(mu_);
  std::vector<HumanLabelRow> out;
  NF_RETURN_IF_ERROR(for_each_row(*conn_, "human_labels",
                                  "SELECT rater, subject, item, label FROM human_labels ORDER BY rater COLLATE \"C\", "
                                  "subject COLLATE \"C\", item COLLATE \"C\"",
                                  {}, [&](const Res& q, int i) {
                                    out.push_back({q.str(i, 0), q.str(i, 1), q.str(i, 2),
                                                   static_cast<int>(q.int64(i, 3))});
                                  }));
  return out;
}

Result<std::vector<Store::JudgeableDraw>> PgStore::ok_draws_for_judging() {
  std::lock_guard lock(mu_);
  std::vector<JudgeableDraw> out;
  Status row_error;
  NF_RETURN_IF_ERROR(for_each_row(
      *conn_, "ok_draws_for_judging",
      "SELECT id, subject, item, condition, config, replicate, cluster, request, content FROM draws "
      "WHERE status = 'ok' ORDER BY id",
      {}, [&](const Res& q, int i) {
        if (!row_error.ok()) return;
        JudgeableDraw d;
        d.id = q.int64(i, 0);
        d.key = DrawKey{q.str(i, 1), q.str(i, 2), q.str(i, 3), q.str(i, 4), static_cast<int>(q.int64(i, 5))};
        d.cluster = q.str(i, 6);
        auto request = parse_json_text(q.str(i, 7), "draw request", path_);
        if (!request.ok()) {
          row_error = request.status();
          return;
        }
        d.request = std::move(*request);
        d.content = q.bytea(i, 8);
        out.push_back(std::move(d));
      }));
  NF_RETURN_IF_ERROR(row_error);
  return out;
}

Result<std::map<std::pair<int64_t, std::string>, std::string>> PgStore::judgment_status_by_draw() {
  std::lock_guard lock(mu_);
  std::map<std::pair<int64_t, std::string>, std::string> out;
  NF_RETURN_IF_ERROR(for_each_row(*conn_, "judgment_status_by_draw",
                                  "SELECT draw_id, judge, status FROM judgments WHERE draw_id IS NOT NULL", {},
                                  [&](const Res& q, int i) { out[{q.int64(i, 0), q.str(i, 1)}] = q.str(i, 2); }));
  return out;
}

Result<std::map<int64_t, std::string>> PgStore::judged_draw_conditions() {
  std::lock_guard lock(mu_);
  std::map<int64_t, std::string> out;
  NF_RETURN_IF_ERROR(for_each_row(
      *conn_, "judged_draw_conditions",
      "SELECT id, condition FROM draws WHERE id IN (SELECT draw_id FROM judgments WHERE draw_id IS NOT NULL)", {},
      [&](const Res& q, int i) { out[q.int64(i, 0)] = q.str(i, 1); }));
  return out;
}

Result<std::vector<ItemRow>> PgStore::items() {
  std::lock_guard lock(mu_);
  NF_ASSIGN_OR_RETURN(Res r, exec(*conn_, "items", "SELECT item, cluster, data FROM items ORDER BY item COLLATE \"C\""));
  std::vector<ItemRow> out;
  for (int i = 0; i < r.rows(); ++i) {
    ItemRow row{r.str(i, 0), r.str(i, 1), {}};
    NF_ASSIGN_OR_RETURN(row.data, parse_json_text(r.str(i, 2), "item data", path_));
    out.push_back(std::move(row));
  }
  return out;
}

Result<std::map<std::string, json>> PgStore::subject_specs() {
  std::lock_guard lock(mu_);
  NF_ASSIGN_OR_RETURN(Res r, exec(*conn_, "subject_specs", "SELECT subject, spec FROM subjects"));
  std::map<std::string, json> out;
  for (int i = 0; i < r.rows(); ++i) {
    NF_ASSIGN_OR_RETURN(out[r.str(i, 0)], parse_json_text(r.str(i, 1), "subject spec", path_));
  }
  return out;
}

Result<std::map<std::string, std::vector<std::string>>> PgStore::served_models() {
  std::lock_guard lock(mu_);
  NF_ASSIGN_OR_RETURN(Res r, exec(*conn_, "served_models",
                                  "SELECT subject, served_model FROM draws WHERE status = 'ok' AND served_model <> '' "
                                  "GROUP BY subject, served_model ORDER BY subject COLLATE \"C\", served_model COLLATE \"C\""));
  std::map<std::string, std::vector<std::string>> out;
  for (int i = 0; i < r.rows(); ++i) out[r.str(i, 0)].push_back(r.str(i, 1));
  return out;
}

Result<std::optional<std::string>> PgStore::meta_value(const std::string& key) {
  std::lock_guard lock(mu_);
  NF_ASSIGN_OR_RETURN(Res r, exec(*conn_, "read meta", "SELECT value FROM meta WHERE key = $1", {text(key)}));
  if (r.rows() == 0) return std::optional<std::string>();
  return std::optional<std::string>(r.str(0, 0));
}

Status PgStore::set_meta_value(const std::string& key, const std::string& value) {
  NF_RETURN_IF_ERROR(store_internal::check_meta_key_writable(key));
  std::lock_guard lock(mu_);
  return exec(*conn_, "write meta",
              "INSERT INTO meta(key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
              {text(key), text(value)})
      .status();
}

Result<std::unordered_set<std::string>> PgStore::refreshed_keys(const std::string& refresh_id) {
  std::lock_guard lock(mu_);
  NF_ASSIGN_OR_RETURN(Res r, exec(*conn_, "refreshed_keys",
                                  "SELECT subject, item, condition, config, replicate FROM draws WHERE status <> "
                                  "'api_error' AND (extra::json ->> 'refresh') = $1",
                                  {text(refresh_id)}));
  std::unordered_set<std::string> keys;
  for (int i = 0; i < r.rows(); ++i)
    keys.insert(DrawKey{r.str(i, 0), r.str(i, 1), r.str(i, 2), r.str(i, 3), static_cast<int>(r.int64(i, 4))}.to_string());
  return keys;
}

namespace {
constexpr const char* kKeyOrder =
    "subject COLLATE \"C\", item COLLATE \"C\", condition COLLATE \"C\", config COLLATE \"C\", replicate";
}  // namespace

Status PgStore::export_jsonl(std::ostream& out) {
  std::lock_guard lock(mu_);
  Status row_error;
  // The draws with their outcomes aggregated per draw, in draw-key order (as SQLite's export).
  NF_RETURN_IF_ERROR(for_each_row(
      *conn_, "export_jsonl",
      fmt::format("SELECT id, {}, (SELECT coalesce(json_agg(json_build_array(o.name, o.value, o.label) ORDER BY o.ord), "
                  "'[]') FROM outcomes o WHERE o.draw_id = d.id) FROM draws d ORDER BY {}",
                  kDrawColumns, kKeyOrder),
      {}, [&](const Res& r, int i) {
        if (!row_error.ok()) return;
        auto d = draw_from_row(r, i, path_);
        if (!d.ok()) {
          row_error = d.status();
          return;
        }
        json j;
        j["subject"] = d->key.subject;
        j["item"] = d->key.item;
        j["condition"] = d->key.condition;
        j["config"] = d->key.config;
        j["config_axes"] = json::object();
        for (const auto& [axis, value] : config_axes(d->key.config)) j["config_axes"][axis] = axis_value_json(value);
        j["replicate"] = d->key.replicate;
        j["cluster"] = d->cluster;
        j["status"] = draw_status_name(d->status);
        j["request"] = d->request;
        j["response"] = d->raw_response;
        j["content"] = d->content;
        j["error"] = d->error;
        j["latency_ms"] = std::isnan(d->latency_ms) ? json(nullptr) : json(d->latency_ms);
        j["prompt_tokens"] = d->prompt_tokens < 0 ? json(nullptr) : json(d->prompt_tokens);
        j["completion_tokens"] = d->completion_tokens < 0 ? json(nullptr) : json(d->completion_tokens);
        j["finish_reason"] = d->finish_reason;
        j["served_model"] = d->served_model;
        j["system_fingerprint"] = d->system_fingerprint;
        j["cached"] = d->cached;
        j["attempts"] = d->attempts;
        j["extra"] = d->extra;
        j["created_at"] = r.int64(i, 21);
        json outs = json::array();
        auto agg = parse_json_text(r.str(i, 22), "outcomes", path_);
        if (!agg.ok()) {
          row_error = agg.status();
          return;
        }
        for (const auto& o : *agg) outs.push_back({{"name", o[0]}, {"value", o[1].get<double>()}, {"label", o[2]}});
        j["outcomes"] = std::move(outs);
        out << dump_json(j) << '\n';
      }));
  NF_RETURN_IF_ERROR(row_error);
  out.flush();
  if (!out) return DataLoss("export_jsonl: write failed");
  return Status::Ok();
}

Status PgStore::export_csv(std::ostream& out) {
  std::lock_guard lock(mu_);
  std::vector<std::string> axes;
  {
    NF_ASSIGN_OR_RETURN(Res c, exec(*conn_, "export_csv: configs",
                                    "SELECT config FROM draws GROUP BY config ORDER BY config COLLATE \"C\""));
    for (int i = 0; i < c.rows(); ++i)
      for (const auto& [axis, value] : config_axes(c.str(i, 0)))
        if (std::find(axes.begin(), axes.end(), axis) == axes.end()) axes.push_back(axis);
  }
  out << "subject,item,cluster,condition,config,replicate,status,outcome,value,label";
  for (const auto& a : axes) out << ',' << csv_field(a);
  out << '\n';
  NF_RETURN_IF_ERROR(for_each_row(
      *conn_, "export_csv",
      // A draw that is not ok and has no outcomes gets one row with empty outcome, value and
      // label (as SQLite's export); an ok draw without outcomes none.
      "SELECT d.subject, d.item, d.cluster, d.condition, d.config, d.replicate, d.status, o.name, o.value, o.label "
      "FROM draws d LEFT JOIN outcomes o ON o.draw_id = d.id WHERE o.draw_id IS NOT NULL OR d.status <> 'ok' "
      "ORDER BY d.subject COLLATE \"C\", d.item COLLATE \"C\", "
      "d.condition COLLATE \"C\", d.config COLLATE \"C\", d.replicate, o.ord",
      {}, [&](const Res& r, int i) {
        write_csv_row(out, [&](int c) { return r.str(i, c); }, [&](int c) { return r.int64(i, c); },
                      [&](int c) { return r.dbl(i, c); }, axes, /*no_outcome=*/r.is_null(i, 7));
      }));
  out.flush();
  if (!out) return DataLoss("export_csv: write failed");
  return Status::Ok();
}

// ---- the shared plan ------------------------------------------------------------------

Status PgStore::plan_draw_keys(const std::vector<DrawKey>& keys) {
  std::lock_guard lock(mu_);
  Conn& c = *conn_;
  // Chunks of 1,000 keys (5,000 parameters), each its own statement; in plan order.
  for (size_t start = 0; start < keys.size(); start += 1000) {
    const size_t end = std::min(keys.size(), start + 1000);
    std::string sql = "INSERT INTO planned_draws(subject, item, condition, config, replicate) VALUES ";
    std::vector<Param> p;
    for (size_t i = start; i < end; ++i) {
      const size_t b = p.size();
      sql += fmt::format("{}(${}, ${}, ${}, ${}, ${})", i > start ? ", " : "", b + 1, b + 2, b + 3, b + 4, b + 5);
      for (auto& x : key_params(keys[i])) p.push_back(std::move(x));
    }
    sql += " ON CONFLICT DO NOTHING";
    NF_RETURN_IF_ERROR(exec(c, "plan_draw_keys", sql, p).status());
  }
  // Draws already stored (e.g. by `run`) are done; api_error draws are retried.
  const char* join =
      "d.subject = p.subject AND d.item = p.item AND d.condition = p.condition AND d.config = p.config AND "
      "d.replicate = p.replicate";
  // Two workers re-planning at once may deadlock on these multi-row updates; the server
  // aborts one (sqlstate 40P01), which simply runs its statement again.
  auto run_retrying = [&](const std::string& sql) -> Status {
    for (int attempt = 1;; ++attempt) {
      Status st = exec(c, "plan_draw_keys", sql).status();
      if (st.ok() || attempt == 5 || st.message().find("sqlstate 40P01") == std::string::npos) return st;
    }
  };
  NF_RETURN_IF_ERROR(run_retrying(fmt::format(
      "UPDATE planned_draws p SET done = true FROM draws d WHERE NOT p.done AND {} AND d.status <> 'api_error'", join)));
  return run_retrying(fmt::format(
      "UPDATE planned_draws p SET done = false, lease_owner = NULL, lease_until = NULL FROM draws d "
      "WHERE p.done AND {} AND d.status = 'api_error'",
      join));
}

Result<std::vector<DrawKey>> PgStore::claim_draws(const std::string& worker, int n, double lease_s) {
  std::lock_guard lock(mu_);
  NF_ASSIGN_OR_RETURN(
      Res r, exec(*conn_, "claim_draws",
                  "UPDATE planned_draws SET lease_owner = $1, lease_until = now() + make_interval(secs => $3), "
                  "claims = claims + 1 WHERE id IN (SELECT id FROM planned_draws WHERE NOT done AND "
                  "(lease_until IS NULL OR lease_until < now()) ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED) "
                  "RETURNING id, subject, item, condition, config, replicate",
                  {text(worker), num(static_cast<int64_t>(n)), num(lease_s)}));
  std::vector<std::pair<int64_t, DrawKey>> rows;
  for (int i = 0; i < r.rows(); ++i)
    rows.push_back({r.int64(i, 0), DrawKey{r.str(i, 1), r.str(i, 2), r.str(i, 3), r.str(i, 4),
                                           static_cast<int>(r.int64(i, 5))}});
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<DrawKey> out;
  for (auto& [id, k] : rows) out.push_back(std::move(k));
  return out;
}

Status PgStore::renew_leases(const std::string& worker, double lease_s) {
  std::lock_guard lock(mu_);
  return exec(*conn_, "renew_leases",
              "UPDATE planned_draws SET lease_until = now() + make_interval(secs => $2) "
              "WHERE lease_owner = $1 AND NOT done",
              {text(worker), num(lease_s)})
      .status();
}

Result<Store::PlanCounts> PgStore::plan_counts() {
  std::lock_guard lock(mu_);
  NF_ASSIGN_OR_RETURN(Res r, exec(*conn_, "plan_counts",
                                  "SELECT count(*), count(*) FILTER (WHERE done), count(*) FILTER (WHERE NOT done AND "
                                  "lease_until >= now()) FROM planned_draws"));
  return PlanCounts{r.int64(0, 0), r.int64(0, 1), r.int64(0, 2)};
}

// ---- run lock (Store::hold_run_lock) ---------------------------------------------------

namespace {

// The advisory lock's first key (the second is the store's schema, hashed): one lock per
// store, also when several studies share a database in different schemas.
constexpr const char* kRunLockKeys = "4711, hashtext(current_schema()) & 2147483647";

class PgRunLock final : public RunLock {
 public:
  PgRunLock(PgStore::Conn& conn, std::mutex& mu, bool shared) : conn_(conn), mu_(mu), shared_(shared) {}
  ~PgRunLock() override {
    std::lock_guard lock(mu_);
    PQclear(PQexec(conn_.c, fmt::format("SELECT pg_advisory_unlock{}({})", shared_ ? "_shared" : "", kRunLockKeys)
                                .c_str()));
  }

 private:
  PgStore::Conn& conn_;
  std::mutex& mu_;
  bool shared_;
};

}  // namespace

Result<std::unique_ptr<RunLock>> PgStore::hold_run_lock(const std::string& holder, bool shared) {
  std::lock_guard lock(mu_);
  Conn& c = *conn_;
  char host[256] = {0};
  if (gethostname(host, sizeof host - 1) != 0) host[0] = '?';
  // application_name is what the other process sees in pg_stat_activity (63 bytes kept).
  const std::string note = fmt::format("{} pid {} on {}", holder, getpid(), host);
  NF_RETURN_IF_ERROR(
      exec(c, "run lock", "SELECT set_config('application_name', $1, false)", {text(note.substr(0, 63))}).status());
  NF_ASSIGN_OR_RETURN(Res got, exec(c, "run lock",
                                    fmt::format("SELECT pg_try_advisory_lock{}({})", shared ? "_shared" : "",
                                                kRunLockKeys)));
  if (got.boolean(0, 0)) return std::unique_ptr<RunLock>(std::make_unique<PgRunLock>(c, mu_, shared));
  // Who holds it: the sessions holding the lock (not this one), by application_name.
  NF_ASSIGN_OR_RETURN(Res who, exec(c, "run lock",
                                    fmt::format("SELECT string_agg(DISTINCT coalesce(nullif(a.application_name, ''), "
                                                "'server pid ' || a.pid) || ' (' || l.mode || ')', '; ') "
                                                "FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
                                                "WHERE l.locktype = 'advisory' AND l.granted AND l.classid = 4711 "
                                                "AND l.objid = (hashtext(current_schema()) & 2147483647)::oid "
                                                "AND l.objsubid = 2 AND l.pid <> pg_backend_pid()")));
  const std::string holders = who.rows() > 0 && !who.is_null(0, 0) ? who.str(0, 0) : "holder not visible";
  return FailedPrecondition(fmt::format(
      "store {} is in use by another noisefloor process ({}): {}. Wait for it to finish (or stop it: Ctrl-C / kill "
      "PID; the server drops the lock of a process that died), then run this command again",
      path(), holders,
      shared ? "a `run`, `audit` or `judge` holds it alone, and workers must not call the API for the same draws"
             : "two processes on one store would both call the API for the same missing draws or votes (workers "
               "share a store through `noisefloor worker`, which leases the draws)"));
}

}  // namespace nf
