// Schema v4 (issue 14): `import draws` stores the outcomes of the draws it creates as
// columnar chunks (table outcome_chunks, store/outcome_chunks.h) instead of one row per
// value. Every reader must see chunked outcomes exactly as rows: these tests write the
// same draws once as rows (put_draws) and once through Store::BulkImport (chunks), and
// compare get_draw, both exports byte for byte, the integer-coded scan (every field, in
// order) and outcome_rows; plus the import paths that move a draw's outcomes out of its
// chunk (a draw met again on a later row, replace_draw), a failed import (no chunk
// left), a store holding both forms, the v3 -> v4 migration and a corrupt chunk.
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "store/combined_scan.h"
#include "store/outcome_chunks.h"
#include "store/store.h"
#include "store_test_util.h"

namespace nf {
namespace {

using store_test::RawDb;
using store_test::ScratchDir;

// An ok draw as the import stores it (status ok, extra {"imported": true}, latency 0,
// one attempt), so a row-form copy written by put_draws has the same columns.
Draw imported_draw(const DrawKey& key, const std::string& cluster, std::vector<Outcome> outcomes) {
  Draw d;
  d.key = key;
  d.cluster = cluster;
  d.status = DrawStatus::kOk;
  d.extra = {{"imported", true}};
  d.latency_ms = 0.0;
  d.attempts = 1;
  d.outcomes = std::move(outcomes);
  return d;
}

// 2 subjects x 2 configs x 90 items x 3 replicates, 7 outcomes each (names not in byte
// order, one labelled categorical, fractional and negative values, -0.0): 7,560 values,
// so the import writes two chunks.
std::vector<Draw> synthetic_draws() {
  std::vector<Draw> out;
  int k = 0;
  for (const char* subject : {"zeta", "alpha"})
    for (const char* config : {"t=0.7", "default"})
      for (int item = 0; item < 90; ++item)
        for (int r = 0; r < 3; ++r, ++k) {
          const std::string letter(1, static_cast<char>('A' + (k % 4)));
          out.push_back(imported_draw(
              {subject, "q" + std::to_string(item), item % 2 ? "none" : "swap", config, r},
              item % 7 == 0 ? "" : "c" + std::to_string(item % 9),
              {{"zz_correct", static_cast<double>((k * 7 + item) % 3 == 0), ""},
               {"choice", static_cast<double>(k % 4), letter},
               {"b", -0.25 * (k % 5), ""},
               {"a", k % 3 == 0 ? -0.0 : 1e-300 * k, ""},
               {"score", 0.1 * (k % 11), "x,\"y\""},
               {"Z", static_cast<double>(k), ""},
               {"correct", static_cast<double>(k % 2), ""}}));
        }
  return out;
}

Status bulk_import(Store& s, const std::vector<Draw>& draws, int* duplicates = nullptr) {
  auto bi = s.begin_bulk_import();
  if (!bi.ok()) return bi.status();
  for (const Draw& d : draws) {
    for (const Outcome& o : d.outcomes) {
      bool dup = false;
      NF_RETURN_IF_ERROR((*bi)->add_outcome(d.key, d.cluster, o, &dup));
      if (dup && duplicates != nullptr) ++*duplicates;
    }
    NF_RETURN_IF_ERROR((*bi)->put_item(d.key.item, d.cluster));
  }
  return (*bi)->commit();
}

std::string csv_of(Store& s) {
  std::ostringstream out;
  EXPECT_TRUE(s.export_csv(out).ok());
  return out.str();
}

std::string jsonl_of(Store& s, const std::string& path) {
  RawDb(path).exec("UPDATE draws SET created_at = 0");  // the only column that differs
  std::ostringstream out;
  EXPECT_TRUE(s.export_jsonl(out).ok());
  return out.str();
}

// Every field of the integer-coded scan, in scan order, plus the dictionaries.
std::string frame_of(Store& s, bool include_cached) {
  auto f = s.outcome_frame(include_cached);
  EXPECT_TRUE(f.ok()) << f.status().to_string();
  if (!f.ok()) return "";
  std::ostringstream out;
  for (size_t i = 0; i < f->size(); ++i)
    out << f->subject[i] << ' ' << f->config[i] << ' ' << f->condition[i] << ' ' << f->item[i] << ' '
        << f->cluster[i] << ' ' << f->outcome[i] << ' ' << f->label[i] << ' ' << f->replicate[i] << ' '
        << std::hexfloat << f->value[i] << std::defaultfloat << ' ' << int(f->cluster_given[i]) << '\n';
  for (const auto* d : {&f->dict.subjects, &f->dict.configs, &f->dict.conditions, &f->dict.items,
                        &f->dict.clusters, &f->dict.outcomes, &f->dict.labels}) {
    for (const auto& w : *d) out << w << '|';
    out << '\n';
  }
  return out.str();
}

std::string rows_of(Store& s) {
  auto rows = s.outcome_rows();
  EXPECT_TRUE(rows.ok());
  std::ostringstream out;
  for (const auto& r : *rows)
    out << r.subject << '|' << r.config << '|' << r.condition << '|' << r.item << '|' << r.cluster << '|'
        << r.replicate << '|' << r.outcome << '|' << std::hexfloat << r.value << std::defaultfloat << '|' << r.label
        << '\n';
  return out.str();
}

void expect_same_outcomes(const std::vector<Outcome>& a, const std::vector<Outcome>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].name, b[i].name) << what;
    EXPECT_EQ(std::signbit(a[i].value), std::signbit(b[i].value)) << what;
    EXPECT_EQ(a[i].value, b[i].value) << what;
    EXPECT_EQ(a[i].label, b[i].label) << what;
  }
}

// Every reader gives the same answer on store `b` as on the row-form store `a`.
void expect_same_reads(Store& a, const std::string& pa, Store& b, const std::string& pb,
                       const std::vector<Draw>& draws) {
  for (const Draw& d : draws) {
    auto ga = a.get_draw(d.key), gb = b.get_draw(d.key);
    ASSERT_TRUE(ga.ok() && gb.ok()) << d.key.to_string();
    expect_same_outcomes(ga->outcomes, gb->outcomes, d.key.to_string());
  }
  EXPECT_EQ(csv_of(a), csv_of(b));
  EXPECT_EQ(jsonl_of(a, pa), jsonl_of(b, pb));
  EXPECT_EQ(frame_of(a, true), frame_of(b, true));
  EXPECT_EQ(frame_of(a, false), frame_of(b, false));
  EXPECT_EQ(rows_of(a), rows_of(b));
  auto ca = a.status_counts(), cb = b.status_counts();
  ASSERT_TRUE(ca.ok() && cb.ok());
  ASSERT_EQ(ca->size(), cb->size());
  for (size_t i = 0; i < ca->size(); ++i) EXPECT_EQ((*ca)[i].count, (*cb)[i].count);
}

// The counts, answers and outcome codes of two reads (status_counts_and_answers, then
// outcome_frame's scan) against one (status_counts_answers_and_outcome_codes, issue 14),
// as text: equal for the outcome rows and the chunks, cached draws in or out.
std::string two_reads_of(Store& s, bool include_cached) {
  std::ostringstream out;
  auto counts = s.status_counts_and_answers(
      [&](std::string_view a, std::string_view b, std::string_view c, std::string_view d) {
        out << a << '|' << b << '|' << c << '|' << d << '\n';
      });
  EXPECT_TRUE(counts.ok());
  if (!counts.ok()) return "";
  for (const auto& c : *counts)
    out << c.subject << ' ' << c.config << ' ' << c.condition << ' ' << c.status << ' ' << c.count << '\n';
  return out.str() + frame_of(s, include_cached);
}

std::string one_read_of(Store& s, bool include_cached) {
  std::ostringstream out;
  OutcomeFrame f;
  Status scan = Status::Ok();
  auto counts = status_counts_answers_and_outcome_codes(
      s, [&](std::string_view a, std::string_view b, std::string_view c, std::string_view d) {
        out << a << '|' << b << '|' << c << '|' << d << '\n';
      },
      include_cached, &f.dict, [&](const OutcomeCodes& c) {
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
      }, &scan);
  EXPECT_TRUE(counts.ok() && scan.ok());
  if (!counts.ok()) return "";
  for (const auto& c : *counts)
    out << c.subject << ' ' << c.config << ' ' << c.condition << ' ' << c.status << ' ' << c.count << '\n';
  for (size_t i = 0; i < f.size(); ++i)
    out << f.subject[i] << ' ' << f.config[i] << ' ' << f.condition[i] << ' ' << f.item[i] << ' ' << f.cluster[i]
        << ' ' << f.outcome[i] << ' ' << f.label[i] << ' ' << f.replicate[i] << ' ' << std::hexfloat << f.value[i]
        << std::defaultfloat << ' ' << int(f.cluster_given[i]) << '\n';
  for (const auto* d : {&f.dict.subjects, &f.dict.configs, &f.dict.conditions, &f.dict.items, &f.dict.clusters,
                        &f.dict.outcomes, &f.dict.labels}) {
    for (const auto& w : *d) out << w << '|';
    out << '\n';
  }
  return out.str();
}

TEST(OutcomeChunks, CountsAnswersAndCodesFromOneReadEqualTwoReads) {
  ScratchDir dir;
  const std::string pa = dir.path("rows.sqlite"), pb = dir.path("chunks.sqlite");
  auto a = Store::open(pa);
  auto b = Store::open(pb);
  ASSERT_TRUE(a.ok() && b.ok());
  const std::vector<Draw> draws = synthetic_draws();
  ASSERT_TRUE((*a)->put_draws(draws).ok());
  ASSERT_TRUE(bulk_import(**b, draws).ok());
  for (const std::string& p : {pa, pb}) {  // statuses, cache flags and answers that differ by draw
    RawDb raw(p);
    raw.exec("UPDATE draws SET content = 'c' || (id % 4), cached = (id % 5 = 0)");
    raw.exec("UPDATE draws SET status = 'api_error' WHERE id % 11 = 0");
    raw.exec("UPDATE draws SET status = 'parse_error' WHERE id % 13 = 0");
    raw.exec("UPDATE draws SET status = 'refused' WHERE id % 17 = 0");
  }
  for (Store* s : {a->get(), b->get()}) {
    for (bool include_cached : {true, false}) {
      SCOPED_TRACE(testing::Message() << (s == a->get() ? "rows" : "chunks") << " include_cached "
                                      << include_cached);
      const std::string two = two_reads_of(*s, include_cached);
      EXPECT_GT(two.size(), 1000u);
      EXPECT_EQ(one_read_of(*s, include_cached), two);
    }
  }
}

// The combined read of an all-chunks store hands the values to a second thread through a
// ring of a few chunks (issue 14): with many more chunks than the ring holds (113,400 values:
// 28 chunks), and
// draws of every status between them, it must still equal the two reads, and the same
// store in row form.
std::vector<Draw> many_draws() {
  std::vector<Draw> out;
  for (int i = 0; i < 15; ++i)
    for (const Draw& d : synthetic_draws()) {
      Draw e = d;
      e.key.item += "_" + std::to_string(i);
      out.push_back(std::move(e));
    }
  return out;
}

TEST(OutcomeChunks, CombinedReadOfManyChunksEqualsTwoReads) {
  ScratchDir dir;
  const std::string pa = dir.path("rows.sqlite"), pb = dir.path("chunks.sqlite");
  auto a = Store::open(pa);
  auto b = Store::open(pb);
  ASSERT_TRUE(a.ok() && b.ok());
  const std::vector<Draw> draws = many_draws();
  ASSERT_TRUE((*a)->put_draws(draws).ok());
  ASSERT_TRUE(bulk_import(**b, draws).ok());
  EXPECT_GE(std::stoi(RawDb(pb).one("SELECT count(*) FROM outcome_chunks")), 20);
  for (const std::string& p : {pa, pb}) {
    RawDb raw(p);
    raw.exec("UPDATE draws SET content = 'c' || (id % 4), cached = (id % 5 = 0)");
    raw.exec("UPDATE draws SET status = 'api_error' WHERE id % 11 = 0");
    raw.exec("UPDATE draws SET status = 'parse_error' WHERE id % 13 = 0");
  }
  for (bool include_cached : {true, false}) {
    SCOPED_TRACE(testing::Message() << "include_cached " << include_cached);
    const std::string want = two_reads_of(**a, include_cached);
    EXPECT_GT(want.size(), 100000u);
    EXPECT_EQ(one_read_of(**a, include_cached), want);
    EXPECT_EQ(two_reads_of(**b, include_cached), want);
    EXPECT_EQ(one_read_of(**b, include_cached), want);
  }
}

// A chunk that cannot be decoded in the middle of the combined read: the values before it
// were consumed, the outcome status is its DataLoss, and the counts and answers still cover
// every draw (as when the draws were read in full before the chunks).
TEST(OutcomeChunks, ACorruptChunkInTheCombinedReadKeepsTheCounts) {
  ScratchDir dir;
  const std::string p = dir.path("s.sqlite");
  auto s = Store::open(p);
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE(bulk_import(**s, many_draws()).ok());
  RawDb raw(p);
  const std::string tenth = raw.one("SELECT first_draw_id FROM outcome_chunks ORDER BY first_draw_id LIMIT 1 OFFSET 9");
  const std::string before = raw.one("SELECT sum(n) FROM outcome_chunks WHERE first_draw_id < " + tenth);
  raw.exec("UPDATE outcome_chunks SET vals = x'00' WHERE first_draw_id = " + tenth);
  auto want = (*s)->status_counts();
  ASSERT_TRUE(want.ok());
  int64_t answers = 0, values = 0;
  OutcomeDictionaries dict;
  Status scan = Status::Ok();
  auto counts = status_counts_answers_and_outcome_codes(
      **s, [&](std::string_view, std::string_view, std::string_view, std::string_view) { ++answers; }, true, &dict,
      [&](const OutcomeCodes&) { ++values; }, &scan);
  ASSERT_TRUE(counts.ok()) << counts.status().to_string();
  ASSERT_EQ(counts->size(), want->size());
  int64_t total = 0;
  for (size_t i = 0; i < want->size(); ++i) {
    EXPECT_EQ((*counts)[i].count, (*want)[i].count);
    total += (*want)[i].count;
  }
  EXPECT_EQ(answers, total);
  EXPECT_EQ(std::to_string(values), before);
  EXPECT_EQ(scan.code(), StatusCode::kDataLoss) << scan.to_string();
  EXPECT_NE(scan.message().find("outcome_chunks row first_draw_id " + tenth), std::string::npos) << scan.to_string();
}

// An exception from the outcome callback (which may run on the second thread) reaches the
// caller, and the store is read normally afterwards (no thread or transaction left behind).
TEST(OutcomeChunks, AnExceptionFromTheCombinedReadsCallbackReachesTheCaller) {
  ScratchDir dir;
  const std::string p = dir.path("s.sqlite");
  auto s = Store::open(p);
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE(bulk_import(**s, many_draws()).ok());
  const std::string want = two_reads_of(**s, true);
  for (int64_t throw_at : {int64_t{1}, int64_t{30000}, int64_t{100000}}) {
    SCOPED_TRACE(throw_at);
    int64_t values = 0;
    OutcomeDictionaries dict;
    Status scan = Status::Ok();
    EXPECT_THROW((void)status_counts_answers_and_outcome_codes(
                     **s, [](std::string_view, std::string_view, std::string_view, std::string_view) {}, true, &dict,
                     [&](const OutcomeCodes&) {
                       if (++values == throw_at) throw std::runtime_error("callback failed");
                     },
                     &scan),
                 std::runtime_error);
    EXPECT_EQ(values, throw_at);
    EXPECT_EQ(one_read_of(**s, true), want);
  }
}

TEST(OutcomeChunks, ImportedChunksReadExactlyAsRows) {
  ScratchDir dir;
  const std::string pa = dir.path("rows.sqlite"), pb = dir.path("chunks.sqlite");
  auto a = Store::open(pa);
  auto b = Store::open(pb);
  ASSERT_TRUE(a.ok() && b.ok());
  const std::vector<Draw> draws = synthetic_draws();
  ASSERT_TRUE((*a)->put_draws(draws).ok());
  ASSERT_TRUE(bulk_import(**b, draws).ok());
  RawDb raw(pb);
  EXPECT_EQ(raw.one("SELECT count(*) FROM outcomes"), "0");
  EXPECT_EQ(raw.one("SELECT count(*) FROM outcome_chunks"), "2");
  EXPECT_EQ(raw.one("SELECT sum(n) FROM outcome_chunks"), std::to_string(draws.size() * 7));
  expect_same_reads(**a, pa, **b, pb, draws);
}

// The narrow encodings: 1-byte values (every value an integer 0..255) with 1- and 2-byte
// codes (at most 256 and at most 65,536 distinct strings in a chunk), next to the 8-byte
// values of a chunk with one value outside 0..255. (4-byte codes: the codec test below.)
TEST(OutcomeChunks, NarrowValuesAndEveryCodeWidthReadAsRows) {
  ScratchDir dir;
  const std::string pa = dir.path("rows.sqlite"), pb = dir.path("chunks.sqlite");
  auto a = Store::open(pa);
  auto b = Store::open(pb);
  ASSERT_TRUE(a.ok() && b.ok());
  std::vector<Draw> draws;
  int k = 0;
  auto add = [&](int n_outcomes, bool unique_strings, double extra) {
    std::vector<Outcome> outs;
    for (int o = 0; o < n_outcomes; ++o, ++k)
      outs.push_back({"o" + std::to_string(o), double(k % 256),
                      unique_strings ? "L" + std::to_string(k) : ""});
    if (extra != 0.0) outs.push_back({"extra", extra, ""});
    draws.push_back(imported_draw({"m", "q" + std::to_string(draws.size()), "none", "default", 0}, "", outs));
  };
  for (int i = 0; i < 600; ++i) add(7, false, 0.0);  // 4,200 values 0..255, 8 strings: 1-byte codes and values
  for (int i = 0; i < 50; ++i) add(90, true, 0.0);    // 4,500 values, 4,000+ strings: 2-byte codes
  add(2, false, 256.0);                               // 256: 8-byte values (the last chunk)
  ASSERT_TRUE((*a)->put_draws(draws).ok());
  ASSERT_TRUE(bulk_import(**b, draws).ok());
  RawDb raw(pb);
  EXPECT_EQ(raw.one("SELECT group_concat((length(names) / n) || '/' || (length(vals) / n), ' ') FROM "
                    "(SELECT * FROM outcome_chunks ORDER BY first_draw_id)"),
            "1/1 2/1 2/8");
  expect_same_reads(**a, pa, **b, pb, draws);
}

// 4-byte codes need more than 65,536 strings in one chunk, i.e. one draw of 32,769+
// outcomes (a draw is never split); the import's and put_draws' duplicate-name checks are
// quadratic in a draw's outcomes, so the codec is checked directly: encode, store, decode.
TEST(OutcomeChunks, FourByteCodesRoundTrip) {
  ScratchDir dir;
  const std::string p = dir.path("s.sqlite");
  ASSERT_TRUE(Store::open(p).ok());  // the schema
  std::vector<Outcome> outs;
  for (int o = 0; o < 40000; ++o) outs.push_back({"o" + std::to_string(o), o % 2 ? 0.5 : -0.0, "L" + std::to_string(o)});
  store_internal::OutcomeChunk c;
  c.append_draw(7, outs.data(), 20000);
  c.append_draw(9, outs.data() + 20000, 20000);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(p.c_str(), &db), SQLITE_OK);
  ASSERT_TRUE(store_internal::write_chunk(db, p, c).ok());
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db,
                               (std::string("SELECT ") + store_internal::kChunkColumns +
                                ", length(names), length(vals) FROM outcome_chunks").c_str(),
                               -1, &st, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int64(st, 8), 4 * 40000);  // 80,000 strings: 4-byte codes
  EXPECT_EQ(sqlite3_column_int64(st, 9), 8 * 40000);  // 0.5: 8-byte values
  store_internal::OutcomeChunk back;
  const Status s = store_internal::decode_chunk(st, 0, p, &back);
  sqlite3_finalize(st);
  sqlite3_close(db);
  ASSERT_TRUE(s.ok()) << s.to_string();
  EXPECT_EQ(back.draw_ids, (std::vector<int64_t>{7, 9}));
  std::vector<Outcome> got = back.outcomes_of(0), rest = back.outcomes_of(1);
  got.insert(got.end(), rest.begin(), rest.end());
  for (Outcome& o : outs) o.value = o.value == 0.0 ? 0.0 : o.value;  // -0.0 reads back as 0.0, as from a row
  expect_same_outcomes(got, outs, "4-byte codes");
}

TEST(OutcomeChunks, ADrawMetAgainLaterMovesToRowsAndDuplicatesAreStillFound) {
  ScratchDir dir;
  const std::string pa = dir.path("rows.sqlite"), pb = dir.path("chunks.sqlite");
  auto a = Store::open(pa);
  auto b = Store::open(pb);
  ASSERT_TRUE(a.ok() && b.ok());
  std::vector<Draw> draws = synthetic_draws();
  // The import file: every draw's first 5 outcomes in order, then the last 2 outcomes of
  // draw 3 (in a chunk written long before), of the second-to-last draw (still in the
  // chunk being filled) and of draw 700 (in the middle of the first chunk).
  std::vector<Draw> file = draws;
  for (Draw& d : file) d.outcomes.resize(5);
  for (size_t i : {size_t{3}, draws.size() - 2, size_t{700}}) {
    Draw tail = draws[i];
    tail.outcomes.erase(tail.outcomes.begin(), tail.outcomes.begin() + 5);
    file.push_back(tail);
  }
  // And a repeat of an outcome of draw 3 (now a row-form draw) and of draw 5 (chunked,
  // met again: moved to rows, then the repeat is found by the table's key).
  Draw again3 = imported_draw(draws[3].key, draws[3].cluster, {{"choice", 9.0, ""}});
  Draw again5 = imported_draw(draws[5].key, draws[5].cluster, {{"b", 9.0, ""}});
  file.push_back(again3);
  file.push_back(again5);
  int duplicates = 0;
  ASSERT_TRUE(bulk_import(**b, file, &duplicates).ok());
  EXPECT_EQ(duplicates, 2);
  // The row-form reference: the draws with the shortened outcome lists.
  std::vector<Draw> want;
  for (size_t i = 0; i < draws.size(); ++i) {
    Draw d = draws[i];
    if (i != 3 && i != draws.size() - 2 && i != 700) d.outcomes.resize(5);
    want.push_back(d);
  }
  ASSERT_TRUE((*a)->put_draws(want).ok());
  RawDb raw(pb);
  EXPECT_EQ(raw.one("SELECT count(DISTINCT draw_id) FROM outcomes"), "4");  // draws 3, 700, last-but-one, 5
  EXPECT_EQ(raw.one("SELECT count(*) FROM outcomes"), std::to_string(3 * 7 + 5));
  EXPECT_EQ(raw.one("SELECT sum(n) FROM outcome_chunks"), std::to_string((draws.size() - 4) * 5));
  expect_same_reads(**a, pa, **b, pb, want);
}

TEST(OutcomeChunks, AnAdjacentRepeatIsADuplicate) {
  ScratchDir dir;
  auto s = Store::open(dir.path("s.sqlite"));
  ASSERT_TRUE(s.ok());
  auto bi = (*s)->begin_bulk_import();
  ASSERT_TRUE(bi.ok());
  const DrawKey k{"m", "q1", "none", "default", 0};
  bool dup = true;
  ASSERT_TRUE((*bi)->add_outcome(k, "", {"correct", 1.0, ""}, &dup).ok());
  EXPECT_FALSE(dup);
  ASSERT_TRUE((*bi)->add_outcome(k, "", {"correct", 0.0, ""}, &dup).ok());
  EXPECT_TRUE(dup);
}

TEST(OutcomeChunks, ReplaceDrawRemovesItsChunkedOutcomesOnly) {
  ScratchDir dir;
  const std::string pa = dir.path("rows.sqlite"), pb = dir.path("chunks.sqlite");
  auto a = Store::open(pa);
  auto b = Store::open(pb);
  ASSERT_TRUE(a.ok() && b.ok());
  std::vector<Draw> draws = synthetic_draws();
  ASSERT_TRUE((*a)->put_draws(draws).ok());
  ASSERT_TRUE(bulk_import(**b, draws).ok());
  // The first draw of the first chunk, one in its middle, and the last draw of the store.
  for (size_t i : {size_t{0}, size_t{301}, draws.size() - 1}) {
    Draw d = draws[i];
    d.outcomes = {{"correct", 0.5, "new"}};
    d.extra = nlohmann::json{{"refreshed", true}};
    ASSERT_TRUE((*a)->replace_draw(d).ok());
    ASSERT_TRUE((*b)->replace_draw(d).ok());
    draws[i] = d;
  }
  RawDb raw(pb);
  EXPECT_EQ(raw.one("SELECT sum(n) FROM outcome_chunks"), std::to_string((draws.size() - 3) * 7));
  EXPECT_EQ(raw.one("SELECT count(*) FROM outcomes"), "3");
  expect_same_reads(**a, pa, **b, pb, draws);
}

TEST(OutcomeChunks, ReplacingTheOnlyDrawOfAChunkDeletesTheChunk) {
  ScratchDir dir;
  auto s = Store::open(dir.path("s.sqlite"));
  ASSERT_TRUE(s.ok());
  const Draw d = imported_draw({"m", "q1", "none", "default", 0}, "", {{"correct", 1.0, ""}});
  ASSERT_TRUE(bulk_import(**s, {d}).ok());
  RawDb raw(dir.path("s.sqlite"));
  EXPECT_EQ(raw.one("SELECT count(*) FROM outcome_chunks"), "1");
  Draw r = d;
  r.outcomes = {{"correct", 0.0, ""}};
  ASSERT_TRUE((*s)->replace_draw(r).ok());
  EXPECT_EQ(raw.one("SELECT count(*) FROM outcome_chunks"), "0");
  auto g = (*s)->get_draw(d.key);
  ASSERT_TRUE(g.ok());
  ASSERT_EQ(g->outcomes.size(), 1u);
  EXPECT_EQ(g->outcomes[0].value, 0.0);
}

TEST(OutcomeChunks, AStoreWithRowAndChunkedDrawsReadsAsAllRows) {
  ScratchDir dir;
  const std::string pa = dir.path("rows.sqlite"), pb = dir.path("mixed.sqlite");
  auto a = Store::open(pa);
  auto b = Store::open(pb);
  ASSERT_TRUE(a.ok() && b.ok());
  std::vector<Draw> draws = synthetic_draws();
  const std::vector<Draw> before(draws.begin(), draws.begin() + 100), imported(draws.begin() + 100, draws.end() - 50),
      after(draws.end() - 50, draws.end());
  // Run draws (rows), some cached and one parse_error, then an import, then more run draws.
  std::vector<Draw> run_before = before;
  for (size_t i = 0; i < run_before.size(); ++i) {
    run_before[i].cached = i % 3 == 0;
    if (i == 7) run_before[i].status = DrawStatus::kParseError;
  }
  ASSERT_TRUE((*a)->put_draws(run_before).ok());
  ASSERT_TRUE((*a)->put_draws(imported).ok());
  ASSERT_TRUE((*a)->put_draws(after).ok());
  ASSERT_TRUE((*b)->put_draws(run_before).ok());
  ASSERT_TRUE(bulk_import(**b, imported).ok());
  ASSERT_TRUE((*b)->put_draws(after).ok());
  RawDb raw(pb);
  EXPECT_EQ(raw.one("SELECT count(*) FROM outcomes"), std::to_string(150 * 7));
  EXPECT_EQ(raw.one("SELECT sum(n) FROM outcome_chunks"), std::to_string(imported.size() * 7));
  expect_same_reads(**a, pa, **b, pb, draws);
}

TEST(OutcomeChunks, AFailedImportLeavesNoChunk) {
  ScratchDir dir;
  const std::string p = dir.path("s.sqlite");
  auto s = Store::open(p);
  ASSERT_TRUE(s.ok());
  {
    auto bi = (*s)->begin_bulk_import();
    ASSERT_TRUE(bi.ok());
    for (const Draw& d : synthetic_draws())  // more than one chunk's worth, never committed
      for (const Outcome& o : d.outcomes) {
        bool dup = false;
        ASSERT_TRUE((*bi)->add_outcome(d.key, d.cluster, o, &dup).ok());
      }
  }
  RawDb raw(p);
  EXPECT_EQ(raw.one("SELECT count(*) FROM outcome_chunks"), "0");
  EXPECT_EQ(raw.one("SELECT count(*) FROM draws"), "0");
}

TEST(OutcomeChunks, AV3StoreMigratesByAddingTheTable) {
  ScratchDir dir;
  const std::string p = dir.path("s.sqlite");
  const std::vector<Draw> draws = synthetic_draws();
  {
    auto s = Store::open(p);
    ASSERT_TRUE(s.ok());
    ASSERT_TRUE((*s)->put_draws({draws[0], draws[1]}).ok());
  }
  {
    // Schema v3 is v4 without outcome_chunks.
    RawDb raw(p);
    raw.exec("DROP TABLE outcome_chunks; UPDATE meta SET value = '3' WHERE key = 'schema_version'");
  }
  auto s = Store::open(p);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  RawDb raw(p);
  EXPECT_EQ(raw.one("SELECT value FROM meta WHERE key = 'schema_version'"), "4");
  EXPECT_EQ(raw.one("SELECT count(*) FROM outcome_chunks"), "0");
  EXPECT_EQ(raw.one("SELECT count(*) FROM outcomes"), "14");
  ASSERT_TRUE(bulk_import(**s, {draws[2]}).ok());
  auto g = (*s)->get_draw(draws[2].key);
  ASSERT_TRUE(g.ok());
  expect_same_outcomes(g->outcomes, draws[2].outcomes, "imported after the migration");
}

TEST(OutcomeChunks, ACorruptChunkIsDataLoss) {
  ScratchDir dir;
  const std::string p = dir.path("s.sqlite");
  auto s = Store::open(p);
  ASSERT_TRUE(s.ok());
  const std::vector<Draw> draws = synthetic_draws();
  ASSERT_TRUE(bulk_import(**s, {draws[0], draws[1]}).ok());
  for (const char* damage : {"UPDATE outcome_chunks SET vals = x'00'", "UPDATE outcome_chunks SET n = n + 1",
                             "UPDATE outcome_chunks SET names = x'FFFFFFFF' || substr(names, 5)"}) {
    SCOPED_TRACE(damage);
    RawDb raw(p);
    raw.exec("SAVEPOINT x");
    raw.exec(damage);
    raw.exec("RELEASE x");
    auto f = (*s)->outcome_frame();
    ASSERT_FALSE(f.ok());
    EXPECT_EQ(f.status().code(), StatusCode::kDataLoss) << f.status().to_string();
    EXPECT_NE(f.status().message().find("outcome_chunks row first_draw_id 1"), std::string::npos)
        << f.status().to_string();
    auto g = (*s)->get_draw(draws[0].key);
    ASSERT_FALSE(g.ok());
    EXPECT_EQ(g.status().code(), StatusCode::kDataLoss);
    // Restore: re-import into a fresh copy is simpler than undoing the damage.
    raw.exec("DELETE FROM outcome_chunks; DELETE FROM draws");
    ASSERT_TRUE(bulk_import(**s, {draws[0], draws[1]}).ok());
  }
}

}  // namespace
}  // namespace nf
