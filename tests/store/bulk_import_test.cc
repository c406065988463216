// SqliteStore::begin_bulk_import runs its transaction with foreign-key enforcement off
// (issue 14: a seek into draws per outcome row). These tests check what the constraints
// did still happens: replacing an api_error draw removes its outcomes and unlinks its
// judgments, nothing dangles afterwards, and enforcement (ON DELETE CASCADE) is back on
// the same connection once the import ends, committed or failed.
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "store/store.h"
#include "store_test_util.h"

namespace nf {
namespace {

using store_test::RawDb;
using store_test::ScratchDir;

Draw api_error_draw(const DrawKey& key) {
  Draw d;
  d.key = key;
  d.status = DrawStatus::kApiError;
  d.cluster = key.item;
  d.error = "HTTP 500";
  d.outcomes = {{"stale", 1.0, ""}};  // unusual for an api_error, but the store allows it
  return d;
}

// Deleting a draw through the Store API must take its outcomes with it (ON DELETE CASCADE):
// true only while the connection enforces foreign keys.
void expect_cascade_works(Store& s, const std::string& path, const DrawKey& key) {
  Draw d;
  d.key = key;
  d.cluster = key.item;
  d.outcomes = {{"after", 1.0, ""}};
  ASSERT_TRUE(s.replace_draw(d).ok());
  // The new row may reuse the deleted draw's id: then outcomes left behind would show here.
  auto back = s.get_draw(key);
  ASSERT_TRUE(back.ok());
  ASSERT_EQ(back->outcomes.size(), 1u);
  EXPECT_EQ(back->outcomes[0].name, "after");
  RawDb raw(path);
  EXPECT_EQ(raw.one("SELECT count(*) FROM outcomes o WHERE NOT EXISTS (SELECT 1 FROM draws d WHERE d.id = o.draw_id)"),
            "0");
  EXPECT_EQ(raw.column("PRAGMA foreign_key_check").size(), 0u);
}

TEST(BulkImport, ReplacingAnApiErrorDrawRemovesItsOutcomesAndUnlinksItsJudgments) {
  ScratchDir dir;
  const std::string path = dir.path("s.sqlite");
  auto s = Store::open(path);
  ASSERT_TRUE(s.ok()) << s.status().message();
  const DrawKey failed{"m", "q1", "none", "default", 0}, fresh{"m", "q2", "none", "default", 0};
  ASSERT_TRUE((*s)->put_draw(api_error_draw(failed)).ok());
  JudgmentRow j;
  j.subject = "m";
  j.item = "q1";
  j.judge = "judge";
  j.status = "api_error";
  j.draw_id = 1;
  ASSERT_TRUE((*s)->put_judgments({j}).ok());
  {
    auto bulk = (*s)->begin_bulk_import();
    ASSERT_TRUE(bulk.ok()) << bulk.status().message();
    bool dup = false;
    ASSERT_TRUE((*bulk)->add_outcome(failed, "q1", {"correct", 1.0, ""}, &dup).ok());
    ASSERT_TRUE((*bulk)->add_outcome(fresh, "q2", {"correct", 0.0, ""}, &dup).ok());
    ASSERT_TRUE((*bulk)->commit().ok());
    EXPECT_EQ((*bulk)->draws(), 2);
  }
  {
    RawDb raw(path);
    EXPECT_EQ(raw.one("SELECT count(*) FROM outcomes WHERE name = 'stale'"), "0");
    EXPECT_EQ(raw.one("SELECT count(*) FROM outcomes"), "0");  // the imported draws' outcomes are chunked (v4)
    EXPECT_EQ(raw.one("SELECT sum(n) FROM outcome_chunks"), "2");
    EXPECT_EQ(raw.one("SELECT quote(draw_id) FROM judgments"), "NULL");  // as ON DELETE SET NULL
    EXPECT_EQ(raw.one("SELECT group_concat(status) FROM draws WHERE item = 'q1'"), "ok");
    EXPECT_EQ(raw.column("PRAGMA foreign_key_check").size(), 0u);
  }
  auto d = (*s)->get_draw(failed);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->status, DrawStatus::kOk);
  ASSERT_EQ(d->outcomes.size(), 1u);
  EXPECT_EQ(d->outcomes[0].name, "correct");
  expect_cascade_works(**s, path, fresh);
}

TEST(BulkImport, ForeignKeysAreEnforcedAgainAfterAFailedImport) {
  ScratchDir dir;
  const std::string path = dir.path("s.sqlite");
  auto s = Store::open(path);
  ASSERT_TRUE(s.ok()) << s.status().message();
  const DrawKey stored{"m", "q1", "none", "default", 0};
  Draw ok;
  ok.key = stored;
  ok.cluster = "q1";
  ok.outcomes = {{"correct", 1.0, ""}};
  ASSERT_TRUE((*s)->put_draw(ok).ok());
  {
    auto bulk = (*s)->begin_bulk_import();
    ASSERT_TRUE(bulk.ok()) << bulk.status().message();
    bool dup = false;
    ASSERT_TRUE((*bulk)->add_outcome({"m", "q0", "none", "default", 0}, "q0", {"correct", 1.0, ""}, &dup).ok());
    const Status st = (*bulk)->add_outcome(stored, "q1", {"correct", 0.0, ""}, &dup);
    EXPECT_EQ(st.code(), StatusCode::kAlreadyExists) << st.message();
  }  // rolled back
  EXPECT_EQ(*(*s)->draw_count(), 1);
  expect_cascade_works(**s, path, stored);
  RawDb raw(path);
  EXPECT_EQ(raw.one("SELECT group_concat(name) FROM outcomes"), "after");
}

// BulkImport::put_item upserts items 256 per statement (the rest one by one at commit):
// the items table must hold what Store::put_item called in the same order writes, rowids
// included, also when an item of a batch is stored already (its row updated in place) and
// when the cluster is empty (the item is its own cluster).
TEST(BulkImport, ItemsInBatchesAreThoseOfOnePutItemEach) {
  ScratchDir dir;
  const nlohmann::json data{{"imported", true}};
  std::vector<std::pair<std::string, std::string>> items;  // 2 full batches and 45 more
  for (int i = 0; i < 2 * 256 + 45; ++i)
    items.push_back({fmt::format("q{}", i), i % 5 == 0 ? std::string() : fmt::format("c{}", i / 3)});
  items.insert(items.begin() + 100, {"q7", "moved"});  // an item again, in the same full batch
  items.push_back({"q9", "again"});                     // ... and in the last (partial) group
  auto rows = [](const std::string& path) {
    RawDb raw(path);
    return raw.column("SELECT rowid || '|' || item || '|' || cluster || '|' || data FROM items ORDER BY rowid");
  };
  std::vector<std::string> want, got;
  for (const bool bulk : {false, true}) {
    const std::string path = dir.path(bulk ? "bulk.sqlite" : "rows.sqlite");
    auto s = Store::open(path);
    ASSERT_TRUE(s.ok()) << s.status().message();
    // Stored before the import: the first batch updates it in place.
    ASSERT_TRUE((*s)->put_item("q3", "old", nlohmann::json{{"before", true}}).ok());
    if (bulk) {
      auto b = (*s)->begin_bulk_import();
      ASSERT_TRUE(b.ok()) << b.status().message();
      for (const auto& [item, cluster] : items) ASSERT_TRUE((*b)->put_item(item, cluster).ok());
      ASSERT_TRUE((*b)->commit().ok());
    } else {
      for (const auto& [item, cluster] : items)
        ASSERT_TRUE((*s)->put_item(item, cluster.empty() ? item : cluster, data).ok());
    }
    (bulk ? got : want) = rows(path);
  }
  ASSERT_EQ(want.size(), 2u * 256 + 45);  // q3 stored before, q7 and q9 twice
  EXPECT_EQ(got, want);
  EXPECT_EQ(want[0], "1|q3|c1|{\"imported\":true}");  // updated in place, first row
}

}  // namespace
}  // namespace nf
