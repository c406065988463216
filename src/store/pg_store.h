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
  /// No group commit on PostgreSQL: the same as put_draw_with_cache.
  Status put_draw_grouped(const Draw& draw, const std::vector<CacheEntry>& cache) override;
  Status replace_draw(const Draw& draw) override;
  Status put_draws(const std::vector<Draw>& draws) override;
  /// Unimplemented (`import draws` needs a SQLite store; docs/store.md).
  Result<std::unique_ptr<BulkImport>> begin_bulk_import() override;
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

  Status plan_draw_keys(const std::vector<DrawKey>& keys) override;
  Result<std::vector<DrawKey>> claim_draws(const std::string& worker, int n, double lease_s) override;
  Status renew_leases(const std::string& worker, double lease_s) override;
  Status put_claimed_draw(const Draw& draw, const std::vector<CacheEntry>& cache) override;
  Result<PlanCounts> plan_counts() override;

  struct Conn;  // the libpq connection and its helpers (pg_store.cc)

 private:
  PgStore(std::string display, std::unique_ptr<Conn> conn);
  Status create_schema();
  // Writes one draw (+ cache entries) inside the caller's transaction (caller holds mu_).
  Status write_draw_locked(const Draw& draw, const std::vector<CacheEntry>& cache, int64_t now);
  Status put_draw_txn(const Draw& draw, const std::vector<CacheEntry>& cache, bool mark_planned);

  std::unique_ptr<Conn> conn_;
  std::mutex mu_;  // one connection, used by one thread at a time
};

}  // namespace nf
