// Streaming long-format import (issue 14 item 2): import_long_draws_file writes exactly
// what read_long_draws + import_long_draws write, for CSV and JSONL, with the rows of a
// draw scattered over the file; and its errors name file, line and column as before.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>


#include "common/sqlite_file.h"
#include "common/test_data.h"
#include "data/draws_import.h"
#include "runner/import.h"
#include "store/store.h"

namespace nf {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string write(const testing::TempDir& dir, const std::string& name, const std::string& text) {
  const std::string p = (fs::path(dir.path()) / name).string();
  std::ofstream(p, std::ios::binary) << text;
  return p;
}

std::vector<std::string> dump(Store& s) {
  std::vector<std::string> out;
  auto rows = s.outcome_rows();
  EXPECT_TRUE(rows.ok());
  for (const auto& r : *rows)
    out.push_back(r.subject + "|" + r.config + "|" + r.condition + "|" + r.item + "|" + r.cluster + "|" +
                  std::to_string(r.replicate) + "|" + r.outcome + "|" + std::to_string(r.value) + "|" + r.label);
  auto items = s.items();
  EXPECT_TRUE(items.ok());
  for (const auto& i : *items) out.push_back("item " + i.item + " " + i.cluster + " " + i.data.dump());
  auto n = s.draw_count();
  out.push_back("draws " + std::to_string(n.ok() ? *n : -1));
  return out;
}

// Rows of one draw are not adjacent (q1 rep 0 comes back after q2), values of every kind.
const char* kCsv =
    "subject,item,cluster,condition,config,replicate,outcome,value,label\n"
    "m1,q1,c1,none,default,0,correct,1,\n"
    "m1,q2,,none,default,0,correct,0,\n"
    "m1,q1,c1,none,default,0,answer,B,\n"
    "m1,q1,c1,none,default,1,answer,C,\n"
    "m1,q1,c1,none,default,1,correct,false,\n"
    "m2,q2,,swap,t=0.7,3,score,0.25,x\n"
    "m1,q2,,none,default,0,answer,B,\n";

void expect_same_as_in_memory(const std::string& file) {
  testing::TempDir dir;
  auto a = Store::open((fs::path(dir.path()) / "a.sqlite").string());
  auto b = Store::open((fs::path(dir.path()) / "b.sqlite").string());
  ASSERT_TRUE(a.ok() && b.ok());
  auto rows = read_long_draws(file);
  ASSERT_TRUE(rows.ok()) << rows.status().to_string();
  auto sa = import_long_draws(*rows, **a, "s");
  ASSERT_TRUE(sa.ok()) << sa.status().to_string();
  auto sb = import_long_draws_file(file, **b, "s");
  ASSERT_TRUE(sb.ok()) << sb.status().to_string();
  EXPECT_EQ(sa->rows, sb->rows);
  EXPECT_EQ(sa->draws, sb->draws);
  EXPECT_EQ(sa->items, sb->items);
  EXPECT_EQ(dump(**a), dump(**b));
  auto st = (*b)->get_study();
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->name, "s");
}

TEST(StreamingImport, CsvWritesWhatTheInMemoryImportWrites) {
  testing::TempDir dir;
  expect_same_as_in_memory(write(dir, "d.csv", kCsv));
}

TEST(StreamingImport, JsonlWritesWhatTheInMemoryImportWrites) {
  // `choice` in the export's form (number + label) and `pick` as a bare label: one outcome
  // may not mix the two (numbers vs labels, data/draws_import.h).
  testing::TempDir dir;
  expect_same_as_in_memory(write(
      dir, "d.jsonl",
      "{\"subject\":\"m1\",\"item\":\"q1\",\"cluster\":\"c1\",\"condition\":\"none\",\"config\":\"d\",\"replicate\":0,"
      "\"outcome\":\"correct\",\"value\":true}\n"
      "{\"subject\":\"m1\",\"item\":\"q1\",\"condition\":\"none\",\"config\":\"d\",\"replicate\":1,\"cluster\":\"c1\","
      "\"outcomes\":[{\"name\":\"correct\",\"value\":0},{\"name\":\"choice\",\"value\":2,\"label\":\"C\"}]}\n"
      "{\"subject\":\"m1\",\"item\":\"q1\",\"cluster\":\"c1\",\"condition\":\"none\",\"config\":\"d\",\"replicate\":0,"
      "\"outcome\":\"pick\",\"value\":\"B\"}\n"));
}

TEST(StreamingImport, ManyRowsInOneTransaction) {
  testing::TempDir dir;
  std::string text = "subject,item,cluster,condition,config,replicate,outcome,value\n";
  for (int i = 0; i < 300; ++i)
    for (int r = 0; r < 4; ++r)
      for (int o = 0; o < 3; ++o)
        text += "m,i" + std::to_string(i) + ",c" + std::to_string(i / 10) + ",none,default," + std::to_string(r) +
                ",o" + std::to_string(o) + "," + std::to_string((i + r + o) % 2) + "\n";
  expect_same_as_in_memory(write(dir, "big.csv", text));
}

// The parsing thread hands the writer only the string fields that changed from the
// previous row (import.cc RowBlock, LongDrawRow::changed): rows where a single field
// changes (each field in turn, over several parser blocks of 8,192 rows), rows where every
// key changes, quoted fields and CRLF line ends must all write what the in-memory import
// writes.
TEST(StreamingImport, RowsChangingOneFieldAtATimeWriteWhatTheInMemoryImportWrites) {
  testing::TempDir dir;
  const std::string header = "subject,item,cluster,condition,config,replicate,outcome,value,label\n";
  // Field f of the row changes when row % 9 == f; the item's cluster follows the item.
  std::string text = header;
  std::array<int, 9> at{};
  std::set<std::string> keys;
  uint32_t lcg = 12345;
  for (int row = 0; row < 26000; ++row) {
    lcg = lcg * 1664525u + 1013904223u;
    const int f = static_cast<int>((lcg >> 16) % 9);
    ++at[f];
    const std::string subject = "m" + std::to_string(at[0] % 3), item = "q" + std::to_string(at[1] % 50),
                      cluster = at[2] % 2 == 0 ? "" : "c" + std::to_string(at[1] % 50 / 5),
                      condition = at[3] % 2 == 0 ? "" : "swap", config = "t" + std::to_string(at[4] % 4),
                      replicate = std::to_string(at[5] % 20), outcome = "o" + std::to_string(at[6] % 6),
                      value = std::to_string(at[7] % 2), label = at[8] % 3 == 0 ? "" : "L" + std::to_string(at[8] % 3);
    // The cluster column alternates between empty (the item) and a named cluster: the
    // named one is used only by items that never default, so give those items their own names.
    const std::string it = cluster.empty() ? item : "n" + item;
    if (!keys.insert(subject + "|" + it + "|" + condition + "|" + config + "|" + replicate + "|" + outcome).second)
      continue;  // a duplicate row is an error, not the subject of this test
    text += subject + "," + it + "," + cluster + "," + condition + "," + config + "," + replicate + "," + outcome + "," +
            value + "," + label + "\n";
  }
  ASSERT_GT(keys.size(), 2u * 8192);  // three parser blocks or more
  expect_same_as_in_memory(write(dir, "one_field.csv", text));

  // Every key field changes on every row.
  std::string every = header;
  for (int i = 0; i < 3000; ++i)
    every += "m" + std::to_string(i % 2) + ",q" + std::to_string(i) + ",c" + std::to_string(i) + ",k" +
             std::to_string(i % 3) + ",g" + std::to_string(i % 5) + "," + std::to_string(i % 7) + ",o" +
             std::to_string(i % 4) + "," + std::to_string(i % 2) + ",l" + std::to_string(i % 2) + "\n";
  expect_same_as_in_memory(write(dir, "every.csv", every));

  // Quoted fields (a comma, a "", a line break inside) and CRLF line ends; a field that is
  // quoted on one row and not on the next is the same value.
  const std::string quoted = write(dir, "quoted.csv",
                                   "subject,item,cluster,condition,config,replicate,outcome,value,label\r\n"
                                   "\"m,1\",q1,c1,none,default,0,correct,1,\r\n"
                                   "\"m,1\",\"q1\",c1,none,default,0,\"say \"\"hi\"\"\",0,\r\n"
                                   "\"m,1\",q1,c1,none,default,1,correct,0,\"two\r\nlines\"\r\n"
                                   "m,q2,,none,default,0,correct,1,\r\n"
                                   "m,q2,,none,default,0,\"say \"\"hi\"\"\",1,\r\n");
  expect_same_as_in_memory(quoted);
  testing::TempDir d2;
  auto s = Store::open((fs::path(d2.path()) / "s.sqlite").string());
  ASSERT_TRUE(s.ok());
  auto r = import_long_draws_file(quoted, **s, "s");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->rows, 5);
  EXPECT_EQ(r->draws, 3);
  EXPECT_EQ(dump(**s), (std::vector<std::string>{
                           "m|default|none|q2|q2|0|correct|1.000000|",
                           "m|default|none|q2|q2|0|say \"hi\"|1.000000|",
                           "m,1|default|none|q1|c1|0|correct|1.000000|",
                           "m,1|default|none|q1|c1|1|correct|0.000000|two\r\nlines",
                           "m,1|default|none|q1|c1|0|say \"hi\"|0.000000|",
                           "item q1 c1 {\"imported\":true}",
                           "item q2 q2 {\"imported\":true}",
                           "draws 3",
                       }));
}

// Errors on rows where a single field changed keep their lines: a cluster that is the only
// change of its row, a repeated row after quoted fields with line breaks (CRLF).
TEST(StreamingImport, ErrorsOnRowsWithOneChangedFieldKeepTheirLines) {
  testing::TempDir dir;
  auto s = Store::open((fs::path(dir.path()) / "s.sqlite").string());
  ASSERT_TRUE(s.ok());
  const std::string cluster_only = write(dir, "c.csv",
                                         "subject,item,cluster,condition,config,replicate,outcome,value\n"
                                         "m,q,c1,n,d,0,o,1\n"
                                         "m,q,c1,n,d,0,p,1\n"
                                         "m,q,c2,n,d,0,p,1\n");
  auto r = import_long_draws_file(cluster_only, **s, "s");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(),
              HasSubstr(cluster_only + ":4: cluster: item 'q' is given two clusters ('c1' and 'c2')"));
  const std::string dup = write(dir, "d.csv",
                                "subject,item,cluster,condition,config,replicate,outcome,value,label\r\n"
                                "m,q,,n,d,0,o,1,\"a\r\nb\"\r\n"
                                "m,q,,n,d,0,p,1,\"a\r\nb\"\r\n"
                                "m,q,,n,d,0,o,0,\r\n");
  r = import_long_draws_file(dup, **s, "s");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(),
              HasSubstr(dup + ":6: outcome: duplicate row for (subject=m, item=q, condition=n, config=d, replicate=0, "
                              "outcome=o) (first on line 2)"));
  EXPECT_EQ(*(*s)->draw_count(), 0);
}

TEST(StreamingImport, NonAdjacentDuplicateNamesBothLines) {
  testing::TempDir dir;
  const std::string p = write(dir, "dup.csv",
                              "subject,item,cluster,condition,config,replicate,outcome,value\n"
                              "m,q,,n,d,0,o,1\n"
                              "m,q,,n,d,1,o,1\n"
                              "m,q,,n,d,0,o,0\n");
  auto s = Store::open((fs::path(dir.path()) / "s.sqlite").string());
  ASSERT_TRUE(s.ok());
  auto r = import_long_draws_file(p, **s, "s");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(),
              HasSubstr(p + ":4: outcome: duplicate row for (subject=m, item=q, condition=n, config=d, replicate=0, "
                            "outcome=o) (first on line 2)"));
  EXPECT_EQ(*(*s)->draw_count(), 0);  // all or nothing
}

TEST(StreamingImport, AdjacentDuplicateNamesBothLines) {
  // A new draw's outcomes are buffered and checked in memory (issue 14): the duplicate is
  // still reported on its own line, and a draw with more outcomes than one INSERT batch
  // (kMaxBatch = 32) is written whole.
  testing::TempDir dir;
  std::string text = "subject,item,cluster,condition,config,replicate,outcome,value\n";
  for (int o = 0; o < 40; ++o) text += "m,q,,n,d,0,o" + std::to_string(o) + ",1\n";
  expect_same_as_in_memory(write(dir, "wide.csv", text));
  const std::string p = write(dir, "dup.csv",
                              "subject,item,cluster,condition,config,replicate,outcome,value\n"
                              "m,q,,n,d,0,o,1\n"
                              "m,q,,n,d,0,p,1\n"
                              "m,q,,n,d,0,o,0\n");
  auto s = Store::open((fs::path(dir.path()) / "s.sqlite").string());
  ASSERT_TRUE(s.ok());
  auto r = import_long_draws_file(p, **s, "s");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(),
              HasSubstr(p + ":4: outcome: duplicate row for (subject=m, item=q, condition=n, config=d, replicate=0, "
                            "outcome=o) (first on line 2)"));
  EXPECT_EQ(*(*s)->draw_count(), 0);
}

TEST(StreamingImport, ErrorsNameFileLineAndColumnAndWriteNothing) {
  testing::TempDir dir;
  auto s = Store::open((fs::path(dir.path()) / "s.sqlite").string());
  ASSERT_TRUE(s.ok());
  const std::string bad_rep = write(dir, "rep.csv",
                                    "value,outcome,replicate,config,condition,item,subject\n"
                                    "1,o,0,d,n,q,m\n"
                                    "1,o,x,d,n,q,m\n");
  auto r = import_long_draws_file(bad_rep, **s, "s");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr(bad_rep + ":3: replicate: expected a non-negative integer, got 'x'"));
  const std::string two = write(dir, "two.csv",
                                "subject,item,cluster,condition,config,replicate,outcome,value\n"
                                "m,q,c1,n,d,0,o,1\n"
                                "m,q,c2,n,d,1,o,1\n");
  r = import_long_draws_file(two, **s, "s");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr(two + ":3: cluster: item 'q' is given two clusters ('c1' and 'c2')"));
  EXPECT_EQ(*(*s)->draw_count(), 0);
  auto items = (*s)->items();
  ASSERT_TRUE(items.ok());
  EXPECT_TRUE(items->empty());
}

// The file is parsed on a second thread in blocks of 8,192 rows (import.cc ParsedRows), so
// the parser runs ahead of the store: whichever error comes first in the file is the one
// reported, many blocks in, and nothing is written.
TEST(StreamingImport, TheFirstErrorInTheFileWinsAcrossParserBlocks) {
  testing::TempDir dir;
  auto rows = [](int from, int to) {
    std::string t;
    for (int i = from; i < to; ++i) t += "m,q" + std::to_string(i) + ",,n,d,0,o,1\n";
    return t;
  };
  const std::string header = "subject,item,cluster,condition,config,replicate,outcome,value\n";
  // Rows are lines 2.. : line 2 + i holds q<i>.
  const std::string dup_first =
      write(dir, "a.csv", header + rows(0, 9000) + "m,q5,,n,d,0,o,0\n" + rows(9000, 20000) + "m,q,,n,d,x,o,1\n");
  const std::string parse_first =
      write(dir, "b.csv", header + rows(0, 6000) + "m,q,,n,d,x,o,1\n" + rows(6000, 20000) + "m,q5,,n,d,0,o,0\n");
  auto s = Store::open((fs::path(dir.path()) / "s.sqlite").string());
  ASSERT_TRUE(s.ok());
  auto r = import_long_draws_file(dup_first, **s, "s");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr(dup_first + ":9002: outcome: duplicate row for (subject=m, item=q5, "
                                              "condition=n, config=d, replicate=0, outcome=o) (first on line 7)"));
  r = import_long_draws_file(parse_first, **s, "s");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr(parse_first + ":6002: replicate: expected a non-negative integer"));
  EXPECT_EQ(*(*s)->draw_count(), 0);
  // And a clean file of many blocks imports every row.
  const std::string good = write(dir, "c.csv", header + rows(0, 20000));
  auto ok = import_long_draws_file(good, **s, "s");
  ASSERT_TRUE(ok.ok()) << ok.status().to_string();
  EXPECT_EQ(ok->rows, 20000);
  EXPECT_EQ(*(*s)->draw_count(), 20000);
}

// Into a store without draws, new draws whose keys come in increasing order are queued
// and inserted 256 at a time by one multi-row INSERT (store.cc BulkImport::Impl::queue);
// a draw out of order (one whose rows come back later in the file, or a key below the
// greatest so far) is written row by row after the queue. The stored rows must be those
// of the in-memory import whichever way the rows fall.
TEST(StreamingImport, GroupedDrawsWriteWhatTheInMemoryImportWrites) {
  testing::TempDir dir;
  const std::string header = "subject,item,cluster,condition,config,replicate,outcome,value,label\n";
  auto row = [](int i, const std::string& outcome, int v) {  // items i0000, i0001, ...: in key order
    const std::string n = std::to_string(i);
    return "m,i" + std::string(4 - std::min<size_t>(4, n.size()), '0') + n + ",c" + std::to_string(i / 7) +
           ",none,default,0," + outcome + "," + std::to_string(v) + ",\n";
  };
  // 600 draws with outcome a, then the same 600 again with outcome b: every draw of the
  // second pass is stored already (row by row: each draw's outcomes leave its chunk).
  std::string two_passes = header;
  for (int i = 0; i < 600; ++i) two_passes += row(i, "a", i % 2);
  for (int i = 0; i < 600; ++i) two_passes += row(i, "b", (i / 3) % 2);
  expect_same_as_in_memory(write(dir, "two_passes.csv", two_passes));
  // A draw that comes back while its group is queued (i300 after i305), in the second group.
  std::string within = header;
  for (int i = 0; i < 306; ++i) within += row(i, "a", 1);
  within += row(300, "b", 0);
  for (int i = 306; i < 900; ++i) within += row(i, "a", 0);
  expect_same_as_in_memory(write(dir, "within.csv", within));
  // ... and one that comes back after its group was written (i3 after 600 draws).
  std::string after = header;
  for (int i = 0; i < 600; ++i) after += row(i, "a", i % 3 == 0);
  after += row(3, "b", 1);
  for (int i = 600; i < 700; ++i) after += row(i, "a", 1);
  expect_same_as_in_memory(write(dir, "after.csv", after));
  // Keys in decreasing order, then increasing ones among draws that come back.
  std::string unsorted = header;
  for (int i = 400; i >= 0; --i) unsorted += row(i, "a", i % 2) + row(i, "b", 1);
  for (int i = 0; i < 300; ++i) unsorted += row(500 + i, "a", 0) + row(i * 3, "c", 1);
  expect_same_as_in_memory(write(dir, "unsorted.csv", unsorted));
  // Exactly two groups, and two groups and one draw.
  std::string exact = header;
  for (int i = 0; i < 512; ++i) exact += row(i, "a", i % 2);
  expect_same_as_in_memory(write(dir, "exact.csv", exact));
  expect_same_as_in_memory(write(dir, "exact1.csv", exact + row(512, "a", 1)));
}

// A problem of a row whose draw waits in the queue is reported on that row, before any
// later row's error: the first problem in the file is the one reported.
TEST(StreamingImport, AProblemInAGroupComesBeforeALaterRowsError) {
  testing::TempDir dir;
  const std::string header = "subject,item,cluster,condition,config,replicate,outcome,value\n";
  std::string rows;
  for (int i = 0; i < 300; ++i) rows += "m,q" + std::to_string(i) + ",,n,d,0,o,1\n";
  // Line 302 repeats line 7 (q5); then a row of a different kind of error.
  const std::string dup = "m,q5,,n,d,0,o,0\n";
  const std::string then_cluster = write(dir, "a.csv", header + rows + dup + "m,q6,cX,n,d,1,o,1\n");
  const std::string then_parse = write(dir, "b.csv", header + rows + dup + "m,q,,n,d,x,o,1\n");
  const std::string then_end = write(dir, "c.csv", header + rows + dup);
  auto s = Store::open((fs::path(dir.path()) / "s.sqlite").string());
  ASSERT_TRUE(s.ok());
  for (const std::string& p : {then_cluster, then_parse, then_end}) {
    auto r = import_long_draws_file(p, **s, "s");
    ASSERT_FALSE(r.ok()) << p;
    EXPECT_THAT(r.status().message(), HasSubstr(p + ":302: outcome: duplicate row for (subject=m, item=q5, "
                                                "condition=n, config=d, replicate=0, outcome=o) (first on line 7)"));
  }
  EXPECT_EQ(*(*s)->draw_count(), 0);
  // A repeated name within one draw while earlier draws wait in the group.
  const std::string same_draw = write(dir, "d.csv", header + rows + "m,r,,n,d,0,o,1\nm,r,,n,d,0,o,0\n");
  auto r = import_long_draws_file(same_draw, **s, "s");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr(same_draw + ":303: outcome: duplicate row for (subject=m, item=r, "
                                              "condition=n, config=d, replicate=0, outcome=o) (first on line 302)"));
  EXPECT_EQ(*(*s)->draw_count(), 0);
}

// Into a store without draws the import runs with a rollback journal (store.cc
// use_rollback_journal); the store is in WAL mode again afterwards, and a second import
// (into a store with draws) keeps WAL mode throughout.
TEST(StreamingImport, TheStoreIsInWalModeAfterAnImport) {
  testing::TempDir dir;
  const std::string store = (fs::path(dir.path()) / "s.sqlite").string();
  std::string text = "subject,item,cluster,condition,config,replicate,outcome,value\n";
  for (int i = 0; i < 600; ++i) text += "m,q" + std::to_string(i) + ",,n,d,0,o,1\n";
  {
    auto s = Store::open(store);
    ASSERT_TRUE(s.ok());
    auto r = import_long_draws_file(write(dir, "a.csv", text), **s, "s");
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    EXPECT_FALSE(fs::exists(store + "-journal"));
    std::string more = "subject,item,cluster,condition,config,replicate,outcome,value\n";
    for (int i = 0; i < 600; ++i) more += "m,q" + std::to_string(i) + ",,n,d,1,o,0\n";
    r = import_long_draws_file(write(dir, "b.csv", more), **s, "s");
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    EXPECT_EQ(*(*s)->draw_count(), 1200);
  }
  EXPECT_EQ(testing::journal_mode(store), "wal");
}

TEST(StreamingImport, ReimportIsRefusedAndAnApiErrorDrawIsReplaced) {
  testing::TempDir dir;
  auto s = Store::open((fs::path(dir.path()) / "s.sqlite").string());
  ASSERT_TRUE(s.ok());
  Draw failed;
  failed.key = {"m1", "q1", "none", "default", 1};
  failed.cluster = "c1";
  failed.status = DrawStatus::kApiError;
  ASSERT_TRUE((*s)->put_draw(failed).ok());
  const std::string p = write(dir, "d.csv", kCsv);
  auto first = import_long_draws_file(p, **s, "s");
  ASSERT_TRUE(first.ok()) << first.status().to_string();
  EXPECT_EQ(first->draws, 4);
  EXPECT_EQ(*(*s)->draw_count(), 4);  // the api_error draw was replaced by the imported one
  auto d = (*s)->get_draw(failed.key);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->status, DrawStatus::kOk);
  EXPECT_EQ(d->outcomes.size(), 2u);
  auto again = import_long_draws_file(p, **s, "s");
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(*(*s)->draw_count(), 4);
}

}  // namespace
}  // namespace nf
