// The SQLite store: one file per study, WAL mode, versioned schema (docs/store.md).
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
#include <unordered_set>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/types.h"
#include "util/status.h"

struct sqlite3;

namespace nf {

/// The schema version this build writes. Opening a newer store is FailedPrecondition;
/// an older one is migrated in place.
inline constexpr int kStoreSchemaVersion = 2;

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
  /// Opens (creating if needed) the store at `path`, sets WAL mode, foreign keys and a
  /// busy timeout, and creates or migrates the schema. Parent directories are created.
  /// Errors: DataLoss if the file is not a SQLite database or its schema is corrupt;
  /// FailedPrecondition if its schema version is newer than this build's.
  static Result<std::unique_ptr<Store>> open(const std::string& path);
  /// Like open() but NotFound if `path` does not exist (for `analyze`).
  static Result<std::unique_ptr<Store>> open_existing(const std::string& path);

  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  const std::string& path() const { return path_; }

  /// Records the study (one per store). A later call replaces the record (e.g. a study
  /// extended with more replicates); the previous hash is returned ("" if none).
  Result<std::string> put_study(const StudyRecord& study);
  /// The study record, or NotFound if none was written.
  Result<StudyRecord> get_study();

  /// Upserts items: id, cluster and the item as JSON. One transaction for all.
  Status put_items(const std::vector<McqItem>& items);
  /// Upserts generic items (id, cluster, data) — used by imports.
  Status put_item(const std::string& id, const std::string& cluster, const nlohmann::json& data);
  /// Upserts a subject / a config description.
  Status put_subject(const std::string& name, const nlohmann::json& spec);
  Status put_config(const std::string& id, const nlohmann::json& spec);

  /// DrawKey::to_string() of every stored draw whose status is not api_error: the draws
  /// a resumed run must not repeat. (api_error draws are retried on resume.)
  Result<std::unordered_set<std::string>> finished_keys();

  /// Writes one draw and its outcomes in a single transaction. If a draw with the same
  /// key exists with status api_error it is replaced; if it exists with another status
  /// the call fails with AlreadyExists and nothing is written. InvalidArgument (nothing
  /// written) if the replicate is negative, an outcome value is NaN or an outcome name
  /// repeats within the draw.
  Status put_draw(const Draw& draw);
  /// One response-cache entry (key as runner/runner.h cache_key builds it).
  struct CacheEntry {
    std::string key;
    nlohmann::json response;
  };
  /// put_draw plus the draw's response-cache entries in the same transaction: one commit
  /// per draw instead of one per call and one for the draw (the run's hot path). A cache
  /// entry with an existing key is overwritten. Errors as put_draw; nothing is written
  /// on error.
  Status put_draw_with_cache(const Draw& draw, const std::vector<CacheEntry>& cache);
  /// put_draw_with_cache with group commit (issue 14 item 5): the calling thread's draw
  /// joins the draws other threads are committing at the same moment; one of the waiting
  /// threads writes the whole group in one transaction (each draw under its own
  /// savepoint, so one draw's error leaves the others) and every caller returns only
  /// after the transaction holding its draw has committed. No timer: a group is whatever
  /// arrived while the previous commit ran, so a lone thread commits at once. Returns this
  /// draw's own status (errors as put_draw_with_cache; a failed COMMIT fails the group).
  /// A SIGKILL loses only draws whose call has not returned.
  Status put_draw_grouped(const Draw& draw, const std::vector<CacheEntry>& cache);
  /// Writes one draw, replacing any stored draw with the same key (whatever its status)
  /// and its outcomes, in a single transaction (`run --refresh`). Judgments of the
  /// replaced draw are deleted with it (they judged an answer that no longer exists; the
  /// next `noisefloor judge` judges the new one). InvalidArgument as put_draw.
  Status replace_draw(const Draw& draw);
  /// Writes many draws in one transaction (imports). Same rules as put_draw.
  Status put_draws(const std::vector<Draw>& draws);

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
    Status add_outcome(const DrawKey& key, const std::string& cluster, const Outcome& o, bool* duplicate);
    /// Upserts an item with its cluster and data {"imported": true}, as put_item.
    Status put_item(const std::string& id, const std::string& cluster);
    /// Commits everything added. After an error from any call, do not commit.
    Status commit();
    /// Draws this import created so far.
    int64_t draws() const { return draws_; }

   private:
    friend class Store;
    struct Impl;
    explicit BulkImport(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
    int64_t draws_ = 0;
  };
  /// Starts a BulkImport (BEGIN IMMEDIATE). Errors: DataLoss / Unavailable from SQLite.
  Result<std::unique_ptr<BulkImport>> begin_bulk_import();

  /// The response cache. Keys must include the replicate index (runner/cache_key.h).
  Result<std::optional<nlohmann::json>> cache_get(const std::string& key);
  Status cache_put(const std::string& key, const nlohmann::json& response);

  /// Every outcome of every ok draw, ordered by subject, config, condition, outcome,
  /// item, replicate. `include_cached` = false leaves out draws served from the cache.
  Result<std::vector<OutcomeRow>> outcome_rows(bool include_cached = true);
  /// Streams every outcome of every ok draw (in storage order, NOT sorted) as integer
  /// codes, growing `dict` with each new string (src/store/outcome_frame.cc). Memory is
  /// the dictionaries plus 28 bytes per draw id (the draws' codes, read first);
  /// `include_cached` as outcome_rows. Errors: DataLoss on a read failure.
  Status scan_outcome_codes(bool include_cached, OutcomeDictionaries* dict,
                            const std::function<void(const OutcomeCodes&)>& fn);
  /// scan_outcome_codes collected into columns (rows in storage order).
  Result<OutcomeFrame> outcome_frame(bool include_cached = true);
  /// Draw counts by status.
  Result<std::vector<StatusCount>> status_counts();
  /// Calls fn(subject, config, status, content) for every stored draw that is not an
  /// api_error (the model answered), in id order, streaming rows (for the parse rate by
  /// reply language, metrics/reply_language.h). Errors: DataLoss on a read failure.
  Status for_each_answer(
      const std::function<void(const std::string& subject, const std::string& config, const std::string& status,
                               const std::string& content)>& fn);
  /// One stored draw, or NotFound.
  Result<Draw> get_draw(const DrawKey& key);
  /// Number of stored draws (any status).
  Result<int64_t> draw_count();
  /// Number of stored draws with exactly this key (0 or 1; for crash tests).
  Result<int64_t> count_key(const DrawKey& key);

  /// Writes judgments in one transaction (all or nothing). A row whose key (subject, item,
  /// judge, draw_id) exists with status api_error is replaced (re-judging is resumable);
  /// with any other status the call fails with AlreadyExists naming the key and nothing
  /// is written. InvalidArgument if a label is not 0/1, the status is unknown, an ok row
  /// has no label, or subject/item/judge is empty. Source: seed 004 §2.6 (judge panel).
  Status put_judgments(const std::vector<JudgmentRow>& rows);
  /// Every stored judgment (any status), ordered by subject, item, judge, id.
  Result<std::vector<JudgmentRow>> judgments();
  /// Number of stored judgments (any status).
  Result<int64_t> judgment_count();
  /// Writes human labels in one transaction (all or nothing). AlreadyExists on a
  /// duplicate (rater, subject, item), InvalidArgument if a label is not 0/1 or a key
  /// field is empty. Source: seed 004 §3.4.
  Status put_human_labels(const std::vector<HumanLabelRow>& rows);
  /// Every stored human label, ordered by rater, subject, item.
  Result<std::vector<HumanLabelRow>> human_labels();
  /// Every stored item (id, cluster, data), ordered by id.
  Result<std::vector<ItemRow>> items();

  /// Writes every draw with its outcomes as JSON Lines / one outcome per CSV row, in draw-key
  /// order (subject, item, condition, config, replicate), to a file (written atomically) or a
  /// stream (e.g. stdout). Each varying config axis is also a column of its own (CSV:
  /// `temperature`, `top_p`, `seed`, `max_tokens`, `template` after the fixed columns, numbers
  /// as numbers, empty for a null seed; JSONL: `config_axes`). Errors: DataLoss on a write
  /// failure, the store's read errors.
  Status export_jsonl(const std::string& out_path);
  Status export_csv(const std::string& out_path);
  Status export_jsonl(std::ostream& out);
  Status export_csv(std::ostream& out);

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
  Result<std::vector<JudgeableDraw>> ok_draws_for_judging();
  /// The status of every stored judgment that references a draw, keyed by
  /// (draw_id, judge): what a resumed `noisefloor judge` must not repeat.
  Result<std::map<std::pair<int64_t, std::string>, std::string>> judgment_status_by_draw();
  /// The stored spec of every subject (table `subjects`), by name.
  Result<std::map<std::string, nlohmann::json>> subject_specs();
  /// The distinct served model names (draws.served_model, "" left out) of each subject's
  /// ok draws: the model ids as served, for provenance pins (GRID card, seed 003 §7).
  Result<std::map<std::string, std::vector<std::string>>> served_models();
  /// The condition of every draw that some judgment references, by draws.id (for the
  /// judge rates by condition; imports without draws are absent).
  Result<std::map<int64_t, std::string>> judged_draw_conditions();
  /// Writes judgments in one transaction (all or nothing), first deleting whatever the
  /// same judge stored for the same draw (any status, any unit name), or for a row without
  /// a draw the judgment with the same (subject, item, judge) (`judge --refresh`).
  /// InvalidArgument as put_judgments.
  Status replace_judgments(const std::vector<JudgmentRow>& rows);

 private:
  Store(std::string path, sqlite3* db);
  Status migrate();
  Status put_draw_locked(const Draw& draw);
  // One transaction for a group of draws (caller holds mu_); per-draw statuses.
  Status put_draw_group_locked(const std::vector<std::pair<const Draw*, const std::vector<CacheEntry>*>>& group,
                               std::vector<Status>* statuses);
  Status cache_put_locked(const std::string& key, const nlohmann::json& response, int64_t now);

  std::string path_;
  sqlite3* db_ = nullptr;
  std::mutex mu_;
  // Statements of the per-draw hot path (draw insert with outcomes, cache get/put),
  // prepared on first use and reused under mu_ (store.cc). Finalized before close.
  struct HotStatements;
  std::unique_ptr<HotStatements> hot_;
  // Group commit queue (put_draw_grouped; store/group_commit.cc).
  struct GroupCommit;
  std::unique_ptr<GroupCommit> group_;
};

}  // namespace nf
