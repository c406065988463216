// The columnar form of imported outcomes (schema v4): see outcome_chunks.h.
#include "store/outcome_chunks.h"

#include <sqlite3.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <memory>

#include <fmt/format.h>

namespace nf::store_internal {
namespace {

static_assert(std::endian::native == std::endian::little,
              "outcome_chunks blobs are little-endian; a big-endian build needs byte swaps here");
static_assert(sizeof(double) == 8);

constexpr size_t kDrawEntry = 12;  // int64 id + uint32 count

Status sql_error(sqlite3* db, int rc, std::string_view op, const std::string& path) {
  std::string text = fmt::format("store {}: {}: {} (sqlite code {})", path, op, sqlite3_errmsg(db), rc);
  switch (rc & 0xff) {
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
    case SQLITE_IOERR:
      return DataLoss(std::move(text));
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_READONLY:
    case SQLITE_FULL:
      return FailedPrecondition(std::move(text));
    default:
      return Internal(std::move(text));
  }
}

using StmtPtr = std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)>;

template <typename T>
void put(std::string* out, T v) {
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  out->append(b, sizeof(T));
}

template <typename T>
T get(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

}  // namespace

std::optional<size_t> OutcomeChunk::find(int64_t id) const {
  auto it = std::lower_bound(draw_ids.begin(), draw_ids.end(), id);
  if (it == draw_ids.end() || *it != id) return std::nullopt;
  return static_cast<size_t>(it - draw_ids.begin());
}

std::vector<Outcome> OutcomeChunk::outcomes_of(size_t i) const {
  std::vector<Outcome> out;
  out.reserve(begin[i + 1] - begin[i]);
  for (uint32_t v = begin[i]; v < begin[i + 1]; ++v) out.push_back({strings[names[v]], values[v], strings[labels[v]]});
  return out;
}

uint32_t OutcomeChunk::code(const std::string& s) {
  if (index_.empty() && !strings.empty())
    for (uint32_t k = 0; k < strings.size(); ++k) index_.emplace(strings[k], k);
  auto [it, inserted] = index_.try_emplace(s, static_cast<uint32_t>(strings.size()));
  if (inserted) strings.push_back(s);
  return it->second;
}

void OutcomeChunk::append_draw(int64_t id, const Outcome* outcomes, size_t n) {
  // The previous draw's name in the same place, and the last label, are usually this
  // value's (the draws of a file carry the same outcomes): compared before the hash
  // lookup. Equal strings have one code, so the codes are those code() would give.
  const size_t prev = draw_ids.empty() ? values.size() : begin[draw_ids.size() - 1];
  const size_t prev_n = values.size() - prev;
  draw_ids.push_back(id);
  for (size_t k = 0; k < n; ++k) {
    const std::string& name = outcomes[k].name;
    names.push_back(k < prev_n && strings[names[prev + k]] == name ? names[prev + k] : code(name));
    const std::string& label = outcomes[k].label;
    labels.push_back(!labels.empty() && strings[labels.back()] == label ? labels.back() : code(label));
    // -0.0 as 0.0: an `outcomes` row reads -0.0 back as 0.0 (SQLite stores an integral REAL
    // as an integer), and a chunked value must read back as the row would.
    values.push_back(outcomes[k].value == 0.0 ? 0.0 : outcomes[k].value);
  }
  begin.push_back(static_cast<uint32_t>(values.size()));
}

void OutcomeChunk::remove_draw(size_t i) {
  const uint32_t b = begin[i], e = begin[i + 1], n = e - b;
  names.erase(names.begin() + b, names.begin() + e);
  labels.erase(labels.begin() + b, labels.begin() + e);
  values.erase(values.begin() + b, values.begin() + e);
  draw_ids.erase(draw_ids.begin() + static_cast<std::ptrdiff_t>(i));
  begin.erase(begin.begin() + static_cast<std::ptrdiff_t>(i) + 1);
  for (size_t k = i + 1; k < begin.size(); ++k) begin[k] -= n;
}

void OutcomeChunk::clear() {
  draw_ids.clear();
  begin.assign(1, 0);
  strings.clear();
  names.clear();
  labels.clear();
  values.clear();
  index_.clear();
}

namespace {

// The blobs of `c` (layout: outcome_chunks.h) into the five buffers, replacing their
// contents (their capacity is kept).
void encode_chunk(const OutcomeChunk& c, std::string* draws, std::string* strings, std::string* names,
                  std::string* labels, std::string* vals) {
  draws->clear();
  draws->reserve(c.draw_ids.size() * kDrawEntry);
  for (size_t i = 0; i < c.draw_ids.size(); ++i) {
    put<int64_t>(draws, c.draw_ids[i]);
    put<uint32_t>(draws, c.begin[i + 1] - c.begin[i]);
  }
  strings->clear();
  for (const auto& s : c.strings) {
    put<uint32_t>(strings, static_cast<uint32_t>(s.size()));
    *strings += s;
  }
  // Codes 1, 2 or 4 bytes wide (as few as the dictionary allows); values 1 byte wide when
  // every value is an integer 0..255 (binary and small count outcomes), else 8.
  const size_t code_width = c.strings.size() <= 0x100 ? 1 : c.strings.size() <= 0x10000 ? 2 : 4;
  auto pack_codes = [&](const std::vector<uint32_t>& codes, std::string* out) {
    out->resize(codes.size() * code_width);
    char* p = out->data();
    for (uint32_t v : codes) {
      if (code_width == 1) *p++ = static_cast<char>(static_cast<uint8_t>(v));
      else if (code_width == 2) std::memcpy(p, &v, 2), p += 2;  // little-endian: the low bytes
      else std::memcpy(p, &v, 4), p += 4;
    }
  };
  pack_codes(c.names, names);
  pack_codes(c.labels, labels);
  bool small = true;
  for (double v : c.values)
    if (!(v >= 0.0 && v <= 255.0 && v == std::floor(v) && !std::signbit(v))) {
      small = false;
      break;
    }
  if (small) {
    vals->resize(c.values.size());
    char* p = vals->data();
    for (double v : c.values) *p++ = static_cast<char>(static_cast<uint8_t>(v));
  } else {
    vals->assign(reinterpret_cast<const char*>(c.values.data()), c.values.size() * 8);
  }
}

constexpr const char* kInsertChunk =
    "INSERT INTO outcome_chunks(first_draw_id, last_draw_id, n, draws, strings, names, labels, vals) "
    "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)";

// Binds `c`'s ids and count and the five blobs (bound without a copy: they must outlive
// the step) to the prepared kInsertChunk and steps it; resets it and clears the bindings.
int insert_chunk(sqlite3_stmt* raw, const OutcomeChunk& c, const std::string& draws, const std::string& strings,
                 const std::string& names, const std::string& labels, const std::string& vals) {
  auto blob = [&](int i, const std::string& b) {
    return sqlite3_bind_blob64(raw, i, b.empty() ? "" : b.data(), b.size(), SQLITE_STATIC);
  };
  int rc = sqlite3_bind_int64(raw, 1, c.first_id());
  if (rc == SQLITE_OK) rc = sqlite3_bind_int64(raw, 2, c.last_id());
  if (rc == SQLITE_OK) rc = sqlite3_bind_int64(raw, 3, static_cast<sqlite3_int64>(c.size()));
  if (rc == SQLITE_OK) rc = blob(4, draws);
  if (rc == SQLITE_OK) rc = blob(5, strings);
  if (rc == SQLITE_OK) rc = blob(6, names);
  if (rc == SQLITE_OK) rc = blob(7, labels);
  if (rc == SQLITE_OK) rc = blob(8, vals);
  if (rc == SQLITE_OK) {
    rc = sqlite3_step(raw);
    if (rc == SQLITE_DONE) rc = SQLITE_OK;
  }
  sqlite3_reset(raw);
  sqlite3_clear_bindings(raw);
  return rc;
}

}  // namespace

Status write_chunk(sqlite3* db, const std::string& path, const OutcomeChunk& c) {
  std::string draws, strings, names, labels, vals;
  encode_chunk(c, &draws, &strings, &names, &labels, &vals);
  sqlite3_stmt* raw = nullptr;
  int rc = sqlite3_prepare_v2(db, kInsertChunk, -1, &raw, nullptr);
  StmtPtr st(raw, sqlite3_finalize);
  if (rc != SQLITE_OK) return sql_error(db, rc, "import: outcome chunk", path);
  rc = insert_chunk(raw, c, draws, strings, names, labels, vals);
  if (rc != SQLITE_OK) return sql_error(db, rc, "import: outcome chunk", path);
  return Status::Ok();
}

ChunkWriter::~ChunkWriter() { sqlite3_finalize(insert_); }

Status ChunkWriter::write(const OutcomeChunk& c) {
  if (insert_ == nullptr) {
    const int rc = sqlite3_prepare_v2(db_, kInsertChunk, -1, &insert_, nullptr);
    if (rc != SQLITE_OK) {
      sqlite3_finalize(insert_);
      insert_ = nullptr;
      return sql_error(db_, rc, "import: outcome chunk", path_);
    }
  }
  encode_chunk(c, &draws_, &strings_, &names_, &labels_, &vals_);
  const int rc = insert_chunk(insert_, c, draws_, strings_, names_, labels_, vals_);
  if (rc != SQLITE_OK) return sql_error(db_, rc, "import: outcome chunk", path_);
  return Status::Ok();
}

Status decode_chunk(sqlite3_stmt* st, int first, const std::string& path, OutcomeChunk* out) {
  out->clear();
  const int64_t first_id = sqlite3_column_int64(st, first), last_id = sqlite3_column_int64(st, first + 1);
  const int64_t n = sqlite3_column_int64(st, first + 2);
  auto bad = [&](std::string_view what) {
    return DataLoss(fmt::format("store {}: outcome_chunks row first_draw_id {}: {}", path, first_id, what));
  };
  auto blob = [&](int i, size_t* bytes) {
    const auto* p = static_cast<const unsigned char*>(sqlite3_column_blob(st, first + i));
    *bytes = static_cast<size_t>(sqlite3_column_bytes(st, first + i));
    return p;
  };
  if (n < 1) return bad("n is not positive");
  const size_t count = static_cast<size_t>(n);
  size_t bytes = 0;
  const unsigned char* p = blob(3, &bytes);
  if (bytes % kDrawEntry != 0 || bytes == 0) return bad("draws blob length is not a positive multiple of 12");
  const size_t draws = bytes / kDrawEntry;
  out->draw_ids.resize(draws);
  out->begin.resize(draws + 1);
  uint64_t total = 0;
  for (size_t i = 0; i < draws; ++i) {
    out->draw_ids[i] = get<int64_t>(p + i * kDrawEntry);
    if (i > 0 && out->draw_ids[i] <= out->draw_ids[i - 1]) return bad("draw ids not increasing");
    total += get<uint32_t>(p + i * kDrawEntry + 8);
    if (total > count) return bad("draw value counts exceed n");
    out->begin[i + 1] = static_cast<uint32_t>(total);
  }
  if (total != count) return bad("draw value counts do not sum to n");
  if (out->draw_ids.front() != first_id || out->draw_ids.back() != last_id)
    return bad("first_draw_id / last_draw_id do not match the draws blob");
  p = blob(4, &bytes);
  for (size_t at = 0; at < bytes;) {
    if (bytes - at < 4) return bad("strings blob truncated");
    const uint32_t len = get<uint32_t>(p + at);
    at += 4;
    if (bytes - at < len) return bad("strings blob truncated");
    out->strings.emplace_back(reinterpret_cast<const char*>(p + at), len);
    at += len;
  }
  auto codes = [&](int i, std::vector<uint32_t>* v, std::string_view what) -> Status {
    size_t b = 0;
    const unsigned char* q = blob(i, &b);
    if (b != count && b != count * 2 && b != count * 4) return bad(fmt::format("{} blob length is not 1, 2 or 4 * n", what));
    v->resize(count);
    const size_t w = b / count;
    for (size_t k = 0; k < count; ++k)
      (*v)[k] = w == 1 ? q[k] : w == 2 ? get<uint16_t>(q + 2 * k) : get<uint32_t>(q + 4 * k);
    for (uint32_t c : *v)
      if (c >= out->strings.size()) return bad(fmt::format("{} code out of range", what));
    return Status::Ok();
  };
  NF_RETURN_IF_ERROR(codes(5, &out->names, "names"));
  NF_RETURN_IF_ERROR(codes(6, &out->labels, "labels"));
  p = blob(7, &bytes);
  out->values.resize(count);
  if (bytes == count) {
    for (size_t k = 0; k < count; ++k) out->values[k] = p[k];
  } else if (bytes == count * 8) {
    std::memcpy(out->values.data(), p, bytes);
  } else {
    return bad("vals blob length is not 1 or 8 * n");
  }
  for (double v : out->values)
    if (std::isnan(v)) return bad("a value is NaN");
  return Status::Ok();
}

ChunkLookup::~ChunkLookup() { sqlite3_finalize(find_); }

Result<bool> ChunkLookup::outcomes(int64_t id, std::vector<Outcome>* out) {
  if (!have_cached_ || id < cached_.first_id() || id > cached_.last_id()) {
    if (find_ == nullptr) {
      const std::string sql = fmt::format(
          "SELECT {} FROM outcome_chunks WHERE first_draw_id <= ?1 ORDER BY first_draw_id DESC LIMIT 1",
          kChunkColumns);
      const int rc = sqlite3_prepare_v2(db_, sql.c_str(), -1, &find_, nullptr);
      if (rc != SQLITE_OK) return sql_error(db_, rc, "outcome chunks", path_);
    }
    sqlite3_reset(find_);
    sqlite3_bind_int64(find_, 1, id);
    const int rc = sqlite3_step(find_);
    if (rc == SQLITE_DONE) {
      sqlite3_reset(find_);
      return false;
    }
    if (rc != SQLITE_ROW) return sql_error(db_, rc, "outcome chunks", path_);
    if (sqlite3_column_int64(find_, 1) < id) {  // the nearest chunk ends before id
      sqlite3_reset(find_);
      return false;
    }
    have_cached_ = false;
    const Status s = decode_chunk(find_, 0, path_, &cached_);
    sqlite3_reset(find_);
    NF_RETURN_IF_ERROR(s);
    have_cached_ = true;
  }
  const std::optional<size_t> i = cached_.find(id);
  if (!i) return false;
  for (uint32_t v = cached_.begin[*i]; v < cached_.begin[*i + 1]; ++v)
    out->push_back({cached_.strings[cached_.names[v]], cached_.values[v], cached_.strings[cached_.labels[v]]});
  return true;
}

Result<std::optional<std::vector<Outcome>>> detach_chunked_outcomes(sqlite3* db, const std::string& path,
                                                                    int64_t id) {
  using Out = std::optional<std::vector<Outcome>>;
  const std::string sql = fmt::format(
      "SELECT {} FROM outcome_chunks WHERE first_draw_id <= ?1 ORDER BY first_draw_id DESC LIMIT 1", kChunkColumns);
  sqlite3_stmt* raw = nullptr;
  int rc = sqlite3_prepare_v2(db, sql.c_str(), -1, &raw, nullptr);
  StmtPtr st(raw, sqlite3_finalize);
  if (rc != SQLITE_OK) return sql_error(db, rc, "outcome chunks", path);
  sqlite3_bind_int64(raw, 1, id);
  rc = sqlite3_step(raw);
  if (rc == SQLITE_DONE) return Out();
  if (rc != SQLITE_ROW) return sql_error(db, rc, "outcome chunks", path);
  if (sqlite3_column_int64(raw, 1) < id) return Out();
  OutcomeChunk c;
  NF_RETURN_IF_ERROR(decode_chunk(raw, 0, path, &c));
  st.reset();
  const std::optional<size_t> i = c.find(id);
  if (!i) return Out();
  std::vector<Outcome> outs = c.outcomes_of(*i);
  const int64_t old_first = c.first_id();
  c.remove_draw(*i);
  sqlite3_stmt* del = nullptr;
  rc = sqlite3_prepare_v2(db, "DELETE FROM outcome_chunks WHERE first_draw_id = ?1", -1, &del, nullptr);
  StmtPtr del_guard(del, sqlite3_finalize);
  if (rc != SQLITE_OK) return sql_error(db, rc, "outcome chunks: detach", path);
  sqlite3_bind_int64(del, 1, old_first);
  rc = sqlite3_step(del);
  if (rc != SQLITE_DONE) return sql_error(db, rc, "outcome chunks: detach", path);
  if (!c.empty()) NF_RETURN_IF_ERROR(write_chunk(db, path, c));
  return Out(std::move(outs));
}

}  // namespace nf::store_internal
