// Integer-coded, dictionary-encoded reads of the ok outcomes (issue 14): the analysis
// input without one heap string per row. See store.h (OutcomeFrame, scan_outcome_codes).
#include <sqlite3.h>

#include <algorithm>
#include <array>
#include <condition_variable>
#include <exception>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <tuple>
#include <type_traits>
#include <unordered_map>

#include <fmt/format.h>

#include "store/combined_scan.h"
#include "store/outcome_chunks.h"
#include "store/sqlite_store.h"
#include "store/status_tally.h"
#include "store/store_internal.h"
#include "util/prefault.h"
#include "util/strings.h"

namespace nf {
namespace {

using store_internal::Encoder;
using store_internal::kChunkColumns;

std::string_view column_text(sqlite3_stmt* s, int i) {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s, i));
  return p == nullptr ? std::string_view() : std::string_view(p, static_cast<size_t>(sqlite3_column_bytes(s, i)));
}

}  // namespace

/// The status counts and answers of status_counts_and_answers, tallied row by row.
struct SqliteStore::StatusTally {
  const std::function<void(std::string_view, std::string_view, std::string_view, std::string_view)>* answer_fn;
  store_internal::StatusCounter counts;
  bool* draws_read = nullptr;  // set once every draw has been tallied

  void add(std::string_view subject, std::string_view config, std::string_view condition, std::string_view status,
           std::string_view content) {
    counts.add(subject, config, condition, status);
    if (status != "api_error") (*answer_fn)(subject, config, status, content);
  }
  std::vector<StatusCount> take() const { return counts.counts(); }
};

void SqliteStore::map_for_scans() {
  // Reads through a memory map instead of a pread into SQLite's page cache per 4 KiB page:
  // no system call and no copy per page (issue 14: ~20% less CPU for analyze's scans of a
  // 1M-value store, 20 MB). Only a store of at most 64 MiB: the mapped pages a scan touches
  // count in the process's RSS (+17 MiB at 1M values), and for a larger store that would
  // add up to the whole map to a peak RSS that is otherwise bounded by its groups (10M
  // values: 124 -> 158 MiB with the first 32 MiB mapped). Advice only: a failure leaves
  // reads as they were.
  if (mapped_) return;
  mapped_ = true;
  constexpr int64_t kMapLimit = int64_t{64} << 20;
  int64_t pages = 0, page_size = 0;
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db_, "SELECT page_count * 1, page_size * 1 FROM pragma_page_count, pragma_page_size", -1,
                         &st, nullptr) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW) {
    pages = sqlite3_column_int64(st, 0);
    page_size = sqlite3_column_int64(st, 1);
  }
  sqlite3_finalize(st);
  if (pages <= 0 || page_size <= 0 || pages > kMapLimit / page_size) return;
  (void)sqlite3_exec(db_, "PRAGMA mmap_size = 67108864", nullptr, nullptr, nullptr);
}

Status SqliteStore::scan_outcome_codes(bool include_cached, OutcomeDictionaries* dict,
                                 const std::function<void(const OutcomeCodes&)>& fn) {
  std::lock_guard lock(mu_);
  return scan_codes_locked(include_cached, dict, fn, nullptr);
}

Result<std::vector<StatusCount>> SqliteStore::status_counts_answers_and_outcome_codes(
    const std::function<void(std::string_view, std::string_view, std::string_view, std::string_view)>& answer_fn,
    bool include_cached, OutcomeDictionaries* dict, const std::function<void(const OutcomeCodes&)>& fn,
    Status* outcome_status) {
  std::lock_guard lock(mu_);
  StatusTally tally;
  tally.answer_fn = &answer_fn;
  bool draws_read = false;
  tally.draws_read = &draws_read;
  Status st = scan_codes_locked(include_cached, dict, fn, &tally);
  if (!draws_read) {  // the draws (and so the counts) could not be read
    if (st.ok()) st = Internal("status_counts_answers_and_outcome_codes: draws not read");
    return st;
  }
  *outcome_status = st;
  return tally.take();
}

Result<std::vector<StatusCount>> status_counts_answers_and_outcome_codes(
    Store& store,
    const std::function<void(std::string_view, std::string_view, std::string_view, std::string_view)>& answer_fn,
    bool include_cached, OutcomeDictionaries* dict, const std::function<void(const OutcomeCodes&)>& fn,
    Status* outcome_status) {
  if (auto* sqlite = dynamic_cast<SqliteStore*>(&store))
    return sqlite->status_counts_answers_and_outcome_codes(answer_fn, include_cached, dict, fn, outcome_status);
  NF_ASSIGN_OR_RETURN(auto counts, store.status_counts_and_answers(answer_fn));
  *outcome_status = store.scan_outcome_codes(include_cached, dict, fn);
  return counts;
}

namespace {

/// An ok draw's key codes, in an array indexed by draw id (trivial: the array is not
/// zero-filled, an ok draw's entry is written whole).
struct DrawCodes {
  uint32_t subject, config, condition, item, cluster;
  int32_t replicate;
  bool cluster_given;
};
static_assert(std::is_trivially_default_constructible_v<DrawCodes>);

/// Sets an OutcomeCodes' draw fields from the draw-codes array, for one draw id after another.
class DrawSelector {
 public:
  DrawSelector(const DrawCodes* draws, const char* draw_ok, int64_t min_id, int64_t max_id)
      : draws_(draws), ok_(draw_ok), min_id_(min_id), max_id_(max_id) {}
  /// Whether `id` is an ok draw to emit; if so, c's draw fields are its codes.
  bool select(int64_t id, OutcomeCodes* c) {
    if (id == last_) return last_ok_;
    last_ = id;
    last_ok_ = id >= min_id_ && id <= max_id_ && ok_[static_cast<size_t>(id - min_id_)] != 0;
    if (last_ok_) {
      const DrawCodes& d = draws_[static_cast<size_t>(id - min_id_)];
      c->subject = d.subject;
      c->config = d.config;
      c->condition = d.condition;
      c->item = d.item;
      c->cluster = d.cluster;
      c->cluster_given = d.cluster_given;
      c->replicate = d.replicate;
    }
    return last_ok_;
  }

 private:
  const DrawCodes* draws_;
  const char* ok_;
  int64_t min_id_, max_id_;
  int64_t last_ = std::numeric_limits<int64_t>::min();
  bool last_ok_ = false;
};

/// Emits the values of decoded outcome chunks, each draw's in name order (as the outcomes
/// table's key orders them), with global outcome and label codes.
class ChunkEmitter {
 public:
  ChunkEmitter(Encoder* outcomes, Encoder* labels) : outcomes_(outcomes), labels_(labels) {}

  /// Readies `chunk` (its dictionary's global codes on first use, each string's rank in byte
  /// order) for emit_draw.
  void start(const store_internal::OutcomeChunk& chunk) {
    const size_t ns = chunk.strings.size();
    name_code_.assign(ns, UINT32_MAX);
    label_code_.assign(ns, UINT32_MAX);
    order_.resize(ns);
    std::iota(order_.begin(), order_.end(), 0u);
    std::sort(order_.begin(), order_.end(), [&](uint32_t a, uint32_t b) { return chunk.strings[a] < chunk.strings[b]; });
    rank_.resize(ns);
    for (uint32_t r = 0; r < ns; ++r) rank_[order_[r]] = r;
  }
  /// Emits the values of the chunk's draw index `i` (c's draw fields set by the caller).
  void emit_draw(const store_internal::OutcomeChunk& chunk, size_t i, OutcomeCodes& c,
                 const std::function<void(const OutcomeCodes&)>& fn) {
    const uint32_t b = chunk.begin[i], e = chunk.begin[i + 1];
    bool sorted = true;
    for (uint32_t v = b + 1; v < e && sorted; ++v) sorted = rank_[chunk.names[v - 1]] < rank_[chunk.names[v]];
    if (sorted) {
      for (uint32_t v = b; v < e; ++v) emit_value(chunk, v, c, fn);
      return;
    }
    idx_.resize(e - b);
    std::iota(idx_.begin(), idx_.end(), b);
    std::sort(idx_.begin(), idx_.end(), [&](uint32_t x, uint32_t y) { return rank_[chunk.names[x]] < rank_[chunk.names[y]]; });
    for (uint32_t v : idx_) emit_value(chunk, v, c, fn);
  }

 private:
  void emit_value(const store_internal::OutcomeChunk& chunk, uint32_t v, OutcomeCodes& c,
                  const std::function<void(const OutcomeCodes&)>& fn) {
    uint32_t& oc = name_code_[chunk.names[v]];
    if (oc == UINT32_MAX) oc = outcomes_->code(chunk.strings[chunk.names[v]]);
    uint32_t& lc = label_code_[chunk.labels[v]];
    if (lc == UINT32_MAX) lc = labels_->code(chunk.strings[chunk.labels[v]]);
    c.outcome = oc;
    c.value = chunk.values[v];
    c.label = lc;
    fn(c);
  }

  Encoder* outcomes_;
  Encoder* labels_;
  std::vector<uint32_t> name_code_, label_code_, rank_, order_, idx_;
};

/// The ok draws' key strings, as read (coded by the thread that consumes them).
class DrawBatch {
 public:
  size_t size() const { return ids_.size(); }
  void clear() {
    ids_.clear();
    replicates_.clear();
    ends_.clear();
    text_.clear();
  }
  void add(int64_t id, int32_t replicate, std::string_view subject, std::string_view config,
           std::string_view condition, std::string_view item, std::string_view cluster) {
    ids_.push_back(id);
    replicates_.push_back(replicate);
    for (std::string_view f : {subject, config, condition, item, cluster}) {
      text_.append(f);
      ends_.push_back(static_cast<uint32_t>(text_.size()));
    }
  }
  int64_t id(size_t i) const { return ids_[i]; }
  int32_t replicate(size_t i) const { return replicates_[i]; }
  /// Field k of draw i: 0 subject, 1 config, 2 condition, 3 item, 4 cluster.
  std::string_view field(size_t i, int k) const {
    const size_t j = i * 5 + static_cast<size_t>(k);
    const uint32_t begin = j == 0 ? 0 : ends_[j - 1];
    return std::string_view(text_).substr(begin, ends_[j] - begin);
  }

 private:
  std::vector<int64_t> ids_;
  std::vector<int32_t> replicates_;
  std::vector<uint32_t> ends_;
  std::string text_;
};

/// One hand-over of the pipelined scan: the ok draws read since the last one, then (unless
/// it is the last) a decoded chunk whose draws are all among those read so far.
struct ScanSlot {
  DrawBatch draws;
  store_internal::OutcomeChunk chunk;
  bool has_chunk = false;
};

/// Decoded chunks handed from the reading thread to the emitting thread through a ring of
/// kSlots, in order. A waiting consumer is woken once kBatch chunks are ready (or at the
/// end), not for every chunk: each wake-up is a system call and an interrupt to the other
/// core (~20 us on this VM), and ~250 of them per 1M values showed in the profile.
class ChunkRing {
 public:
  static constexpr size_t kSlots = 8, kBatch = 4;
  static_assert(kBatch <= kSlots, "a full batch must fit: the producer never waits for a sleeping consumer");
  /// The slot to decode the next chunk into, once the consumer has released it; nullptr
  /// when the consumer stopped.
  ScanSlot* slot_to_fill() {
    std::unique_lock lock(mu_);
    freed_.wait(lock, [&] { return produced_ - consumed_ < kSlots || stopped_; });
    return stopped_ ? nullptr : &slots_[produced_ % kSlots];
  }
  void filled() {
    bool wake;
    {
      std::lock_guard lock(mu_);
      ++produced_;
      wake = produced_ - consumed_ >= kBatch;
    }
    if (wake) ready_.notify_one();
  }
  /// No more chunks (end of the scan, or the producer's error).
  void close() {
    {
      std::lock_guard lock(mu_);
      closed_ = true;
    }
    ready_.notify_one();
  }
  /// The next chunk to emit, or nullptr at the end.
  const ScanSlot* next() {
    std::unique_lock lock(mu_);
    ready_.wait(lock, [&] { return consumed_ < produced_ || closed_; });
    return consumed_ < produced_ ? &slots_[consumed_ % kSlots] : nullptr;
  }
  void release() {
    {
      std::lock_guard lock(mu_);
      ++consumed_;
    }
    freed_.notify_one();
  }
  /// The consumer failed: the producer stops filling.
  void stop() {
    {
      std::lock_guard lock(mu_);
      stopped_ = true;
    }
    freed_.notify_one();
  }

 private:
  std::mutex mu_;
  std::condition_variable ready_, freed_;
  std::array<ScanSlot, kSlots> slots_;
  size_t produced_ = 0, consumed_ = 0;
  bool closed_ = false, stopped_ = false;
};

}  // namespace

Status SqliteStore::scan_codes_locked(bool include_cached, OutcomeDictionaries* dict,
                                      const std::function<void(const OutcomeCodes&)>& fn, StatusTally* tally) {
  map_for_scans();
  // Two sequential scans instead of a join (issue 14): the ok draws' keys, integer-coded into
  // an array indexed by draw id, then the outcomes table in storage order, each row finding
  // its draw by id. No index seek per outcome and no draw column re-read per outcome.
  auto fail = [&](const char* what) {
    return DataLoss(fmt::format("store {}: outcome scan ({}): {}", path_, what, sqlite3_errmsg(db_)));
  };
  auto prepare = [&](const char* sql, sqlite3_stmt** st) { return sqlite3_prepare_v2(db_, sql, -1, st, nullptr); };
  using StmtPtr = std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)>;
  // Read both scans in one transaction, so they see the same store.
  sqlite3_stmt* begin = nullptr;
  if (prepare("BEGIN", &begin) != SQLITE_OK) return fail("begin");
  StmtPtr begin_guard(begin, sqlite3_finalize);
  const bool own_txn = sqlite3_get_autocommit(db_) != 0;
  if (own_txn && sqlite3_step(begin) != SQLITE_DONE) return fail("begin");
  struct EndTxn {
    sqlite3* db;
    bool own;
    ~EndTxn() {
      if (own) sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr);
    }
  } end_txn{db_, own_txn};

  sqlite3_stmt* range = nullptr;
  // Two subqueries: each is one B-tree seek, while min() and max() in one SELECT scan the whole
  // table (its largest index: ~20 ms at 100,000 draws; issue 14).
  if (prepare("SELECT coalesce((SELECT min(id) FROM draws), 0), coalesce((SELECT max(id) FROM draws), -1)", &range) !=
      SQLITE_OK)
    return fail("draw ids");
  StmtPtr range_guard(range, sqlite3_finalize);
  if (sqlite3_step(range) != SQLITE_ROW) return fail("draw ids");
  const int64_t min_id = sqlite3_column_int64(range, 0), max_id = sqlite3_column_int64(range, 1);
  const size_t n_ids = max_id >= min_id ? static_cast<size_t>(max_id - min_id + 1) : 0;
  // Which ids are ok draws (1 byte per id, zeroed), and their codes (read only for those).
  std::vector<char> draw_ok(n_ids, 0);
  std::unique_ptr<DrawCodes[]> draws(new DrawCodes[n_ids]);
  prefault_for_write(draws.get(), n_ids * sizeof(DrawCodes));  // one call, not a fault per page (issue 14)
  Encoder subjects(&dict->subjects), configs(&dict->configs), conditions(&dict->conditions), items(&dict->items),
      clusters(&dict->clusters), outcomes(&dict->outcomes), labels(&dict->labels);

  // The draws, in id order, read up to a given id at a time (scan_draws_through).
  sqlite3_stmt* dst = nullptr;
  // `+status`: scan the table in id order rather than search draws_by_cell for status = 'ok'
  // and then seek every row's table entry (EXPLAIN QUERY PLAN: "SCAN draws" instead of
  // "SEARCH draws USING INDEX draws_by_cell (status=?)"; most draws are ok, and a run's
  // draws are not stored in the index's order). With a tally: every draw, in id order
  // (status_counts_and_answers' query), the ok ones coded here.
  if (prepare(tally != nullptr ? "SELECT id, subject, config, condition, item, cluster, replicate, status, cached, "
                                 "content FROM draws ORDER BY id"
                               : "SELECT id, subject, config, condition, item, cluster, replicate FROM draws "
                                 "WHERE +status = 'ok' AND (?1 OR cached = 0) ORDER BY id",
              &dst) != SQLITE_OK)
    return fail("draws");
  StmtPtr draws_guard(dst, sqlite3_finalize);
  if (tally == nullptr) sqlite3_bind_int(dst, 1, include_cached ? 1 : 0);
  // Codes an ok draw into the arrays.
  auto code_draw = [&](int64_t id, int32_t replicate, std::string_view subject, std::string_view config,
                       std::string_view condition, std::string_view item, std::string_view cluster) {
    const size_t at = static_cast<size_t>(id - min_id);
    DrawCodes& d = draws[at];
    d.subject = subjects.code(subject);
    d.config = configs.code(config);
    d.condition = conditions.code(condition);
    d.item = items.code(item);
    d.cluster = clusters.code(cluster.empty() ? item : cluster);
    d.cluster_given = !cluster.empty();
    d.replicate = replicate;
    draw_ok[at] = 1;
  };
  bool draw_pending = false, draws_done = false;
  // What scan_draws_through does with an ok draw: code it here, hand its strings on in a
  // batch (the pipelined scan), or nothing (only the tally).
  enum class OkDraws { kCode, kBatch, kSkip };
  // Reads the draws with ids up to `last`.
  auto scan_draws_through = [&](int64_t last, OkDraws ok_draws, DrawBatch* batch) -> Status {
    for (;;) {
      if (!draw_pending) {
        if (draws_done) return Status::Ok();
        const int rc = sqlite3_step(dst);
        if (rc == SQLITE_DONE) {
          draws_done = true;
          if (tally != nullptr) *tally->draws_read = true;
          return Status::Ok();
        }
        if (rc != SQLITE_ROW) return fail("draws");
        draw_pending = true;
      }
      const int64_t id = sqlite3_column_int64(dst, 0);
      if (id > last) return Status::Ok();
      draw_pending = false;
      // Each column read once (an API call and a type check each).
      const std::string_view subject = column_text(dst, 1), config = column_text(dst, 2),
                             condition = column_text(dst, 3);
      if (tally != nullptr) {
        const std::string_view status = column_text(dst, 7);
        tally->add(subject, config, condition, status, column_text(dst, 9));
        if (status != "ok" || (!include_cached && sqlite3_column_int64(dst, 8) != 0)) continue;
      }
      if (ok_draws == OkDraws::kSkip) continue;
      const std::string_view item = column_text(dst, 4), cluster = column_text(dst, 5);
      const auto replicate = static_cast<int32_t>(sqlite3_column_int64(dst, 6));
      if (ok_draws == OkDraws::kBatch) {
        batch->add(id, replicate, subject, config, condition, item, cluster);
      } else {
        code_draw(id, replicate, subject, config, condition, item, cluster);
      }
    }
  };

  // The outcomes: `outcomes` rows in storage order (draw_id, name), merged by draw id with
  // the chunked outcomes of imported draws (schema v4, store/outcome_chunks.h), each chunked
  // draw's values in name order: the same sequence as if every outcome were a row.
  sqlite3_stmt* cs = nullptr;
  const std::string chunk_sql = fmt::format("SELECT {} FROM outcome_chunks ORDER BY first_draw_id", kChunkColumns);
  if (prepare(chunk_sql.c_str(), &cs) != SQLITE_OK) return fail("outcome chunks");
  StmtPtr chunks_guard(cs, sqlite3_finalize);

  // With a tally (analyze: every draw is read anyway) and every outcome in chunks (an
  // imported store), the scan runs on two threads (issue 14): this one reads the draws and
  // decodes the chunks, a second emits each chunk's values (fn: analyze's aggregation) once
  // the draws up to the chunk's last id are coded. The same calls of fn in the same order,
  // only on the second thread.
  bool pipelined = false;
  if (tally != nullptr) {
    sqlite3_stmt* any = nullptr;
    if (prepare("SELECT 1 FROM outcomes LIMIT 1", &any) != SQLITE_OK) return fail("outcomes");
    StmtPtr any_guard(any, sqlite3_finalize);
    const int rc = sqlite3_step(any);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) return fail("outcomes");
    pipelined = rc == SQLITE_DONE;
  }
  if (pipelined) {
    ChunkRing ring;
    std::exception_ptr emit_error;
    auto emit_all = [&] {
      try {
        ChunkEmitter emitter(&outcomes, &labels);
        DrawSelector select(draws.get(), draw_ok.data(), min_id, max_id);
        OutcomeCodes c;
        while (const ScanSlot* slot = ring.next()) {
          const DrawBatch& b = slot->draws;
          for (size_t i = 0; i < b.size(); ++i)
            code_draw(b.id(i), b.replicate(i), b.field(i, 0), b.field(i, 1), b.field(i, 2), b.field(i, 3),
                      b.field(i, 4));
          if (slot->has_chunk) {
            const store_internal::OutcomeChunk& chunk = slot->chunk;
            emitter.start(chunk);
            for (size_t i = 0; i < chunk.draw_ids.size(); ++i)
              if (select.select(chunk.draw_ids[i], &c)) emitter.emit_draw(chunk, i, c, fn);
          }
          ring.release();
        }
      } catch (...) {
        emit_error = std::current_exception();
        ring.stop();
      }
    };
    std::thread emitter;
    try {
      emitter = std::thread(emit_all);
    } catch (const std::system_error&) {
      pipelined = false;  // no thread: the serial scan below
    }
    if (pipelined) {
      struct Join {  // also when this thread throws: no joinable thread is destroyed
        ChunkRing& ring;
        std::thread& thread;
        ~Join() {
          if (!thread.joinable()) return;
          ring.close();
          thread.join();
        }
      } join{ring, emitter};
      // This thread reads; the emitting thread codes the draws' strings and consumes the
      // values (the dictionaries are its alone until it is joined). As the serial scan: a
      // chunk that cannot be read ends the values (its error is the scan's), but every draw
      // is still read (the counts and answers stay whole).
      Status chunks = Status::Ok(), draws_st = Status::Ok();
      bool more = true;
      while (more) {
        ScanSlot* slot = ring.slot_to_fill();
        if (slot == nullptr) break;  // the emitting thread failed
        slot->draws.clear();
        slot->has_chunk = false;
        const int rc = sqlite3_step(cs);
        if (rc == SQLITE_ROW) {
          chunks = store_internal::decode_chunk(cs, 0, path_, &slot->chunk);
          slot->has_chunk = chunks.ok();
        } else if (rc != SQLITE_DONE) {
          chunks = fail("outcome chunks");
        }
        more = slot->has_chunk;  // else this slot takes the rest of the draws
        draws_st = scan_draws_through(more ? slot->chunk.last_id() : std::numeric_limits<int64_t>::max(),
                                      OkDraws::kBatch, &slot->draws);
        if (!draws_st.ok()) break;
        ring.filled();
      }
      if (draws_st.ok() && !draws_done)  // the emitting thread stopped: the tally only
        draws_st = scan_draws_through(std::numeric_limits<int64_t>::max(), OkDraws::kSkip, nullptr);
      ring.close();
      emitter.join();
      if (emit_error) std::rethrow_exception(emit_error);
      NF_RETURN_IF_ERROR(draws_st);
      return chunks;
    }
  }

  NF_RETURN_IF_ERROR(scan_draws_through(std::numeric_limits<int64_t>::max(), OkDraws::kCode, nullptr));
  sqlite3_stmt* st = nullptr;
  if (prepare("SELECT draw_id, name, value, label FROM outcomes", &st) != SQLITE_OK) return fail("outcomes");
  StmtPtr guard(st, sqlite3_finalize);
  DrawSelector select(draws.get(), draw_ok.data(), min_id, max_id);
  OutcomeCodes c;
  bool row_pending = false, rows_done = false;
  // Emits the outcome rows whose draw id is below `limit`.
  auto emit_rows_below = [&](int64_t limit) -> Status {
    for (;;) {
      if (!row_pending) {
        if (rows_done) return Status::Ok();
        const int rc = sqlite3_step(st);
        if (rc == SQLITE_DONE) {
          rows_done = true;
          return Status::Ok();
        }
        if (rc != SQLITE_ROW) return fail("outcomes");
        row_pending = true;
      }
      const int64_t id = sqlite3_column_int64(st, 0);
      if (id >= limit) return Status::Ok();
      row_pending = false;
      if (!select.select(id, &c)) continue;
      c.outcome = outcomes.code(column_text(st, 1));
      c.value = sqlite3_column_double(st, 2);
      c.label = labels.code(column_text(st, 3));
      fn(c);
    }
  };
  {
    store_internal::OutcomeChunk chunk;
    ChunkEmitter emitter(&outcomes, &labels);
    for (;;) {
      const int rc = sqlite3_step(cs);
      if (rc == SQLITE_DONE) break;
      if (rc != SQLITE_ROW) return fail("outcome chunks");
      NF_RETURN_IF_ERROR(store_internal::decode_chunk(cs, 0, path_, &chunk));
      emitter.start(chunk);
      for (size_t i = 0; i < chunk.draw_ids.size(); ++i) {
        const int64_t id = chunk.draw_ids[i];
        NF_RETURN_IF_ERROR(emit_rows_below(id));
        if (select.select(id, &c)) emitter.emit_draw(chunk, i, c, fn);
      }
    }
  }
  NF_RETURN_IF_ERROR(emit_rows_below(std::numeric_limits<int64_t>::max()));
  return Status::Ok();
}

Result<OutcomeFrame> Store::outcome_frame(bool include_cached) {
  OutcomeFrame f;
  NF_RETURN_IF_ERROR(scan_outcome_codes(include_cached, &f.dict, [&](const OutcomeCodes& c) {
    f.subject.push_back(c.subject);
    f.config.push_back(c.config);
    f.condition.push_back(c.condition);
    f.item.push_back(c.item);
    f.cluster.push_back(c.cluster);
    f.outcome.push_back(c.outcome);
    f.replicate.push_back(c.replicate);
    f.value.push_back(c.value);
    f.label.push_back(c.label);
    f.cluster_given.push_back(c.cluster_given ? 1 : 0);
  }));
  return f;
}

Result<std::vector<OutcomeRow>> Store::outcome_rows(bool include_cached) {
  // The unordered scan, then one sort of row indices by the strings' ranks: the order
  // "subject, config, condition, outcome, item, replicate" with byte-wise string
  // comparison, as SQLite's ORDER BY with the BINARY collation gave it before, at a
  // fraction of the cost (no SQLite sorter over six text columns; issue 14).
  NF_ASSIGN_OR_RETURN(OutcomeFrame f, outcome_frame(include_cached));

  const auto rs = sorted_ranks(f.dict.subjects), rcf = sorted_ranks(f.dict.configs),
             rcd = sorted_ranks(f.dict.conditions), ro = sorted_ranks(f.dict.outcomes), ri = sorted_ranks(f.dict.items);
  std::vector<uint32_t> order(f.size());
  std::iota(order.begin(), order.end(), 0u);
  auto key = [&](uint32_t r) {
    return std::array<int64_t, 6>{rs[f.subject[r]], rcf[f.config[r]], rcd[f.condition[r]],
                                  ro[f.outcome[r]], ri[f.item[r]],  f.replicate[r]};
  };
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return key(a) < key(b); });
  std::vector<OutcomeRow> rows(f.size());
  for (size_t i = 0; i < order.size(); ++i) {
    const uint32_t r = order[i];
    OutcomeRow& o = rows[i];
    o.subject = f.dict.subjects[f.subject[r]];
    o.config = f.dict.configs[f.config[r]];
    o.condition = f.dict.conditions[f.condition[r]];
    o.item = f.dict.items[f.item[r]];
    if (f.cluster_given[r]) o.cluster = f.dict.clusters[f.cluster[r]];
    o.replicate = f.replicate[r];
    o.outcome = f.dict.outcomes[f.outcome[r]];
    o.value = f.value[r];
    o.label = f.dict.labels[f.label[r]];
  }
  return rows;
}

}  // namespace nf
