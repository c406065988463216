// The PostgreSQL implementation of Store (docs/store.md "PostgreSQL"): one database (or
// one schema, chosen by the URL's search_path) per study, shared by any number of
// `noisefloor worker` processes on any number of machines. Same tables and write rules
// as the SQLite store (judgments and human labels included, schema v2), plus
// `planned_draws` (the shared plan with leases). Internal to
// src/store; open it through Store::open("postgresql://...").
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "store/run_lock.h"
#include "store/store.h"

struct pg_conn;

namespace nf {

class PgStore final : public Store {
 public:
  /// Connects to `url` (a libpq connection URI, e.g. postgresql://user@host/db or
  /// postgresql:///db?host=/run/postgresql&options=-csearch_path%3Dmystudy), creates the
  /// first schema of search_path if it does not exist, and creates the tables if absent
  /// (under an advisory lock, so concurrent workers create them once). Errors: Unavailable
  /// if the server cannot be reached or refuses the login; FailedPrecondition if the
  /// database holds a newer noisefloor schema; DataLoss for any other server error. An
  /// older schema (v1: no judgments) is migrated in place under the same lock.
  static Result<std::unique_ptr<Store>> open(const std::string& url);

  ~PgStore() override;
  std::string kind() const override { return "PostgreSQL store"; }

  using Store::export_csv;
  using Store::export_jsonl;
  Result<std::string> put_study(const StudyRecord& study) override;
  Result<StudyRecord> get_study() override;
  using Store::put_items;  // the McqItem overload (converts, then the ItemRow one)
  Status put_items(const std::vector<ItemRow>& items) override;
  Status put_item(const std::string& id, const std::string& cluster, const nlohmann::json& data) override;
  Status put_subject(const std::string& name, const nlohmann::json& spec) override;
  Status put_config(const std::string& id, const nlohmann::json& spec) override;
  Result<std::unordered_set<std::string>> finished_keys() override;
  Status put_draw(const Draw& draw) override;
  Status put_draw_with_cache(const Draw& draw, const std::vector<CacheEntry>& cache) override;
  /// No leader/follower queue on PostgreSQL: the same as put_draw_with_cache (`run` and
  /// `worker` commit through put_draw_group / put_claimed_draw_group instead).
  Status put_draw_grouped(const Draw& draw, const std::vector<CacheEntry>& cache) override;
  using DrawGroup = std::vector<std::pair<const Draw*, const std::vector<CacheEntry>*>>;
  /// The group in one transaction (docs/store.md "PostgreSQL"): draws put_draw would
  /// refuse before writing (NaN value, negative replicate, repeated outcome name) get
  /// their status and are left out; every other draw whose key is not stored goes in ONE
  /// multi-row statement (one round trip for the group); the rest (a stored key: an
  /// api_error draw is replaced, another status is AlreadyExists; a key repeated in the
  /// group; every draw if the server refused the statement) one by one, each under its
  /// own savepoint so a refused draw fails alone. Returns the transaction's status (not
  /// ok: nothing written); a deadlock with another worker (40P01) is retried twice.
  Status put_draw_group(const DrawGroup& group, std::vector<Status>* statuses) override;
  /// put_draw_group that also marks each stored draw's planned row done, as
  /// put_claimed_draw does (also for an AlreadyExists draw: another worker stored it).
  Status put_claimed_draw_group(const DrawGroup& group, std::vector<Status>* statuses) override;
  Status replace_draw(const Draw& draw) override;
  Status put_draws(const std::vector<Draw>& draws) override;
  /// Unimplemented: `import draws` streams into PostgreSQL through begin_staged_import.
  Result<std::unique_ptr<BulkImport>> begin_bulk_import() override;
  /// `import draws` (docs/store.md "PostgreSQL"): BEGIN; a temporary table nf_import
  /// (ON COMMIT DROP) filled by COPY ... FROM STDIN (text format, sent in 1 MiB chunks);
  /// check() and commit() are set-based statements over it in the same transaction. Holds
  /// the store's lock (and so its connection) until destroyed.
  Result<std::unique_ptr<StagedImport>> begin_staged_import() override;
  Result<std::optional<nlohmann::json>> cache_get(const std::string& key) override;
  Status cache_put(const std::string& key, const nlohmann::json& response) override;
  Status scan_outcome_codes(bool include_cached, OutcomeDictionaries* dict,
                            const std::function<void(const OutcomeCodes&)>& fn) override;
  Result<std::vector<StatusCount>> status_counts() override;
  Status for_each_answer(
      const std::function<void(const std::string& subject, const std::string& config, const std::string& status,
                               const std::string& content)>& fn) override;
  Result<Draw> get_draw(const DrawKey& key) override;
  Result<int64_t> draw_count() override;
  Result<int64_t> count_key(const DrawKey& key) override;
  // Judgments and human labels (schema v2): the SQLite store's rules (store.h), the same
  // unique key (subject, item, judge, coalesce(draw_id, 0)) and the same messages.
  Status put_judgments(const std::vector<JudgmentRow>& rows) override;
  Result<std::vector<JudgmentRow>> judgments() override;
  Result<int64_t> judgment_count() override;
  Status put_human_labels(const std::vector<HumanLabelRow>& rows) override;
  Result<std::vector<HumanLabelRow>> human_labels() override;
  Result<std::vector<ItemRow>> items() override;
  Status export_jsonl(std::ostream& out) override;
  Status export_csv(std::ostream& out) override;
  Result<std::vector<JudgeableDraw>> ok_draws_for_judging() override;
  Result<std::map<std::pair<int64_t, std::string>, std::string>> judgment_status_by_draw() override;
  Result<std::map<std::string, nlohmann::json>> subject_specs() override;
  Result<std::map<std::string, std::vector<std::string>>> served_models() override;
  Result<std::map<int64_t, std::string>> judged_draw_conditions() override;
  Status replace_judgments(const std::vector<JudgmentRow>& rows) override;
  Result<std::optional<std::string>> meta_value(const std::string& key) override;
  Status set_meta_value(const std::string& key, const std::string& value) override;
  Result<std::unordered_set<std::string>> refreshed_keys(const std::string& refresh_id) override;

  Status plan_draw_keys(const std::vector<DrawKey>& keys) override;
  Result<std::vector<DrawKey>> claim_draws(const std::string& worker, int n, double lease_s) override;
  Status renew_leases(const std::string& worker, double lease_s) override;
  Status put_claimed_draw(const Draw& draw, const std::vector<CacheEntry>& cache) override;
  Result<PlanCounts> plan_counts() override;
  /// The run lock of this store (store/run_lock.h hold_run_lock): a session advisory lock
  /// keyed by the store's schema on this store's connection, named by application_name.
  Result<std::unique_ptr<RunLock>> hold_run_lock(const std::string& holder, bool shared);

  struct Conn;  // the libpq connection and its helpers (pg_store.cc)

 private:
  PgStore(std::string display, std::unique_ptr<Conn> conn);
  Status create_schema();
  // Writes one draw (+ cache entries) inside the caller's transaction (caller holds mu_).
  Status write_draw_locked(const Draw& draw, const std::vector<CacheEntry>& cache, int64_t now);
  Status put_draw_txn(const Draw& draw, const std::vector<CacheEntry>& cache, bool mark_planned);
  Status put_group(const DrawGroup& group, std::vector<Status>* statuses, bool mark_planned);
  Status put_group_locked(const DrawGroup& group, std::vector<Status>* statuses, bool mark_planned);

  std::unique_ptr<Conn> conn_;
  std::mutex mu_;  // one connection, used by one thread at a time
};

}  // namespace nf
