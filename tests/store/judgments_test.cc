// Schema v2: judgments and human_labels (issue 4), and the v1 -> v2 migration.
#include <gtest/gtest.h>

#include "store/store.h"
#include "store/store_test_util.h"

namespace nf {
namespace {

using store_test::RawDb;
using store_test::ScratchDir;

JudgmentRow vote(const std::string& subject, const std::string& item, const std::string& judge,
                 std::optional<int> label) {
  JudgmentRow r;
  r.subject = subject;
  r.subject_provider = "openai";
  r.item = item;
  r.cluster = "p-" + item;
  r.judge = judge;
  r.judge_provider = judge;
  r.label = label;
  r.status = label ? "ok" : "api_error";
  return r;
}

TEST(StoreJudgments, RoundTripAndOrder) {
  ScratchDir dir;
  auto store = Store::open(dir.path("s.sqlite"));
  ASSERT_TRUE(store.ok()) << store.status().message();
  JudgmentRow b = vote("gpt", "2", "xai", 0);
  b.settings = {{"temperature", 0}, {"model", "grok-4"}};
  b.raw_response = "{\"verdict\": 0}";
  ASSERT_TRUE((*store)->put_judgments({b, vote("gpt", "1", "openai", 1), vote("gpt", "1", "xai", std::nullopt)}).ok());
  auto rows = (*store)->judgments();
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_EQ((*rows)[0].item, "1");
  EXPECT_EQ((*rows)[0].judge, "openai");
  EXPECT_EQ((*rows)[0].label, 1);
  EXPECT_FALSE((*rows)[1].label.has_value());
  EXPECT_EQ((*rows)[1].status, "api_error");
  EXPECT_EQ((*rows)[2].settings["model"], "grok-4");
  EXPECT_EQ((*rows)[2].raw_response, "{\"verdict\": 0}");
  EXPECT_EQ((*rows)[2].cluster, "p-2");
  EXPECT_FALSE((*rows)[2].draw_id.has_value());
  EXPECT_GT((*rows)[2].created_at, 0);
  EXPECT_EQ(*(*store)->judgment_count(), 3);
}

TEST(StoreJudgments, DuplicateIsAlreadyExistsAndBatchWritesNothing) {
  ScratchDir dir;
  auto store = Store::open(dir.path("s.sqlite"));
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE((*store)->put_judgments({vote("gpt", "1", "openai", 1)}).ok());
  Status s = (*store)->put_judgments({vote("gpt", "9", "openai", 1), vote("gpt", "1", "openai", 0)});
  EXPECT_EQ(s.code(), StatusCode::kAlreadyExists) << s.message();
  EXPECT_NE(s.message().find("item 1"), std::string::npos) << s.message();
  EXPECT_EQ(*(*store)->judgment_count(), 1);  // the batch was rolled back
}

TEST(StoreJudgments, ApiErrorIsReplacedOnRejudge) {
  ScratchDir dir;
  auto store = Store::open(dir.path("s.sqlite"));
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE((*store)->put_judgments({vote("gpt", "1", "xai", std::nullopt)}).ok());
  ASSERT_TRUE((*store)->put_judgments({vote("gpt", "1", "xai", 1)}).ok());
  auto rows = (*store)->judgments();
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].status, "ok");
  EXPECT_EQ((*rows)[0].label, 1);
}

TEST(StoreJudgments, InvalidRowsAreRejected) {
  ScratchDir dir;
  auto store = Store::open(dir.path("s.sqlite"));
  ASSERT_TRUE(store.ok());
  JudgmentRow r = vote("gpt", "1", "xai", 1);
  r.status = "ok";
  r.label.reset();
  EXPECT_EQ((*store)->put_judgments({r}).code(), StatusCode::kInvalidArgument);  // ok vote needs a label
  r = vote("gpt", "1", "xai", 2);
  EXPECT_EQ((*store)->put_judgments({r}).code(), StatusCode::kInvalidArgument);
  r = vote("gpt", "1", "xai", 1);
  r.status = "refused";
  EXPECT_EQ((*store)->put_judgments({r}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(*(*store)->judgment_count(), 0);
}

TEST(StoreJudgments, JudgmentsOfDifferentDrawsCoexist) {
  ScratchDir dir;
  auto store = Store::open(dir.path("s.sqlite"));
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE((*store)->put_draws({store_test::sample_draw("gpt", "1", "none", "c", 0),
                                   store_test::sample_draw("gpt", "1", "none", "c", 1)}).ok());
  RawDb raw(dir.path("s.sqlite"));
  const auto ids = raw.column("SELECT id FROM draws ORDER BY id");
  ASSERT_EQ(ids.size(), 2u);
  JudgmentRow a = vote("gpt", "1", "xai", 1), b = vote("gpt", "1", "xai", 0);
  a.draw_id = std::stoll(ids[0]);
  b.draw_id = std::stoll(ids[1]);
  ASSERT_TRUE((*store)->put_judgments({a, b}).ok());
  EXPECT_EQ((*store)->put_judgments({a}).code(), StatusCode::kAlreadyExists);
  auto rows = (*store)->judgments();
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].draw_id, a.draw_id);
}

TEST(StoreJudgments, ReplaceDrawDeletesTheJudgmentsOfTheReplacedDrawOnly) {
  // `run --refresh` replaces a draw; its judgments judged an answer that is gone, so they
  // go with it (they used to stay with draw_id NULL and were counted twice).
  ScratchDir dir;
  auto store = Store::open(dir.path("s.sqlite"));
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE((*store)->put_draws({store_test::sample_draw("gpt", "1", "none", "c", 0),
                                   store_test::sample_draw("gpt", "1", "none", "c", 1)}).ok());
  RawDb raw(dir.path("s.sqlite"));
  const auto ids = raw.column("SELECT id FROM draws ORDER BY id");
  ASSERT_EQ(ids.size(), 2u);
  JudgmentRow a = vote("gpt", "1|r0", "xai", 1), b = vote("gpt", "1|r1", "xai", 0);
  a.draw_id = std::stoll(ids[0]);
  b.draw_id = std::stoll(ids[1]);
  JudgmentRow imported = vote("gpt", "1", "google", 1);  // no draw: an import, untouched
  ASSERT_TRUE((*store)->put_judgments({a, b, imported}).ok());
  ASSERT_TRUE((*store)->replace_draw(store_test::sample_draw("gpt", "1", "none", "c", 0)).ok());
  auto rows = (*store)->judgments();
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u);
  for (const auto& r : *rows) EXPECT_NE(r.item, "1|r0");
  EXPECT_EQ(raw.column("SELECT count(*) FROM judgments WHERE draw_id IS NULL")[0], "1");
}

TEST(StoreHumanLabels, RoundTripDuplicateAndValidation) {
  ScratchDir dir;
  auto store = Store::open(dir.path("s.sqlite"));
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE((*store)->put_human_labels({{"O", "gpt", "3", 1}, {"G", "gpt", "3", 0}}).ok());
  Status s = (*store)->put_human_labels({{"R1", "gpt", "3", 1}, {"O", "gpt", "3", 0}});
  EXPECT_EQ(s.code(), StatusCode::kAlreadyExists) << s.message();
  EXPECT_EQ((*store)->put_human_labels({{"R1", "gpt", "3", 5}}).code(), StatusCode::kInvalidArgument);
  auto rows = (*store)->human_labels();
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u);  // the failed batches wrote nothing
  EXPECT_EQ((*rows)[0].rater, "G");
  EXPECT_EQ((*rows)[0].label, 0);
  EXPECT_EQ((*rows)[1].rater, "O");
}

// The v1 schema exactly as the first published build wrote it (copied from store.cc at
// schema v1), so the migration is tested against a real old file, not the current code.
constexpr const char* kV1Ddl = R"sql(
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE study(id INTEGER PRIMARY KEY CHECK (id = 1), name TEXT NOT NULL, hash TEXT NOT NULL,
  seed INTEGER NOT NULL, spec TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
CREATE TABLE items(item TEXT PRIMARY KEY, cluster TEXT NOT NULL, data TEXT NOT NULL);
CREATE TABLE subjects(subject TEXT PRIMARY KEY, spec TEXT NOT NULL);
CREATE TABLE configs(config TEXT PRIMARY KEY, spec TEXT NOT NULL);
CREATE TABLE draws(
  id INTEGER PRIMARY KEY, subject TEXT NOT NULL, item TEXT NOT NULL, condition TEXT NOT NULL,
  config TEXT NOT NULL, replicate INTEGER NOT NULL CHECK (replicate >= 0), cluster TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('ok', 'parse_error', 'api_error', 'refused')),
  request TEXT NOT NULL, response TEXT NOT NULL, content TEXT NOT NULL, error TEXT NOT NULL,
  latency_ms REAL, prompt_tokens INTEGER, completion_tokens INTEGER, finish_reason TEXT NOT NULL,
  served_model TEXT NOT NULL, system_fingerprint TEXT NOT NULL, cached INTEGER NOT NULL CHECK (cached IN (0, 1)),
  attempts INTEGER NOT NULL, extra TEXT NOT NULL, created_at INTEGER NOT NULL,
  UNIQUE (subject, item, condition, config, replicate));
CREATE INDEX draws_by_cell ON draws(status, subject, config, condition, item, replicate);
CREATE TABLE outcomes(draw_id INTEGER NOT NULL REFERENCES draws(id) ON DELETE CASCADE, name TEXT NOT NULL,
  value REAL NOT NULL, label TEXT NOT NULL, PRIMARY KEY (draw_id, name));
CREATE TABLE response_cache(key TEXT PRIMARY KEY, response TEXT NOT NULL, created_at INTEGER NOT NULL);
INSERT INTO meta VALUES('schema_version', '1'), ('created_by', '0.1.0'), ('tool_version', '0.1.0');
INSERT INTO draws VALUES(1, 'gpt', 'q1', 'none', 'c0', 0, 'cl1', 'ok', '{}', 'raw', 'B', '', 12.5, 10, 1,
  'stop', 'gpt-x', 'fp', 0, 1, '{}', 1700000000);
INSERT INTO draws VALUES(2, 'gpt', 'q1', 'none', 'c0', 1, 'cl1', 'api_error', '{}', '', '', 'HTTP 500', NULL,
  NULL, NULL, '', '', '', 0, 3, '{}', 1700000001);
INSERT INTO outcomes VALUES(1, 'correct', 1.0, 'B');
)sql";

TEST(StoreMigration, V1StoreMigratesToV2WithDrawsIntact) {
  ScratchDir dir;
  const std::string path = dir.path("v1.sqlite");
  RawDb(path).exec(kV1Ddl);
  {
    auto store = Store::open(path);
    ASSERT_TRUE(store.ok()) << store.status().message();
    EXPECT_EQ(*(*store)->draw_count(), 2);
    auto d = (*store)->get_draw(DrawKey{"gpt", "q1", "none", "c0", 0});
    ASSERT_TRUE(d.ok()) << d.status().message();
    EXPECT_EQ(d->content, "B");
    EXPECT_DOUBLE_EQ(d->latency_ms, 12.5);
    ASSERT_EQ(d->outcomes.size(), 1u);
    EXPECT_EQ(d->outcomes[0].label, "B");
    auto keys = (*store)->finished_keys();
    ASSERT_TRUE(keys.ok());
    EXPECT_EQ(keys->size(), 1u);  // the api_error draw is still retryable
    // The new tables work, and a judgment can reference the migrated draw.
    JudgmentRow j = vote("gpt", "q1", "xai", 1);
    j.draw_id = 1;
    ASSERT_TRUE((*store)->put_judgments({j}).ok());
    ASSERT_TRUE((*store)->put_human_labels({{"O", "gpt", "q1", 1}}).ok());
  }
  RawDb raw(path);
  // ... and on to the current version (v2 -> v3 rebuilds outcomes; tests/store/schema_v3_test.cc).
  EXPECT_EQ(raw.one("SELECT value FROM meta WHERE key = 'schema_version'"), std::to_string(kStoreSchemaVersion));
  EXPECT_EQ(raw.one("SELECT value FROM meta WHERE key = 'created_by'"), "0.1.0");
  EXPECT_EQ(raw.one("SELECT count(*) FROM judgments WHERE draw_id = 1"), "1");
  // Reopening a migrated store is a no-op.
  auto again = Store::open(path);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*(*again)->judgment_count(), 1);
}

TEST(StoreMigration, NewStoreHasTheSameSchemaAsAMigratedOne) {
  ScratchDir dir;
  RawDb(dir.path("old.sqlite")).exec(kV1Ddl);
  ASSERT_TRUE(Store::open(dir.path("old.sqlite")).ok());
  ASSERT_TRUE(Store::open(dir.path("new.sqlite")).ok());
  // The whole schema (a new store is created in one transaction, the old one migrated
  // step by step), not only the v2 tables.
  const std::string q = "SELECT group_concat(type || ' ' || name || ' ' || tbl_name || ' ' || ifnull(sql, ''), ';\n') "
                        "FROM (SELECT * FROM sqlite_master ORDER BY name)";
  // The v1 DDL above is this test's own layout of the v1 schema: compare without whitespace.
  const auto squeeze = [](std::string s) {
    std::erase_if(s, [](unsigned char c) { return std::isspace(c) != 0; });
    return s;
  };
  const std::string created = RawDb(dir.path("new.sqlite")).one(q);
  EXPECT_EQ(squeeze(RawDb(dir.path("old.sqlite")).one(q)), squeeze(created));
  for (const char* name : {"judgments", "human_labels", "judgments_key", "outcome_chunks", "draws_by_cell"})
    EXPECT_NE(created.find(name), std::string::npos) << name;
  EXPECT_NE(created.find("WITHOUT ROWID"), std::string::npos);
  EXPECT_EQ(RawDb(dir.path("new.sqlite")).one("SELECT value FROM meta WHERE key = 'schema_version'"),
            std::to_string(kStoreSchemaVersion));
  EXPECT_EQ(RawDb(dir.path("new.sqlite")).one("SELECT count(*) FROM sqlite_master WHERE name = 'outcomes_v3'"), "0");
}

}  // namespace
}  // namespace nf
