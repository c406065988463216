// Store::put_draw_grouped (issue 14 item 5): draws from many threads committed in groups
// are all stored exactly once, each caller gets its own draw's status (a duplicate key
// fails alone), and the cache entries go with their draw.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "common/test_data.h"
#include "store/store.h"

namespace nf {
namespace {

namespace fs = std::filesystem;

Draw draw_of(int thread, int i) {
  Draw d;
  d.key = {"m", "q" + std::to_string(i), "none", "t" + std::to_string(thread), 0};
  d.cluster = "c";
  d.outcomes = {{"correct", static_cast<double>(i % 2), ""}};
  return d;
}

TEST(GroupCommit, ManyThreadsEveryDrawStoredOnceWithItsCacheEntry) {
  testing::TempDir dir;
  auto store = Store::open((fs::path(dir.path()) / "s.sqlite").string());
  ASSERT_TRUE(store.ok());
  constexpr int kThreads = 8, kDraws = 150;
  std::atomic<int> failures{0}, duplicates{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < kThreads; ++t)
    pool.emplace_back([&, t] {
      for (int i = 0; i < kDraws; ++i) {
        const std::vector<Store::CacheEntry> cache{{"k" + std::to_string(t) + "/" + std::to_string(i), {{"i", i}}}};
        if (!(*store)->put_draw_grouped(draw_of(t, i), cache).ok()) ++failures;
        if (i % 50 == 7) {  // the same key again: refused, alone
          Status st = (*store)->put_draw_grouped(draw_of(t, i), {});
          if (st.code() == StatusCode::kAlreadyExists) ++duplicates;
        }
      }
    });
  for (auto& th : pool) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(duplicates.load(), kThreads * 3);
  auto n = (*store)->draw_count();
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, kThreads * kDraws);
  for (int t = 0; t < kThreads; ++t)
    for (int i : {0, 7, kDraws - 1}) {
      auto c = (*store)->count_key(draw_of(t, i).key);
      ASSERT_TRUE(c.ok());
      EXPECT_EQ(*c, 1);
      auto hit = (*store)->cache_get("k" + std::to_string(t) + "/" + std::to_string(i));
      ASSERT_TRUE(hit.ok() && hit->has_value());
      EXPECT_EQ((**hit)["i"], i);
    }
  auto rows = (*store)->outcome_rows();
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->size(), static_cast<size_t>(kThreads * kDraws));
}

TEST(GroupCommit, ABadDrawFailsAloneAndWritesNothingOfItself) {
  testing::TempDir dir;
  auto store = Store::open((fs::path(dir.path()) / "s.sqlite").string());
  ASSERT_TRUE(store.ok());
  Draw bad = draw_of(0, 1);
  bad.outcomes.push_back({"correct", 1.0, ""});  // an outcome name twice: InvalidArgument
  EXPECT_EQ((*store)->put_draw_grouped(bad, {{"bad", {{"x", 1}}}}).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE((*store)->put_draw_grouped(draw_of(0, 2), {}).ok());
  EXPECT_EQ(*(*store)->draw_count(), 1);
  auto hit = (*store)->cache_get("bad");
  ASSERT_TRUE(hit.ok());
  EXPECT_FALSE(hit->has_value());
}

// Store::put_draw_group (the runner's committing thread): one transaction for the group,
// one status per draw; a bad draw and a stored key fail alone, the others and their cache
// entries are written; an empty group is a no-op.
TEST(GroupCommit, PutDrawGroupGivesEachDrawItsOwnStatus) {
  testing::TempDir dir;
  auto store = Store::open((fs::path(dir.path()) / "s.sqlite").string());
  ASSERT_TRUE(store.ok());
  std::vector<Status> statuses;
  EXPECT_TRUE((*store)->put_draw_group({}, &statuses).ok());
  EXPECT_TRUE(statuses.empty());
  ASSERT_TRUE((*store)->put_draw(draw_of(0, 3)).ok());
  Draw bad = draw_of(0, 1);
  bad.outcomes.push_back({"correct", 1.0, ""});  // an outcome name twice: InvalidArgument
  const Draw good = draw_of(0, 2), stored = draw_of(0, 3), good2 = draw_of(0, 4);
  const std::vector<Store::CacheEntry> bad_cache{{"bad", {{"x", 1}}}}, good_cache{{"good", {{"x", 2}}}}, none;
  const Status txn =
      (*store)->put_draw_group({{&bad, &bad_cache}, {&good, &good_cache}, {&stored, &none}, {&good2, &none}}, &statuses);
  ASSERT_TRUE(txn.ok()) << txn.message();
  ASSERT_EQ(statuses.size(), 4u);
  EXPECT_EQ(statuses[0].code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(statuses[1].ok());
  EXPECT_EQ(statuses[2].code(), StatusCode::kAlreadyExists);
  EXPECT_TRUE(statuses[3].ok());
  EXPECT_EQ(*(*store)->draw_count(), 3);  // draws 2, 3 (before) and 4
  EXPECT_EQ(*(*store)->count_key(bad.key), 0);
  auto bad_hit = (*store)->cache_get("bad");
  ASSERT_TRUE(bad_hit.ok());
  EXPECT_FALSE(bad_hit->has_value());
  auto good_hit = (*store)->cache_get("good");
  ASSERT_TRUE(good_hit.ok() && good_hit->has_value());
  EXPECT_EQ((**good_hit)["x"], 2);
}

}  // namespace
}  // namespace nf
