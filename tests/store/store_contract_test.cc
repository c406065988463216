// The Store contract, run against both implementations: SqliteStore (always) and PgStore
// (when NOISEFLOOR_PG_URL names a server; scripts/with-postgres). Then the shared-plan
// operations (claims, leases, commit-once) that only the PostgreSQL store offers.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <set>
#include <sstream>
#include <thread>

#include "common/pg.h"
#include "store/store.h"
#include "store/store_test_util.h"

namespace nf {
namespace {

using store_test::sample_draw;

// One store of the kind under test, fresh per test.
class StoreContract : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "postgresql") {
      NF_SKIP_WITHOUT_PG();
      pg_ = std::make_unique<testing::PgSchema>();
      location_ = pg_->url();
    } else {
      dir_ = std::make_unique<store_test::ScratchDir>();
      location_ = dir_->path("s.sqlite");
    }
    auto s = Store::open(location_);
    ASSERT_TRUE(s.ok()) << s.status().message();
    store_ = std::move(*s);
  }
  std::unique_ptr<store_test::ScratchDir> dir_;
  std::unique_ptr<testing::PgSchema> pg_;
  std::string location_;
  std::unique_ptr<Store> store_;
};

TEST_P(StoreContract, KindMatchesTheUrl) {
  EXPECT_EQ(store_->kind(), GetParam() == "postgresql" ? "PostgreSQL store" : "SQLite store");
}

TEST_P(StoreContract, DrawRoundTripsByteForByte) {
  Draw d = sample_draw("m", "q1", "none", "default", 0);
  d.raw_response = std::string("raw \xff\xfe bytes\0 with NUL", 24);  // not UTF-8, with a NUL
  d.content = "caf\xc3\xa9";
  d.latency_ms = 12.5;
  d.prompt_tokens = 7;
  d.finish_reason = "stop";
  d.served_model = "served";
  d.attempts = 2;
  d.outcomes = {{"correct", 1.0, ""}, {"choice", 0.1 + 0.2, "B"}};
  d.extra = {{"permutation", {2, 0, 1}}};
  ASSERT_TRUE(store_->put_draw(d).ok());
  auto got = store_->get_draw(d.key);
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(got->raw_response, d.raw_response);
  EXPECT_EQ(got->content, d.content);
  EXPECT_EQ(got->cluster, d.cluster);
  EXPECT_EQ(got->request, d.request);
  EXPECT_EQ(got->extra, d.extra);
  EXPECT_EQ(got->latency_ms, 12.5);
  EXPECT_EQ(got->prompt_tokens, 7);
  EXPECT_EQ(got->completion_tokens, -1);
  EXPECT_EQ(got->attempts, 2);
  ASSERT_EQ(got->outcomes.size(), 2u);
  EXPECT_EQ(got->outcomes[0].name, "correct");  // in the order written
  EXPECT_EQ(got->outcomes[1].value, 0.1 + 0.2);  // the exact double
  EXPECT_EQ(got->outcomes[1].label, "B");
  EXPECT_EQ(store_->get_draw({"m", "q9", "none", "default", 0}).status().code(), StatusCode::kNotFound);
}

TEST_P(StoreContract, DuplicateKeyIsAlreadyExistsAndApiErrorIsReplaced) {
  Draw d = sample_draw("m", "q1", "none", "default", 0);
  ASSERT_TRUE(store_->put_draw(d).ok());
  EXPECT_EQ(store_->put_draw(d).code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(*store_->count_key(d.key), 1);
  Draw failed = sample_draw("m", "q2", "none", "default", 0);
  failed.status = DrawStatus::kApiError;
  failed.outcomes.clear();
  ASSERT_TRUE(store_->put_draw(failed).ok());
  auto keys = store_->finished_keys();
  ASSERT_TRUE(keys.ok());
  EXPECT_EQ(keys->size(), 1u) << "api_error draws are retried on resume";
  ASSERT_TRUE(store_->put_draw(sample_draw("m", "q2", "none", "default", 0)).ok());
  EXPECT_EQ(*store_->count_key(failed.key), 1);
  EXPECT_EQ(store_->get_draw(failed.key)->status, DrawStatus::kOk);
  EXPECT_EQ(*store_->draw_count(), 2);
}

TEST_P(StoreContract, InvalidDrawsAreRejectedAndNothingIsWritten) {
  Draw neg = sample_draw("m", "q1", "none", "default", 0);
  neg.key.replicate = -1;
  EXPECT_EQ(store_->put_draw(neg).code(), StatusCode::kInvalidArgument);
  Draw nan = sample_draw("m", "q1", "none", "default", 0);
  nan.outcomes[0].value = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(store_->put_draw(nan).code(), StatusCode::kInvalidArgument);
  Draw twice = sample_draw("m", "q1", "none", "default", 0);
  twice.outcomes[1].name = twice.outcomes[0].name;
  EXPECT_EQ(store_->put_draw(twice).code(), StatusCode::kInvalidArgument);
  // put_draws is all or nothing.
  std::vector<Draw> batch = {sample_draw("m", "q1", "none", "default", 0), nan};
  EXPECT_EQ(store_->put_draws(batch).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(*store_->draw_count(), 0);
}

TEST_P(StoreContract, OutcomeRowsAreOrderedByteWiseAndCachedDrawsCanBeLeftOut) {
  // "B" < "a" byte-wise (a locale collation would put "a" first).
  for (const char* item : {"a", "B", "c"})
    for (int r = 0; r < 2; ++r) ASSERT_TRUE(store_->put_draw(sample_draw("m", item, "none", "default", r)).ok());
  Draw cached = sample_draw("m", "d", "none", "default", 0);
  cached.cached = true;
  ASSERT_TRUE(store_->put_draw(cached).ok());
  auto rows = store_->outcome_rows();
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 14u);
  EXPECT_EQ((*rows)[0].item, "B");
  EXPECT_EQ((*rows)[0].outcome, "o0");
  EXPECT_EQ((*rows)[0].cluster, "cl-B");
  EXPECT_EQ((*rows)[1].replicate, 1);
  EXPECT_EQ((*rows)[1].value, 1.0);  // (1 + 0) % 2
  EXPECT_EQ(store_->outcome_rows(false)->size(), 12u);
  auto frame = store_->outcome_frame();
  ASSERT_TRUE(frame.ok());
  EXPECT_EQ(frame->size(), 14u);
  EXPECT_EQ(frame->dict.items.size(), 4u);
  auto items_counts = store_->status_counts();
  ASSERT_TRUE(items_counts.ok());
  ASSERT_EQ(items_counts->size(), 1u);
  EXPECT_EQ((*items_counts)[0].count, 7);
}

TEST_P(StoreContract, StudyItemsSubjectsCacheAndServedModels) {
  StudyRecord rec{"s", "hash1", 7, {{"name", "s"}}};
  auto first = store_->put_study(rec);
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_EQ(*first, "");
  rec.hash = "hash2";
  EXPECT_EQ(*store_->put_study(rec), "hash1");
  auto study = store_->get_study();
  ASSERT_TRUE(study.ok());
  EXPECT_EQ(study->hash, "hash2");
  EXPECT_EQ(study->seed, 7);
  ASSERT_TRUE(store_->put_item("b", "", {{"q", 1}}).ok());
  ASSERT_TRUE(store_->put_item("B", "k", {{"q", 2}}).ok());
  ASSERT_TRUE(store_->put_item("b", "k2", {{"q", 3}}).ok());  // upsert
  auto items = store_->items();
  ASSERT_TRUE(items.ok());
  ASSERT_EQ(items->size(), 2u);
  EXPECT_EQ((*items)[0].item, "B");
  EXPECT_EQ((*items)[1].cluster, "k2");
  EXPECT_EQ((*items)[1].data["q"], 3);
  ASSERT_TRUE(store_->put_subject("m", {{"backend", "sim"}}).ok());
  EXPECT_EQ(store_->subject_specs()->at("m")["backend"], "sim");
  EXPECT_FALSE(store_->cache_get("k")->has_value());
  ASSERT_TRUE(store_->cache_put("k", {{"content", "x"}}).ok());
  ASSERT_TRUE(store_->cache_put("k", {{"content", "y"}}).ok());
  EXPECT_EQ((**store_->cache_get("k"))["content"], "y");
  Draw d = sample_draw("m", "b", "none", "default", 0);
  d.served_model = "m-2024";
  ASSERT_TRUE(store_->put_draw_with_cache(d, {{"k2", {{"content", "z"}}}}).ok());
  EXPECT_EQ((**store_->cache_get("k2"))["content"], "z");
  EXPECT_EQ(store_->served_models()->at("m"), std::vector<std::string>{"m-2024"});
}

TEST_P(StoreContract, ExportsEqualTheSqliteExportOfTheSameDraws) {
  store_test::ScratchDir ref_dir;
  auto ref = Store::open(ref_dir.path("ref.sqlite"));
  ASSERT_TRUE(ref.ok());
  std::vector<Draw> draws;
  for (const char* item : {"b", "A", "a,b"})
    for (const char* config : {"temperature=0.7", "temperature=0,top_p=0.9"})
      for (int r = 0; r < 2; ++r) draws.push_back(sample_draw("m", item, "none", config, r));
  draws[1].outcomes[0].value = 0.1 + 0.2;
  draws[2].status = DrawStatus::kApiError;
  draws[2].outcomes.clear();
  draws[3].raw_response = "\xff not utf-8";
  ASSERT_TRUE(store_->put_draws(draws).ok());
  ASSERT_TRUE((*ref)->put_draws(draws).ok());
  std::ostringstream csv, ref_csv, jsonl, ref_jsonl;
  ASSERT_TRUE(store_->export_csv(csv).ok());
  ASSERT_TRUE((*ref)->export_csv(ref_csv).ok());
  EXPECT_EQ(csv.str(), ref_csv.str());
  ASSERT_TRUE(store_->export_jsonl(jsonl).ok());
  ASSERT_TRUE((*ref)->export_jsonl(ref_jsonl).ok());
  auto without_time = [](const std::string& text) {
    std::vector<nlohmann::json> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
      auto j = nlohmann::json::parse(line);
      j.erase("created_at");
      out.push_back(std::move(j));
    }
    return out;
  };
  const auto got = without_time(jsonl.str()), want = without_time(ref_jsonl.str());
  ASSERT_EQ(got.size(), 12u);
  EXPECT_EQ(got, want);
}

TEST_P(StoreContract, ReplaceDrawOverwritesAnyStatus) {
  Draw d = sample_draw("m", "q1", "none", "default", 0);
  ASSERT_TRUE(store_->put_draw(d).ok());
  d.content = "second";
  ASSERT_TRUE(store_->replace_draw(d).ok());
  EXPECT_EQ(store_->get_draw(d.key)->content, "second");
  EXPECT_EQ(*store_->draw_count(), 1);
}

TEST_P(StoreContract, SharedPlanIsPostgresqlOnly) {
  const std::vector<DrawKey> keys = {{"m", "q1", "none", "default", 0}};
  Status st = store_->plan_draw_keys(keys);
  if (GetParam() == "sqlite") {
    EXPECT_EQ(st.code(), StatusCode::kUnimplemented);
    EXPECT_NE(st.message().find("SQLite store"), std::string::npos) << st.message();
    EXPECT_NE(st.message().find("plan_draw_keys"), std::string::npos) << st.message();
    EXPECT_EQ(store_->claim_draws("w", 1, 10).status().code(), StatusCode::kUnimplemented);
  } else {
    EXPECT_TRUE(st.ok()) << st.message();
    // And what the PostgreSQL store does not offer is a clear error, not a crash.
    Status j = store_->put_judgments({});
    EXPECT_EQ(j.code(), StatusCode::kUnimplemented);
    EXPECT_NE(j.message().find("PostgreSQL store"), std::string::npos) << j.message();
    EXPECT_EQ(store_->begin_bulk_import().status().code(), StatusCode::kUnimplemented);
  }
}

INSTANTIATE_TEST_SUITE_P(BothStores, StoreContract, ::testing::Values("sqlite", "postgresql"),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

// ---- the shared plan (PostgreSQL) --------------------------------------------------------

std::vector<DrawKey> plan_keys(int n) {
  std::vector<DrawKey> keys;
  for (int i = 0; i < n; ++i) keys.push_back({"m", "q" + std::to_string(i), "none", "default", 0});
  return keys;
}

Draw draw_for(const DrawKey& k) { return sample_draw(k.subject, k.item, k.condition, k.config, k.replicate); }

TEST(PgSharedPlan, PlanIsIdempotentAndConcurrentClaimsAreDisjoint) {
  NF_SKIP_WITHOUT_PG();
  testing::PgSchema schema;
  auto a = Store::open(schema.url());
  auto b = Store::open(schema.url());
  ASSERT_TRUE(a.ok() && b.ok());
  const auto keys = plan_keys(200);
  ASSERT_TRUE((*a)->plan_draw_keys(keys).ok());
  ASSERT_TRUE((*b)->plan_draw_keys(keys).ok());  // a second worker writes nothing new
  EXPECT_EQ((*a)->plan_counts()->planned, 200);
  // Two workers claim at once, repeatedly, from separate connections.
  std::vector<DrawKey> got_a, got_b;
  auto claim_all = [](Store& s, const std::string& who, std::vector<DrawKey>* out) {
    for (;;) {
      auto c = s.claim_draws(who, 7, 30);
      ASSERT_TRUE(c.ok()) << c.status().message();
      if (c->empty()) return;
      out->insert(out->end(), c->begin(), c->end());
    }
  };
  std::thread ta([&] { claim_all(**a, "A", &got_a); });
  std::thread tb([&] { claim_all(**b, "B", &got_b); });
  ta.join();
  tb.join();
  std::set<std::string> all;
  for (const auto& k : got_a) all.insert(k.to_string());
  for (const auto& k : got_b) all.insert(k.to_string());
  EXPECT_EQ(got_a.size() + got_b.size(), 200u) << "a planned draw was claimed twice or not at all";
  EXPECT_EQ(all.size(), 200u);
  EXPECT_EQ((*a)->plan_counts()->leased, 200);
}

TEST(PgSharedPlan, ExpiredLeasesReturnToThePoolAndADrawIsStoredOnce) {
  NF_SKIP_WITHOUT_PG();
  testing::PgSchema schema;
  auto s = Store::open(schema.url());
  ASSERT_TRUE(s.ok());
  Store& st = **s;
  ASSERT_TRUE(st.plan_draw_keys(plan_keys(3)).ok());
  auto dead = st.claim_draws("dead", 3, 0.3);
  ASSERT_EQ(dead->size(), 3u);
  EXPECT_TRUE(st.claim_draws("live", 3, 30)->empty()) << "leased draws must not be handed out";
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  auto live = st.claim_draws("live", 3, 30);
  ASSERT_EQ(live->size(), 3u) << "expired leases must return to the pool";
  // The live worker commits two; the dead one wakes up and commits the same key: stored once.
  ASSERT_TRUE(st.put_claimed_draw(draw_for((*live)[0]), {}).ok());
  ASSERT_TRUE(st.put_claimed_draw(draw_for((*live)[1]), {}).ok());
  EXPECT_EQ(st.put_claimed_draw(draw_for((*dead)[0]), {}).code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(*st.count_key((*live)[0]), 1);
  auto counts = st.plan_counts();
  EXPECT_EQ(counts->done, 2);
  ASSERT_TRUE(st.put_claimed_draw(draw_for((*live)[2]), {}).ok());
  EXPECT_EQ(st.plan_counts()->done, 3);
  EXPECT_TRUE(st.claim_draws("live", 3, 30)->empty());
  EXPECT_EQ(*st.draw_count(), 3);
  EXPECT_EQ(schema.query("SELECT max(claims) FROM planned_draws"), "2");
}

TEST(PgSharedPlan, RenewedLeasesDoNotExpireAndApiErrorsReopenOnReplan) {
  NF_SKIP_WITHOUT_PG();
  testing::PgSchema schema;
  auto s = Store::open(schema.url());
  ASSERT_TRUE(s.ok());
  Store& st = **s;
  const auto keys = plan_keys(2);
  ASSERT_TRUE(st.plan_draw_keys(keys).ok());
  ASSERT_EQ(st.claim_draws("w", 2, 0.4)->size(), 2u);
  for (int i = 0; i < 4; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    ASSERT_TRUE(st.renew_leases("w", 0.4).ok());
  }
  EXPECT_TRUE(st.claim_draws("other", 2, 30)->empty()) << "a renewed lease expired";
  Draw failed = draw_for(keys[0]);
  failed.status = DrawStatus::kApiError;
  failed.outcomes.clear();
  ASSERT_TRUE(st.put_claimed_draw(failed, {}).ok());
  ASSERT_TRUE(st.put_claimed_draw(draw_for(keys[1]), {}).ok());
  EXPECT_EQ(st.plan_counts()->done, 2);
  // A restarted worker re-plans: the api_error draw is open again, the ok one is not.
  ASSERT_TRUE(st.plan_draw_keys(keys).ok());
  EXPECT_EQ(st.plan_counts()->done, 1);
  auto again = st.claim_draws("w2", 5, 30);
  ASSERT_EQ(again->size(), 1u);
  EXPECT_EQ((*again)[0].item, keys[0].item);
  ASSERT_TRUE(st.put_claimed_draw(draw_for(keys[0]), {}).ok());  // replaces the api_error draw
  EXPECT_EQ(st.get_draw(keys[0])->status, DrawStatus::kOk);
  EXPECT_EQ(*st.draw_count(), 2);
}

TEST(PgStoreOpen, UnreachableServerIsUnavailableAndThePasswordIsMasked) {
  auto s = Store::open("postgresql://nf:secret@127.0.0.1:1/none?connect_timeout=2");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(s.status().message().find("secret"), std::string::npos) << s.status().message();
  EXPECT_NE(s.status().message().find("cannot connect to PostgreSQL"), std::string::npos) << s.status().message();
}

}  // namespace
}  // namespace nf
