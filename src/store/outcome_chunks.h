// Internal to the SQLite store: the columnar form of imported outcomes (schema v4, table
// `outcome_chunks`; docs/store.md "outcome_chunks"). `noisefloor import draws` writes the
// outcomes of the draws it creates as chunks of about kChunkValues values each, one
// SQLite row per chunk, instead of one `outcomes` row per value (issue 14). A draw's
// outcomes are either rows of `outcomes` or values of exactly one chunk, never both.
//
// Blob layout of one chunk (little-endian, packed, no padding):
//   draws   per draw, in increasing id order: int64 draw id, uint32 number of values
//   strings per string: uint32 byte length, then the bytes (the chunk's dictionary;
//           code = index)
//   names   per value: the code of the outcome name in `strings`, 1, 2 or 4 bytes wide
//           (unsigned; width = blob length / n: 1 when the dictionary has at most 256
//           strings, 2 up to 65,536, else 4)
//   labels  per value: the code of the label, as names ("" is a string like any)
//   vals    per value: IEEE 754 binary64 (8 bytes), or 1 byte (an unsigned integer value
//           0..255) when every value of the chunk is one (width = blob length / n)
// Values are grouped by draw in the order of `draws`, each draw's in written order
// (`ord` 0, 1, ...).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/types.h"
#include "util/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace nf::store_internal {

/// Values per chunk the import aims at (a chunk ends at the first draw boundary at or
/// after it): ~64 KiB of blobs per row.
inline constexpr size_t kChunkValues = 4096;

/// One row of outcome_chunks, decoded (or being built by the import).
struct OutcomeChunk {
  std::vector<int64_t> draw_ids;      // increasing
  std::vector<uint32_t> begin{0};     // draw i's values are [begin[i], begin[i + 1])
  std::vector<std::string> strings;   // dictionary
  std::vector<uint32_t> names, labels;
  std::vector<double> values;

  size_t size() const { return values.size(); }
  bool empty() const { return draw_ids.empty(); }
  int64_t first_id() const { return draw_ids.front(); }
  int64_t last_id() const { return draw_ids.back(); }
  /// Index of `id` in draw_ids, or nullopt.
  std::optional<size_t> find(int64_t id) const;
  /// The outcomes of draw index `i`, in written order.
  std::vector<Outcome> outcomes_of(size_t i) const;
  /// Appends draw `id` (greater than every id in the chunk) with `n` outcomes.
  void append_draw(int64_t id, const Outcome* outcomes, size_t n);
  /// Removes draw index `i` and its values (its dictionary strings stay).
  void remove_draw(size_t i);
  void clear();

 private:
  std::unordered_map<std::string, uint32_t> index_;  // strings -> code, for append_draw
  uint32_t code(const std::string& s);
};

/// INSERTs `c` (not empty) as a new row of outcome_chunks. Errors: the SQLite error as a
/// Status naming `path`.
Status write_chunk(sqlite3* db, const std::string& path, const OutcomeChunk& c);

/// write_chunk for a writer of many chunks (the import: one per ~kChunkValues values):
/// the INSERT is prepared once and the blob buffers keep their capacity between chunks.
/// Same rows as write_chunk. Destroy before the connection is closed.
class ChunkWriter {
 public:
  ChunkWriter(sqlite3* db, const std::string& path) : db_(db), path_(path) {}
  ~ChunkWriter();
  ChunkWriter(const ChunkWriter&) = delete;
  ChunkWriter& operator=(const ChunkWriter&) = delete;
  /// As write_chunk(db, path, c).
  Status write(const OutcomeChunk& c);

 private:
  sqlite3* db_;
  const std::string& path_;
  sqlite3_stmt* insert_ = nullptr;
  std::string draws_, strings_, names_, labels_, vals_;
};

/// Decodes the chunk in the current row of `st`, whose columns first..first+7 are
/// first_draw_id, last_draw_id, n, draws, strings, names, labels, vals. DataLoss naming
/// `path` and the chunk if the blobs are inconsistent (wrong lengths, a code out of
/// range, ids not increasing or not matching first/last, counts not summing to n).
Status decode_chunk(sqlite3_stmt* st, int first, const std::string& path, OutcomeChunk* out);

/// The column list decode_chunk expects.
inline constexpr const char* kChunkColumns = "first_draw_id, last_draw_id, n, draws, strings, names, labels, vals";

/// Finds the chunk holding draw `id`'s outcomes, caching the last chunk read. One per
/// reader (get_draw, exports); the statement is prepared on first use.
class ChunkLookup {
 public:
  ChunkLookup(sqlite3* db, const std::string& path) : db_(db), path_(path) {}
  ~ChunkLookup();
  ChunkLookup(const ChunkLookup&) = delete;
  ChunkLookup& operator=(const ChunkLookup&) = delete;
  /// Appends draw `id`'s chunked outcomes to `out` (written order); false if no chunk
  /// holds the draw. Errors: DataLoss on a read failure or a corrupt chunk.
  Result<bool> outcomes(int64_t id, std::vector<Outcome>* out);

 private:
  sqlite3* db_;
  const std::string& path_;
  sqlite3_stmt* find_ = nullptr;
  OutcomeChunk cached_;
  bool have_cached_ = false;
};

/// Removes draw `id`'s outcomes from the chunk that holds them (rewriting the chunk, or
/// deleting it when it empties) and returns them in written order; nullopt (nothing
/// changed) when no chunk holds the draw. Call inside a write transaction. For a draw
/// that is replaced (`run --refresh`) or whose import adds outcomes on a later,
/// non-adjacent row (its outcomes then become `outcomes` rows).
Result<std::optional<std::vector<Outcome>>> detach_chunked_outcomes(sqlite3* db, const std::string& path,
                                                                    int64_t id);

}  // namespace nf::store_internal
