#include "runner/import.h"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>

#include "data/import_messages.h"
#include "runner/import_plan.h"
#include "runner/import_staged.h"

namespace nf {

namespace {

/// The common tail of every import: the study record (if the store has none), the items
/// with their clusters, then every draw in one transaction.
Status write_imported(std::map<DrawKey, Draw>& draws, const std::map<std::string, std::string>& item_cluster,
                      const std::map<std::string, nlohmann::json>& item_data, Store& store, const StudyRecord& study) {
  auto existing = store.get_study();
  if (!existing.ok()) NF_RETURN_IF_ERROR(store.put_study(study).status());
  for (const auto& [item, cluster] : item_cluster) {
    auto d = item_data.find(item);
    NF_RETURN_IF_ERROR(store.put_item(item, cluster, d == item_data.end() ? nlohmann::json{{"imported", true}} : d->second));
  }
  std::vector<Draw> all;
  all.reserve(draws.size());
  for (auto& [k, d] : draws) all.push_back(std::move(d));
  return store.put_draws(all);
}

Status note_cluster(std::map<std::string, std::string>& item_cluster, const std::string& item,
                    const std::string& cluster) {
  auto [it, inserted] = item_cluster.emplace(item, cluster);
  if (!inserted && it->second != cluster)
    return InvalidArgument(two_clusters_message(item, it->second, cluster));
  return Status::Ok();
}

}  // namespace

std::string status_counts_text(const std::array<int64_t, 4>& by_status) {
  std::string out;
  for (const DrawStatus st : {DrawStatus::kOk, DrawStatus::kParseError, DrawStatus::kRefused, DrawStatus::kApiError})
    if (const int64_t n = by_status[static_cast<size_t>(st)]; n > 0)
      out += fmt::format("{}{} {}", out.empty() ? "" : ", ", draw_status_name(st), n);
  return out;
}

namespace {

// The error for the row on `line` of `path` whose draw (not ok, or ok where an earlier row
// made it not ok) the store met before in this import: a status conflict or a second row.
Status status_row_problem(const std::string& path, size_t line, const DrawKey& key, DrawStatus status) {
  size_t first = 0;
  DrawStatus first_status = DrawStatus::kOk;
  if (!find_long_draw_first(path, key, &first, &first_status) || first == line)
    return Internal(fmt::format("{}:{}: import {}: the store found an earlier row of the draw, the file none", path,
                                line, key.to_string()));
  if (first_status != status)
    return status_conflict_error(path, line, key, draw_status_name(status), first, draw_status_name(first_status));
  return second_status_row_error(path, line, key, draw_status_name(status), first);
}

}  // namespace

Result<ImportSummary> import_long_draws(const std::vector<LongDrawRow>& rows, Store& store,
                                        const std::string& study_name) {
  ImportSummary sum;
  sum.rows = static_cast<int64_t>(rows.size());
  std::map<DrawKey, Draw> draws;
  std::map<std::string, std::string> item_cluster;
  NF_ASSIGN_OR_RETURN(const std::optional<StoredPlan> plan, StoredPlan::of(store));
  size_t row_no = 0;
  for (const auto& r : rows) {
    ++row_no;
    const std::string cluster = r.cluster.empty() ? r.item : r.cluster;
    NF_RETURN_IF_ERROR(note_cluster(item_cluster, r.item, cluster));
    DrawKey key{r.subject, r.item, r.condition, r.config, r.replicate};
    if (plan && !plan->planned(key)) return plan->check(key, fmt::format("row {}", row_no));
    Draw& d = draws[key];
    d.key = key;
    d.cluster = cluster;
    d.status = r.status;  // read_long_draws: the rows of one draw agree on it
    d.extra = {{"imported", true}};
    if (r.status == DrawStatus::kOk) d.outcomes.push_back({r.outcome, r.value, r.label});
  }
  sum.draws = static_cast<int64_t>(draws.size());
  for (const auto& [k, d] : draws) ++sum.by_status[static_cast<size_t>(d.status)];
  sum.items = static_cast<int64_t>(item_cluster.size());
  NF_RETURN_IF_ERROR(write_imported(draws, item_cluster, {}, store,
                                    StudyRecord{study_name, "", 0, {{"name", study_name}, {"imported", true}}}));
  return sum;
}

namespace {

// A block of parsed rows handed from the parsing thread to the writing one (import draws),
// in delta form: per row its numbers and which string fields changed from the previous row
// (LongDrawRow::changed); the changed strings themselves, in row order and bit order, go
// to `text` (each as its size_t length, then its bytes). The writer keeps the previous
// row's strings and copies only the changed ones (issue 14: copying all seven strings of
// every row into the block was a tenth of the parsing thread's time).
struct RowBlock {
  struct Row {
    size_t line;
    double value;
    int replicate;
    uint16_t changed;  // LongDrawRow::changed (7 bits)
    uint8_t status;    // LongDrawRow::status, as its integer (the row stays 24 bytes)
  };
  std::vector<Row> rows;
  std::string text;
  size_t n = 0;

  void put(const std::string& s) {
    const size_t size = s.size();
    text.append(reinterpret_cast<const char*>(&size), sizeof size);
    text.append(s);
  }
  // Reads the next string put (at *pos) into `s`.
  void take(size_t* pos, std::string& s) const {
    size_t size = 0;
    std::memcpy(&size, text.data() + *pos, sizeof size);
    s.assign(text.data() + *pos + sizeof size, size);
    *pos += sizeof size + size;
  }
};

// Runs for_each_long_draw(path) on a thread of its own, in blocks of kRows rows with at
// most kBlocks blocks in existence, so memory stays bounded (issue 14: the CSV parse and
// conversion is about a quarter of `import draws`' CPU, and overlaps the SQLite writes on
// a second core). Blocks come out in file order; the parser's own error comes after the
// last row before it, so errors are reported as in a single-threaded scan.
class ParsedRows {
 public:
  static constexpr size_t kRows = 8192, kBlocks = 4;  // a hand-over (mutex, wake-up) per 8,192 rows

  /// `checks` (the value checks of data/draws_import.h) must outlive this object.
  ParsedRows(const std::string& path, const LongDrawChecks& checks) : checks_(checks) {
    for (size_t i = 0; i < kBlocks; ++i) {
      free_.push_back(std::make_unique<RowBlock>());
      // Reserved, not resized: the parsing thread writes (and so first touches) the pages,
      // not the calling thread, which is the import's critical path.
      free_.back()->rows.reserve(kRows);
    }
    thread_ = std::thread([this, path] { parse(path); });
  }
  ~ParsedRows() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  ParsedRows(const ParsedRows&) = delete;
  ParsedRows& operator=(const ParsedRows&) = delete;

  /// The next block in file order; nullptr at the end (then status() is the parser's).
  std::unique_ptr<RowBlock> next() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return !full_.empty() || done_; });
    if (full_.empty()) return nullptr;
    std::unique_ptr<RowBlock> b = std::move(full_.front());
    full_.pop_front();
    return b;
  }
  /// Gives a block back for reuse (its strings keep their capacity).
  void recycle(std::unique_ptr<RowBlock> b) {
    b->n = 0;
    b->text.clear();
    {
      std::lock_guard lock(mu_);
      free_.push_back(std::move(b));
    }
    cv_.notify_all();
  }
  Status status() {
    std::lock_guard lock(mu_);
    return status_;
  }
  /// The reader's value warnings; complete once next() has returned nullptr.
  std::vector<std::string> warnings() {
    std::lock_guard lock(mu_);
    return warnings_;
  }

 private:
  std::unique_ptr<RowBlock> take_free() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return !free_.empty() || stop_; });
    if (stop_) return nullptr;
    std::unique_ptr<RowBlock> b = std::move(free_.back());
    free_.pop_back();
    return b;
  }
  void hand_over(std::unique_ptr<RowBlock> b) {
    {
      std::lock_guard lock(mu_);
      full_.push_back(std::move(b));
    }
    cv_.notify_all();
  }
  void parse(const std::string& path) {
    std::unique_ptr<RowBlock> cur = take_free();
    Status st = Status::Ok();
    std::vector<std::string> parsed_warnings;  // the parsing thread's own until handed over
    if (cur) {
      st = for_each_long_draw(path, [&](const LongDrawRow& r, size_t line) -> Status {
        RowBlock& b = *cur;
        // The first row of the scan has every bit set, so the writer starts from it.
        const unsigned ch = r.changed;
        const RowBlock::Row row{line, r.value, r.replicate, static_cast<uint16_t>(ch), static_cast<uint8_t>(r.status)};
        if (b.n < b.rows.size()) b.rows[b.n] = row;
        else b.rows.push_back(row);  // the block's first use (capacity reserved)
        if (ch & LongDrawRow::kChangedSubject) b.put(r.subject);
        if (ch & LongDrawRow::kChangedItem) b.put(r.item);
        if (ch & LongDrawRow::kChangedCluster) b.put(r.cluster);
        if (ch & LongDrawRow::kChangedCondition) b.put(r.condition);
        if (ch & LongDrawRow::kChangedConfig) b.put(r.config);
        if (ch & LongDrawRow::kChangedOutcome) b.put(r.outcome);
        if (ch & LongDrawRow::kChangedLabel) b.put(r.label);
        if (++b.n == kRows) {
          hand_over(std::move(cur));
          cur = take_free();
          if (!cur) return Internal("import stopped");  // the writer quit; never reported
        }
        return Status::Ok();
      }, checks_, &parsed_warnings);
    }
    if (cur && cur->n > 0) hand_over(std::move(cur));
    {
      std::lock_guard lock(mu_);
      warnings_ = std::move(parsed_warnings);
      status_ = st;
      done_ = true;
    }
    cv_.notify_all();
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::unique_ptr<RowBlock>> full_;
  std::vector<std::unique_ptr<RowBlock>> free_;
  bool done_ = false, stop_ = false;
  Status status_ = Status::Ok();
  std::vector<std::string> warnings_;
  const LongDrawChecks& checks_;
  std::thread thread_;
};

}  // namespace

Result<ImportSummary> import_long_draws_file(const std::string& path, Store& store, const std::string& study_name,
                                             const LongDrawChecks& checks) {
  if (Store::is_postgresql_url(store.path())) return import_long_draws_staged(path, store, study_name, checks);
  ImportSummary sum;
  // A store `run` wrote keeps to its study's plan (before the items are upserted).
  NF_ASSIGN_OR_RETURN(const std::optional<StoredPlan> plan, StoredPlan::of(store));
  if (!store.get_study().ok())
    NF_RETURN_IF_ERROR(
        store.put_study(StudyRecord{study_name, "", 0, {{"name", study_name}, {"imported", true}}}).status());
  // item -> cluster: the only state that grows, with the number of items.
  std::unordered_map<std::string, std::string> item_cluster;
  NF_ASSIGN_OR_RETURN(auto bulk, store.begin_bulk_import());
  std::array<int64_t, 4> non_ok{};  // the draws add_draw wrote, by status
  // The current row, updated from each block row's changed fields (RowBlock).
  DrawKey key;
  std::string cluster;
  Outcome outcome;
  ParsedRows parsed(path, checks);
  while (std::unique_ptr<RowBlock> block = parsed.next()) {
    size_t pos = 0;  // in block->text
    for (size_t i = 0; i < block->n; ++i) {
      const RowBlock::Row& row = block->rows[i];
      const unsigned ch = row.changed;
      if (ch & LongDrawRow::kChangedSubject) block->take(&pos, key.subject);
      if (ch & LongDrawRow::kChangedItem) block->take(&pos, key.item);
      if (ch & LongDrawRow::kChangedCluster) block->take(&pos, cluster);
      if (ch & LongDrawRow::kChangedCondition) block->take(&pos, key.condition);
      if (ch & LongDrawRow::kChangedConfig) block->take(&pos, key.config);
      if (ch & LongDrawRow::kChangedOutcome) block->take(&pos, outcome.name);
      if (ch & LongDrawRow::kChangedLabel) block->take(&pos, outcome.label);
      key.replicate = row.replicate;
      outcome.value = row.value;
      const size_t line = row.line;
      ++sum.rows;
      if (plan && !plan->planned(key)) return plan->check(key, fmt::format("{}:{}", path, line));
      if (ch & (LongDrawRow::kChangedItem | LongDrawRow::kChangedCluster)) {  // rows of an item are usually adjacent
        auto [it, inserted] = item_cluster.try_emplace(key.item, cluster);
        if (!inserted && it->second != cluster)
          return two_clusters_error(path, line, key.item, it->second, cluster);
      }
      bool duplicate = false;
      const auto status = static_cast<DrawStatus>(row.status);
      if (status != DrawStatus::kOk) {
        const Status added = bulk->add_draw(key, cluster, status, &duplicate);
        if (added.code() == StatusCode::kFailedPrecondition || (added.ok() && duplicate))
          return status_row_problem(path, line, key, status);  // another row of the draw before
        NF_RETURN_IF_ERROR(added);
        ++non_ok[row.status];
        continue;
      }
      const Status added = bulk->add_outcome(key, cluster, outcome, &duplicate);
      if (added.code() == StatusCode::kFailedPrecondition) return status_row_problem(path, line, key, status);
      NF_RETURN_IF_ERROR(added);
      if (duplicate) {
        LongDrawRow r;
        r.subject = key.subject;
        r.item = key.item;
        r.cluster = cluster;
        r.condition = key.condition;
        r.config = key.config;
        r.replicate = key.replicate;
        r.outcome = outcome.name;
        return duplicate_row_error(path, line, key, outcome.name, find_long_draw_line(path, r));
      }
    }
    parsed.recycle(std::move(block));
  }
  NF_RETURN_IF_ERROR(parsed.status());
  sum.warnings = parsed.warnings();
  std::vector<const std::pair<const std::string, std::string>*> items;
  items.reserve(item_cluster.size());
  for (const auto& ic : item_cluster) items.push_back(&ic);
  std::sort(items.begin(), items.end(), [](auto* a, auto* b) { return a->first < b->first; });
  for (const auto* ic : items) NF_RETURN_IF_ERROR(bulk->put_item(ic->first, ic->second));
  NF_RETURN_IF_ERROR(bulk->commit());
  sum.draws = bulk->draws();
  sum.by_status = non_ok;
  sum.by_status[static_cast<size_t>(DrawStatus::kOk)] = sum.draws - non_ok[0] - non_ok[1] - non_ok[2] - non_ok[3];
  sum.items = static_cast<int64_t>(item_cluster.size());
  return sum;
}

Result<HarnessImportSummary> import_harness_logs(const std::vector<HarnessLog>& logs, Store& store,
                                                 const std::string& study_name, const std::string& source,
                                                 const std::vector<std::string>& analyses) {
  HarnessImportSummary sum;
  sum.logs = static_cast<int64_t>(logs.size());
  std::map<DrawKey, Draw> draws;
  std::map<std::string, std::string> item_cluster;
  std::map<std::string, nlohmann::json> item_data;
  std::map<std::tuple<std::string, std::string, std::string>, int> next_replicate;  // (subject, condition, config)
  std::set<std::string> subjects;
  for (const HarnessLog& log : logs) {
    const auto cell = std::make_tuple(log.subject, log.condition, log.config);
    const int offset = next_replicate[cell];
    int top = -1;
    for (const HarnessDraw& h : log.draws) top = std::max(top, h.replicate);
    if (offset > 0 && top >= 0)
      sum.notes.push_back(fmt::format("{}: another run of ({}, {}, {}): its draws are replicates {}..{}", log.path,
                                      log.subject, log.condition, log.config, offset, offset + top));
    next_replicate[cell] = offset + top + 1;
    subjects.insert(log.subject);
    NF_RETURN_IF_ERROR(store.put_subject(log.subject, log.subject_spec));
    NF_RETURN_IF_ERROR(store.put_config(log.config, log.config_spec));
    for (const auto& [item, data] : log.item_data.items()) item_data.emplace(item, data);
    for (const HarnessDraw& h : log.draws) {
      NF_RETURN_IF_ERROR(note_cluster(item_cluster, h.item, h.cluster));
      DrawKey key{log.subject, h.item, log.condition, log.config, h.replicate + offset};
      if (draws.count(key))
        return InvalidArgument(fmt::format("{}: sample {} replicate {} appears twice for ({}, {}, {})", log.path,
                                           h.item, h.replicate, log.subject, log.condition, log.config));
      Draw& d = draws[key];
      d.key = key;
      d.cluster = h.cluster;
      d.status = h.status;
      d.outcomes = h.outcomes;
      d.content = h.content;
      d.error = h.error;
      d.served_model = h.served_model;
      d.finish_reason = h.finish_reason;
      d.prompt_tokens = h.prompt_tokens;
      d.completion_tokens = h.completion_tokens;
      d.extra = h.extra;
      d.extra["imported"] = true;
      if (h.status == DrawStatus::kApiError) ++sum.api_errors;
    }
  }
  std::set<std::string> tasks;
  for (const HarnessLog& log : logs) tasks.insert(log.condition);
  if (tasks.size() > 1)
    sum.notes.push_back(fmt::format(
        "{} tasks in one store ({}...): each is its own condition, but sample ids are per task, so the same id names "
        "one item across tasks; import each task into its own store unless the tasks share their samples",
        tasks.size(), *tasks.begin()));
  nlohmann::json spec = {{"name", study_name}, {"imported", true}, {"source", source}};
  spec["analyses"] = nlohmann::json::array();
  for (const auto& a : analyses) spec["analyses"].push_back({{"name", a}, {"options", nlohmann::json::object()}});
  sum.draws = static_cast<int64_t>(draws.size());
  sum.items = static_cast<int64_t>(item_cluster.size());
  sum.subjects = static_cast<int64_t>(subjects.size());
  NF_RETURN_IF_ERROR(write_imported(draws, item_cluster, item_data, store, StudyRecord{study_name, "", 0, spec}));
  return sum;
}

}  // namespace nf
