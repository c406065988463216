// The SQLite implementation of Store (store.cc, group_commit.cc, outcome_frame.cc): one
// file per study, WAL mode, versioned schema (docs/store.md). Internal to src/store; the
// rest of noisefloor opens stores through Store::open.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "store/store.h"

struct sqlite3;

namespace nf {

class SqliteStore final : public Store {
 public:
  /// Opens (creating if needed) the SQLite store at `path`, sets WAL mode, foreign keys
  /// and a busy timeout, and creates or migrates the schema. Parent directories are
  /// created. Errors: DataLoss if the file is not a SQLite database or its schema is
  /// corrupt; FailedPrecondition if its schema version is newer than this build's.
  static Result<std::unique_ptr<Store>> open(const std::string& path);
  /// open() of a file that must already be a noisefloor store (Store::open_existing,
  /// open_for_reading): an empty file or a SQLite database without tables is refused
  /// (DataLoss "... is not a noisefloor store: ...") instead of given a new schema.
  static Result<std::unique_ptr<Store>> open_store(const std::string& path);
  /// Opens the existing SQLite store at `path` read-only (Store::open_read_only).
  static Result<std::unique_ptr<Store>> open_read_only(const std::string& path);

  ~SqliteStore() override;
  std::string kind() const override { return "SQLite store"; }

  using Store::export_csv;
  using Store::export_jsonl;
  Result<std::string> put_study(const StudyRecord& study) override;
  Result<StudyRecord> get_study() override;
  using Store::put_items;  // the McqItem overload (converts, then the ItemRow one)
  Status put_item(const std::string& id, const std::string& cluster, const nlohmann::json& data) override;
  Status put_items(const std::vector<ItemRow>& items) override;
  Status put_subject(const std::string& name, const nlohmann::json& spec) override;
  Status put_config(const std::string& id, const nlohmann::json& spec) override;
  Result<std::unordered_set<std::string>> finished_keys() override;
  Status put_draw(const Draw& draw) override;
  Status put_draw_with_cache(const Draw& draw, const std::vector<CacheEntry>& cache) override;
  Status put_draw_grouped(const Draw& draw, const std::vector<CacheEntry>& cache) override;
  Status put_draw_group(const std::vector<std::pair<const Draw*, const std::vector<CacheEntry>*>>& group,
                        std::vector<Status>* statuses) override;
  Status replace_draw(const Draw& draw) override;
  Status put_draws(const std::vector<Draw>& draws) override;
  Result<std::unique_ptr<BulkImport>> begin_bulk_import() override;
  Result<std::optional<nlohmann::json>> cache_get(const std::string& key) override;
  Status cache_put(const std::string& key, const nlohmann::json& response) override;
  Status scan_outcome_codes(bool include_cached, OutcomeDictionaries* dict,
                            const std::function<void(const OutcomeCodes&)>& fn) override;
  Result<std::vector<StatusCount>> status_counts() override;
  Status for_each_answer(
      const std::function<void(const std::string& subject, const std::string& config, const std::string& status,
                               const std::string& content)>& fn) override;
  Result<std::vector<StatusCount>> status_counts_and_answers(
      const std::function<void(std::string_view subject, std::string_view config, std::string_view status,
                               std::string_view content)>& fn) override;
  /// status_counts_answers_and_outcome_codes (store/combined_scan.h) with one read of draws.
  Result<std::vector<StatusCount>> status_counts_answers_and_outcome_codes(
      const std::function<void(std::string_view subject, std::string_view config, std::string_view status,
                               std::string_view content)>& answer_fn,
      bool include_cached, OutcomeDictionaries* dict, const std::function<void(const OutcomeCodes&)>& fn,
      Status* outcome_status);
  Result<Draw> get_draw(const DrawKey& key) override;
  Result<int64_t> draw_count() override;
  Result<int64_t> count_key(const DrawKey& key) override;
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

 private:
  SqliteStore(std::string path, sqlite3* db);
  // open() (`create`: a file without a schema gets one) and open_store() (refused).
  static Result<std::unique_ptr<Store>> open_sqlite(const std::string& path, bool create);
  Status migrate();
  Status put_draw_locked(const Draw& draw);
  // scan_outcome_codes, and with `tally` also status_counts_and_answers from the same read
  // of the draws (outcome_frame.cc); caller holds mu_.
  struct StatusTally;
  Status scan_codes_locked(bool include_cached, OutcomeDictionaries* dict,
                           const std::function<void(const OutcomeCodes&)>& fn, StatusTally* tally);
  // Memory-maps the file for this connection's reads (scans; outcome_frame.cc).
  void map_for_scans();
  // One transaction for a group of draws (caller holds mu_); per-draw statuses.
  Status put_draw_group_locked(const std::vector<std::pair<const Draw*, const std::vector<CacheEntry>*>>& group,
                               std::vector<Status>* statuses);
  Status cache_put_locked(const std::string& key, const nlohmann::json& response, int64_t now);

  sqlite3* db_ = nullptr;
  std::mutex mu_;
  // Statements of the per-draw hot path (draw insert with outcomes, cache get/put),
  // prepared on first use and reused under mu_ (store.cc). Finalized before close.
  struct HotStatements;
  std::unique_ptr<HotStatements> hot_;
  // Group commit queue (put_draw_grouped; store/group_commit.cc).
  struct GroupCommit;
  std::unique_ptr<GroupCommit> group_;
  bool mapped_ = false;  // map_for_scans ran
};

}  // namespace nf
