// The store interface (docs/store.md): every completed draw, its outcomes, the study
// record, items, judgments and the response cache. Two implementations: SqliteStore (one
// file per study, WAL mode; src/store/sqlite_store.h, the embedded default) and PgStore
// (a PostgreSQL database shared by many `noisefloor worker` processes; pg_store.h).
// Store::open picks one from the path or URL.
//
// Every completed draw is committed in its own transaction before the runner counts
// it, and draws are unique on (subject, item, condition, config, replicate), so a
// SIGKILL at any moment loses at most the draws in flight and never duplicates one.
// A Store is safe to use from several threads (calls are serialised internally).
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/types.h"
#include "util/status.h"

namespace nf {

/// The schema version this build writes. Opening a newer store is FailedPrecondition;
/// an older one is migrated in place.
inline constexpr int kStoreSchemaVersion = 4;

/// One ok draw's outcome, flattened for analyses.
struct OutcomeRow {
  std::string subject, config, condition, item, cluster;
  int replicate = 0;
  std::string outcome;
  double value = 0.0;
  std::string label;
};

/// The string dictionaries of an integer-coded outcome scan: code -> string, one per
/// key column, codes in first-seen order (not sorted).
struct OutcomeDictionaries {
  std::vector<std::string> subjects, configs, conditions, items, clusters, outcomes, labels;
};

/// One ok draw's outcome with every key as a dictionary code (OutcomeDictionaries).
/// `cluster` is the draw's cluster, or the item's name when the draw has none (as
/// compute_floor reads it; `cluster_given` is then false).
struct OutcomeCodes {
  uint32_t subject = 0, config = 0, condition = 0, item = 0, cluster = 0, outcome = 0, label = 0;
  int32_t replicate = 0;
  double value = 0.0;
  bool cluster_given = true;
};

/// The ok outcomes as integer-coded columns plus the dictionaries (issue 14): 41 bytes
/// per outcome and one string per distinct key, instead of six strings per outcome.
struct OutcomeFrame {
  OutcomeDictionaries dict;
  std::vector<uint32_t> subject, config, condition, item, cluster, outcome, label;
  std::vector<int32_t> replicate;
  std::vector<double> value;
  std::vector<uint8_t> cluster_given;
  size_t size() const { return value.size(); }
};

/// Draw counts per (subject, config, condition, status) for reports.
struct StatusCount {
  std::string subject, config, condition, status;
  int64_t count = 0;
};

struct StudyRecord {
  std::string name;
  std::string hash;        // SHA-256 of the study file text ("" for imports)
  int64_t seed = 0;
  nlohmann::json spec;     // the study as JSON (for provenance)
};

/// One vote of one judge on one subject's answer to one item (schema v2, table
/// `judgments`; docs/store.md). Imported votes have no draw; votes written by
/// `noisefloor judge` reference the judged draw and record the judge's generation
/// settings. `label` is 1 (criterion met, e.g. "appropriate"), 0, or nullopt for a
/// missing vote; only rows with status "ok" and a label are votes (API failures and
/// parse errors never are).
struct JudgmentRow {
  std::string subject, subject_provider, item, cluster, judge, judge_provider;
  std::optional<int> label;
  std::string status = "ok";         // ok | parse_error | api_error
  std::optional<int64_t> draw_id;    // draws.id of the judged draw; nullopt for imports
  std::string raw_response;          // the judge's raw reply ("" for imports)
  nlohmann::json settings = nlohmann::json::object();  // judge generation settings
  int64_t created_at = 0;            // unix seconds; 0 = set by the store on write
};

/// One human rating of one subject's answer to one item (table `human_labels`).
struct HumanLabelRow {
  std::string rater, subject, item;
  int label = 0;  // 1 / 0
};

/// One stored item: id, cluster and the item's JSON data (metadata such as audit strata).
struct ItemRow {
  std::string item, cluster;
  nlohmann::json data;
};

class Store {
 public:
  /// Opens (creating if needed) the store `path`: a `postgresql://` or `postgres://` URL
  /// (libpq connection URI) opens a PgStore (pg_store.h), anything else is a SQLite file
  /// (SqliteStore::open: WAL mode, foreign keys, busy timeout, schema created or migrated,
  /// parent directories created). Errors: DataLoss if the file is not a SQLite database
  /// or its schema is corrupt; FailedPrecondition "store PATH: the file | its folder DIR
  /// is not writable, and this command writes to the store ..." for a read-only store
  /// (open_for_reading reads one); FailedPrecondition if its schema version is newer than
  /// this build's; Unavailable if the PostgreSQL server cannot be reached.
  static Result<std::unique_ptr<Store>> open(const std::string& path);
  /// Like open() but never creates a SQLite store (judge, read commands): NotFound "no such store" if `path` does
  /// not exist; DataLoss "not a noisefloor store" if it is empty or has no tables (left as it was). URL: as open().
  static Result<std::unique_ptr<Store>> open_existing(const std::string& path);
  /// For commands that only read (analyze, export, check): like open_existing(), but a
  /// SQLite store this process cannot write (the file or its folder not writable, e.g.
  /// after chmod a-w) is opened read-only (open_read_only) instead of failing on the
  /// first write of the open (WAL mode, migration). A writable store is opened as by
  /// open_existing() (an old schema is migrated; a missing or empty file is refused).
  static Result<std::unique_ptr<Store>> open_for_reading(const std::string& path);
  /// Opens an existing SQLite store read-only: nothing is written, not even the journal
  /// mode. If its folder is read-only too, SQLite cannot create the -shm file a WAL
  /// reader needs; the file is then read as immutable (`immutable=1`: another process
  /// must not write it meanwhile), unless a non-empty -wal file holds changes not yet in
  /// the file (FailedPrecondition: the folder must be made writable once). Every write
  /// fails (SQLite: "attempt to write a readonly database", naming the store). Errors:
  /// NotFound, InvalidArgument (a directory), DataLoss (not a store, or an empty file),
  /// FailedPrecondition (a newer schema, or an older one, which needs a write to
  /// migrate). A PostgreSQL URL is opened as by open().
  static Result<std::unique_ptr<Store>> open_read_only(const std::string& path);
  /// True if `path` names a PostgreSQL store (starts with postgresql:// or postgres://).
  static bool is_postgresql_url(const std::string& path);

  virtual ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  /// The file path (SQLite) or the URL without its password (PostgreSQL), for messages.

  const std::string& path() const { return path_; }

  /// Records the study (one per store). A later call replaces the record (e.g. a study
  /// extended with more replicates); the previous hash is returned ("" if none).
  virtual Result<std::string> put_study(const StudyRecord& study) = 0;
  /// The study record, or NotFound if none was written.
  virtual Result<StudyRecord> get_study() = 0;

  /// Upserts items: id, cluster and the item as JSON. One transaction for all.
  Status put_items(const std::vector<McqItem>& items);
  /// Upserts generic items (id, cluster, data) — used by imports.
  virtual Status put_item(const std::string& id, const std::string& cluster, const nlohmann::json& data) = 0;
  /// put_item for many items in one transaction (all or nothing; an empty cluster means
  /// the item is its own cluster). `run` writes its dataset's items with it: one commit
  /// instead of one per item. The McqItem overload above stores each item as
  /// {question, options: [{letter, text}], answer, meta} through this one.
  virtual Status put_items(const std::vector<ItemRow>& items) = 0;
  /// Upserts a subject / a config description.
  virtual Status put_subject(const std::string& name, const nlohmann::json& spec) = 0;
  virtual Status put_config(const std::string& id, const nlohmann::json& spec) = 0;

  /// DrawKey::to_string() of every stored draw whose status is not api_error: the draws
  /// a resumed run must not repeat. (api_error draws are retried on resume.)
  virtual Result<std::unordered_set<std::string>> finished_keys() = 0;

  /// Writes one draw and its outcomes in a single transaction. If a draw with the same
  /// key exists with status api_error it is replaced; if it exists with another status
  /// the call fails with AlreadyExists and nothing is written. InvalidArgument (nothing
  /// written) if the replicate is negative, an outcome value is NaN or an outcome name
  /// repeats within the draw.
  virtual Status put_draw(const Draw& draw) = 0;
  /// One response-cache entry (key as runner/runner.h cache_key builds it).
  struct CacheEntry {
    std::string key;
    nlohmann::json response;
  };
  /// put_draw plus the draw's response-cache entries in the same transaction: one commit
  /// per draw instead of one per call and one for the draw (the run's hot path). A cache
  /// entry with an existing key is overwritten. Errors as put_draw; nothing is written
  /// on error.
  virtual Status put_draw_with_cache(const Draw& draw, const std::vector<CacheEntry>& cache) = 0;
  /// put_draw_with_cache with group commit (issue 14 item 5): the calling thread's draw
  /// joins the draws other threads are committing at the same moment; one of the waiting
  /// threads writes the whole group in one transaction (each draw under its own
  /// savepoint, so one draw's error leaves the others) and every caller returns only
  /// after the transaction holding its draw has committed. No timer: a group is whatever
  /// arrived while the previous commit ran, so a lone thread commits at once. Returns this
  /// draw's own status (errors as put_draw_with_cache; a failed COMMIT fails the group).
  /// A SIGKILL loses only draws whose call has not returned.
  virtual Status put_draw_grouped(const Draw& draw, const std::vector<CacheEntry>& cache) = 0;
  /// A group of draws (each with its cache entries) written in one transaction by the
  /// caller: each draw under its own savepoint, so one draw's error leaves the others;
  /// `*statuses` gets one status per draw (errors as put_draw_with_cache). Returns the
  /// transaction's status: when it is not ok (BEGIN or COMMIT failed) nothing was
  /// written. For a runner that hands draws to one committing thread (runner.cc) and
  /// counts each only once this returns. Empty group: no transaction. Default:
  /// put_draw_with_cache per draw (one transaction each); SQLite overrides.
  virtual Status put_draw_group(const std::vector<std::pair<const Draw*, const std::vector<CacheEntry>*>>& group,
                                std::vector<Status>* statuses);
  /// Writes one draw, replacing any stored draw with the same key (whatever its status)
  /// and its outcomes, in a single transaction (`run --refresh`). Judgments of the
  /// replaced draw are deleted with it (they judged an answer that no longer exists; the
  /// next `noisefloor judge` judges the new one). InvalidArgument as put_draw.
  virtual Status replace_draw(const Draw& draw) = 0;
  /// Writes many draws in one transaction (imports). Same rules as put_draw.
  virtual Status put_draws(const std::vector<Draw>& draws) = 0;

  /// A streaming import of ok draws given outcome by outcome (`noisefloor import draws`
  /// of a long file of any size; issue 14): memory does not grow with the number of
  /// rows. It holds the store's lock and one write transaction from begin_bulk_import()
  /// until commit(): all or nothing (destroying it uncommitted rolls back). Call no other
  /// Store method while one is alive (the lock is held).
  class BulkImport {
   public:
    ~BulkImport();
    BulkImport(const BulkImport&) = delete;
    BulkImport& operator=(const BulkImport&) = delete;
    /// Adds outcome `o` to the ok draw `key` (stored on first sight with `cluster`,
    /// status ok and extra {"imported": true}; rows of one draw need not be adjacent, but
    /// adjacent rows are fastest). `*duplicate` is set true (and nothing written) when
    /// this import already gave the draw an outcome of that name. Errors: AlreadyExists
    /// if the draw was stored before this import with a status other than api_error (an
    /// api_error draw is replaced, as put_draw does); InvalidArgument for a negative
    /// replicate or a NaN value; DataLoss on a write failure.
    /// Also FailedPrecondition if this import stored the draw with a status other than ok
    /// (add_draw): the rows of one draw disagree on its status.
    Status add_outcome(const DrawKey& key, const std::string& cluster, const Outcome& o, bool* duplicate);
    /// Stores the draw `key` with status `status` (parse_error, refused or api_error) and
    /// no outcomes (`cluster`, extra {"imported": true} as add_outcome). `*duplicate` is set
    /// true (nothing written) when this import already stored the draw with that status.
    /// Errors: FailedPrecondition if this import gave the draw another status (outcomes of
    /// an ok draw, or another status); AlreadyExists as add_outcome (a stored api_error
    /// draw is replaced); InvalidArgument for status ok or a negative replicate.
    Status add_draw(const DrawKey& key, const std::string& cluster, DrawStatus status, bool* duplicate);
    /// Upserts an item with its cluster and data {"imported": true}, as put_item.
    Status put_item(const std::string& id, const std::string& cluster);
    /// Commits everything added. After an error from any call, do not commit.
    Status commit();
    /// Draws this import created so far.
    int64_t draws() const { return draws_; }

   private:
    friend class Store;
    friend class SqliteStore;
    struct Impl;
    explicit BulkImport(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
    int64_t draws_ = 0;
  };
  /// Starts a BulkImport (BEGIN IMMEDIATE). Errors: DataLoss / Unavailable from SQLite.
  virtual Result<std::unique_ptr<BulkImport>> begin_bulk_import() = 0;

  /// A staged import of ok draws given outcome by outcome: `noisefloor import draws` into a
  /// PostgreSQL store (issue 14; runner/import.h). Rows stream to the server as they come
  /// (COPY into a temporary table, each with its place in the file) and are checked and
  /// written by set-based statements at the end, all in one transaction: nothing is
  /// written unless commit() succeeds (destroying it uncommitted rolls back). Client
  /// memory does not grow with the rows. Call no other Store method while one is alive.
  class StagedImport {
   public:
    virtual ~StagedImport();
    /// Queues outcome `o` of the ok draw `key` (cluster as BulkImport::add_outcome) from
    /// the file's line `line`; `seq` orders the rows (strictly increasing in file order;
    /// several rows may share a line). Errors: DataLoss / Unavailable from the server.
    virtual Status add(const DrawKey& key, const std::string& cluster, const Outcome& o, int64_t line, int64_t seq) = 0;
    /// Queues the draw `key` with status `status` (not ok) and no outcomes, from the
    /// file's line `line` (`seq` as add). Default Unimplemented.
    virtual Status add_draw(const DrawKey& key, const std::string& cluster, DrawStatus status, int64_t line,
                            int64_t seq);
    /// The first problem in file order among the rows added, as BulkImport would meet it
    /// row by row: a row repeating an earlier row's (draw, outcome) (a second row of a
    /// draw added by add_draw: outcome ""), a row whose draw an earlier row gave another
    /// status, or the first row of a draw stored before this import with a status other
    /// than api_error.
    struct Problem {
      int64_t seq = 0;         // 0: no problem
      int64_t line = 0;        // the row's line
      int64_t first_line = 0;  // duplicate, status conflict: the line of the earlier row
      DrawKey key;
      std::string outcome;     // duplicate: the outcome name
      Status stored;           // stored draw: AlreadyExists, worded as put_draw words it
      std::string status, first_status;  // status conflict (non-empty): this row's, the earlier row's
    };
    /// Ends the stream and looks for the first Problem. With `write` and no problem:
    /// replaces the stored api_error draws among the keys (their outcomes deleted, their
    /// judgments unlinked, as put_draw), writes every draw (status ok, extra {"imported":
    /// true}, ids in order of first row) with its outcomes (ord = order of first
    /// appearance), upserts each item with its cluster and data {"imported": true},
    /// commits, and sets `*draws` to the number of draws written. Returns the Problem
    /// (seq 0: none, and committed if `write`); on a Problem, or without `write`, nothing
    /// is written. Call once. Errors: the server's (nothing written).
    virtual Result<Problem> finish(bool write, int64_t* draws) = 0;
  };
  /// Starts a StagedImport. Default Unimplemented (the SQLite store streams through
  /// begin_bulk_import instead); PostgreSQL offers it.
  virtual Result<std::unique_ptr<StagedImport>> begin_staged_import();

  /// The response cache. Keys must include the replicate index (runner/cache_key.h).
  virtual Result<std::optional<nlohmann::json>> cache_get(const std::string& key) = 0;
  virtual Status cache_put(const std::string& key, const nlohmann::json& response) = 0;

  /// Every outcome of every ok draw, ordered by subject, config, condition, outcome,
  /// item, replicate. `include_cached` = false leaves out draws served from the cache.
  Result<std::vector<OutcomeRow>> outcome_rows(bool include_cached = true);
  /// Streams every outcome of every ok draw (in storage order, NOT sorted) as integer
  /// codes, growing `dict` with each new string (src/store/outcome_frame.cc). Memory is
  /// the dictionaries plus 28 bytes per draw id (the draws' codes, read first; SQLite);
  /// `include_cached` as outcome_rows. Errors: DataLoss on a read failure.
  virtual Status scan_outcome_codes(bool include_cached, OutcomeDictionaries* dict,
                                    const std::function<void(const OutcomeCodes&)>& fn) = 0;
  /// scan_outcome_codes collected into columns (rows in storage order).
  Result<OutcomeFrame> outcome_frame(bool include_cached = true);
  /// Draw counts by status.
  virtual Result<std::vector<StatusCount>> status_counts() = 0;
  /// Calls fn(subject, config, status, content) for every stored draw that is not an
  /// api_error (the model answered), in id order, streaming rows (for the parse rate by
  /// reply language, metrics/reply_language.h). Errors: DataLoss on a read failure.
  virtual Status for_each_answer(
      const std::function<void(const std::string& subject, const std::string& config, const std::string& status,
                               const std::string& content)>& fn) = 0;
  /// status_counts() and for_each_answer(fn) from one read of the draws (analyze needs
  /// both): the same counts in the same order, and fn(subject, config, status, content) for
  /// every draw that is not an api_error, in id order (the views are valid during the call
  /// only). The SQLite store reads the draws table once instead of twice (issue 14); this
  /// default calls the two. Errors: DataLoss on a read failure.
  virtual Result<std::vector<StatusCount>> status_counts_and_answers(
      const std::function<void(std::string_view subject, std::string_view config, std::string_view status,
                               std::string_view content)>& fn);
  /// One stored draw, or NotFound.
  virtual Result<Draw> get_draw(const DrawKey& key) = 0;
  /// Number of stored draws (any status).
  virtual Result<int64_t> draw_count() = 0;
  /// Number of stored draws with exactly this key (0 or 1; for crash tests).
  virtual Result<int64_t> count_key(const DrawKey& key) = 0;

  /// Writes judgments in one transaction (all or nothing). A row whose key (subject, item,
  /// judge, draw_id) exists with status api_error is replaced (re-judging is resumable);
  /// with any other status the call fails with AlreadyExists naming the key and nothing
  /// is written. InvalidArgument if a label is not 0/1, the status is unknown, an ok row
  /// has no label, or subject/item/judge is empty. Source: seed 004 §2.6 (judge panel).
  virtual Status put_judgments(const std::vector<JudgmentRow>& rows) = 0;
  /// Every stored judgment (any status), ordered by subject, item, judge, id.
  virtual Result<std::vector<JudgmentRow>> judgments() = 0;
  /// Number of stored judgments (any status).
  virtual Result<int64_t> judgment_count() = 0;
  /// Writes human labels in one transaction (all or nothing). AlreadyExists on a
  /// duplicate (rater, subject, item), InvalidArgument if a label is not 0/1 or a key
  /// field is empty. Source: seed 004 §3.4.
  virtual Status put_human_labels(const std::vector<HumanLabelRow>& rows) = 0;
  /// Every stored human label, ordered by rater, subject, item.
  virtual Result<std::vector<HumanLabelRow>> human_labels() = 0;
  /// Every stored item (id, cluster, data), ordered by id.
  virtual Result<std::vector<ItemRow>> items() = 0;

  /// Writes every draw with its outcomes as JSON Lines / one outcome per CSV row, in draw-key
  /// order (subject, item, condition, config, replicate), to a file (written atomically) or a
  /// stream (e.g. stdout). Each varying config axis is also a column of its own (CSV:
  /// `temperature`, `top_p`, `seed`, `max_tokens`, `template` after the fixed columns, numbers
  /// as numbers, empty for a null seed; JSONL: `config_axes`). Errors: DataLoss on a write
  /// failure, the store's read errors.
  Status export_jsonl(const std::string& out_path);
  Status export_csv(const std::string& out_path);
  virtual Status export_jsonl(std::ostream& out) = 0;
  virtual Status export_csv(std::ostream& out) = 0;

  // ---- judging stored draws (runner/judge.h; seed 004 §2.6) ----

  /// One stored ok draw as a judge sees it: its id, key, cluster, the request actually
  /// sent (JSON; {"messages": [...]} for chat draws) and the answer text.
  struct JudgeableDraw {
    int64_t id = 0;
    DrawKey key;
    std::string cluster;
    nlohmann::json request;
    std::string content;
  };
  /// Every draw with status ok, ordered by id.
  virtual Result<std::vector<JudgeableDraw>> ok_draws_for_judging() = 0;
  /// The status of every stored judgment that references a draw, keyed by
  /// (draw_id, judge): what a resumed `noisefloor judge` must not repeat.
  virtual Result<std::map<std::pair<int64_t, std::string>, std::string>> judgment_status_by_draw() = 0;
  /// The stored spec of every subject (table `subjects`), by name.
  virtual Result<std::map<std::string, nlohmann::json>> subject_specs() = 0;
  /// The distinct served model names (draws.served_model, "" left out) of each subject's
  /// ok draws: the model ids as served, for provenance pins (GRID card, seed 003 §7).
  virtual Result<std::map<std::string, std::vector<std::string>>> served_models() = 0;
  /// The condition of every draw that some judgment references, by draws.id (for the
  /// judge rates by condition; imports without draws are absent).
  virtual Result<std::map<int64_t, std::string>> judged_draw_conditions() = 0;
  /// Writes judgments in one transaction (all or nothing), first deleting whatever the
  /// same judge stored for the same draw (any status, any unit name), or for a row without
  /// a draw the judgment with the same (subject, item, judge) (`judge --refresh`).
  /// InvalidArgument as put_judgments.
  virtual Status replace_judgments(const std::vector<JudgmentRow>& rows) = 0;

  /// The run state a command keeps between processes, in the `meta` table every schema
  /// version has (key -> text; no migration): the value of `key`, nullopt when unset. Keys
  /// the store owns (schema_version, created_by, tool_version) are read-only through
  /// set_meta_value. Used for `run --refresh` (runner.h RunSummary::refresh, meta key
  /// "refresh"). Errors: DataLoss on a read failure.
  virtual Result<std::optional<std::string>> meta_value(const std::string& key) = 0;
  /// Sets `key` to `value` in `meta` (one transaction). InvalidArgument for a key the store
  /// owns; DataLoss on a write failure.
  virtual Status set_meta_value(const std::string& key, const std::string& value) = 0;
  /// The keys (DrawKey::to_string) of the draws, other than api_error ones, whose extra
  /// holds "refresh": `refresh_id` (written by the `run --refresh` with that id, or after
  /// it started: runner.cc). Errors: DataLoss on a read failure.
  virtual Result<std::unordered_set<std::string>> refreshed_keys(const std::string& refresh_id) = 0;


  // ---- planned draws shared by many workers (`noisefloor worker`; docs/store.md) ----
  // Offered by the PostgreSQL store only; SqliteStore answers Unimplemented.

  /// Progress of the shared plan (table planned_draws).
  struct PlanCounts {
    int64_t planned = 0;  // rows in planned_draws
    int64_t done = 0;     // rows whose draw is committed
    int64_t leased = 0;   // not done, held by a worker whose lease has not expired
  };
  /// Writes the plan once: inserts every key not yet planned (idempotent; any number of
  /// workers may call it at once), and re-opens planned rows whose stored draw is an
  /// api_error (so a restarted worker retries them, as `run` does on resume).
  virtual Status plan_draw_keys(const std::vector<DrawKey>& keys);
  /// Claims up to `n` planned draws that are not done and not leased (or whose lease
  /// expired), leasing them to `worker` for `lease_s` seconds (SELECT ... FOR UPDATE SKIP
  /// LOCKED: concurrent claims never return the same row). Empty when none is free.
  virtual Result<std::vector<DrawKey>> claim_draws(const std::string& worker, int n, double lease_s);
  /// Extends every lease `worker` holds on a not-done draw to now + `lease_s`.
  virtual Status renew_leases(const std::string& worker, double lease_s);
  /// Stores a claimed draw (with its cache entries) and marks its planned row done in one
  /// transaction. AlreadyExists if the key is stored with a status other than api_error
  /// (another worker took it over after this lease expired); the row is then marked done.
  virtual Status put_claimed_draw(const Draw& draw, const std::vector<CacheEntry>& cache);
  /// put_draw_group for claimed draws (the worker's committing thread): each stored draw's
  /// planned row is marked done in the same transaction, also for an AlreadyExists draw
  /// (as put_claimed_draw). Default: put_claimed_draw per draw.
  virtual Status put_claimed_draw_group(
      const std::vector<std::pair<const Draw*, const std::vector<CacheEntry>*>>& group, std::vector<Status>* statuses);
  /// Counts of the shared plan.
  virtual Result<PlanCounts> plan_counts();
  /// "SQLite store" or "PostgreSQL store" (for messages).
  virtual std::string kind() const = 0;

 protected:
  explicit Store(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

}  // namespace nf
