// Store schema v3 (issue 14): outcomes WITHOUT ROWID keyed (draw_id, name), the written
// order kept in `ord`. A v2 file made with the published v1 + v2 DDL (not with the current
// code) migrates to v3 and then exports byte for byte what a store written natively at v3
// with the same draws exports, and gives the same analysis input.
#include <cmath>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "store/store.h"
#include "store_test_util.h"

namespace nf {
namespace {

using store_test::RawDb;
using store_test::ScratchDir;

// Schema v1 and the v2 delta exactly as published (store.cc at schema v2), then v2 rows.
// Outcome rowids interleave draws and are not in name order, as `import draws` writes them
// when a draw's rows are not adjacent: draw 1 got zeta before alpha, draw 2 b before a.
constexpr const char* kV2Fixture = R"sql(
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
CREATE TABLE judgments(
  id INTEGER PRIMARY KEY, subject TEXT NOT NULL, subject_provider TEXT NOT NULL, item TEXT NOT NULL,
  cluster TEXT NOT NULL, judge TEXT NOT NULL, judge_provider TEXT NOT NULL, label INTEGER CHECK (label IN (0, 1)),
  status TEXT NOT NULL CHECK (status IN ('ok', 'parse_error', 'api_error')),
  draw_id INTEGER REFERENCES draws(id) ON DELETE SET NULL, raw_response TEXT NOT NULL, settings TEXT NOT NULL,
  created_at INTEGER NOT NULL, CHECK (status != 'ok' OR label IS NOT NULL));
CREATE UNIQUE INDEX judgments_key ON judgments(subject, item, judge, ifnull(draw_id, 0));
CREATE TABLE human_labels(rater TEXT NOT NULL, subject TEXT NOT NULL, item TEXT NOT NULL,
  label INTEGER NOT NULL CHECK (label IN (0, 1)), PRIMARY KEY (rater, subject, item)) WITHOUT ROWID;
INSERT INTO meta VALUES('schema_version', '2'), ('created_by', '0.1.0'), ('tool_version', '0.1.0');
INSERT INTO draws VALUES(1, 'm', 'i1', 'none', 'default', 0, 'c1', 'ok', 'null', '', '', '', 0.0, NULL, NULL,
  '', '', '', 0, 1, '{"imported":true}', 1700000001);
INSERT INTO draws VALUES(2, 'm', 'i2', 'none', 'default', 0, 'c1', 'ok', 'null', '', '', '', 0.0, NULL, NULL,
  '', '', '', 0, 1, '{"imported":true}', 1700000002);
INSERT INTO draws VALUES(3, 'gpt', 'q1', 'shuffle', 'temperature=0.7', 0, 'q1', 'ok', '{"model":"gpt-x"}',
  '{"choices":[]}', 'B', '', 12.5, 10, 2, 'stop', 'gpt-x', 'fp', 0, 1, '{"perm":[1,0]}', 1700000003);
INSERT INTO draws VALUES(4, 'gpt', 'q1', 'shuffle', 'temperature=0.7', 1, 'q1', 'api_error', '{"model":"gpt-x"}',
  '', '', 'HTTP 500', NULL, NULL, NULL, '', '', '', 0, 3, '{}', 1700000004);
INSERT INTO draws VALUES(5, 'gpt', 'q2', 'shuffle', 'temperature=0.7', 0, 'q2', 'parse_error', '{"model":"gpt-x"}',
  '{"choices":[]}', 'maybe', 'no option letter', 8.25, 10, 5, 'stop', 'gpt-x', '', 1, 1, '{}', 1700000005);
INSERT INTO outcomes VALUES(1, 'zeta', 1.0, '');
INSERT INTO outcomes VALUES(2, 'b', 0.0, '');
INSERT INTO outcomes VALUES(1, 'alpha', 0.5, 'half');
INSERT INTO outcomes VALUES(3, 'correct', 0.0, '0');
INSERT INTO outcomes VALUES(3, 'choice', 2.0, 'C');
INSERT INTO outcomes VALUES(2, 'a', 1.0, 'x');
INSERT INTO judgments VALUES(1, 'gpt', 'openai', 'q1', 'q1', 'judge', 'xai', 1, 'ok', 3, 'YES', '{}', 1700000010);
)sql";

// The same draws written through the current Store API: the two imported draws by a bulk
// import with their rows in the fixture's order, the others by put_draws. created_at is
// then set to the fixture's values (the API stamps the clock).
void write_natively(Store& s, const std::string& path) {
  {
    auto bulk = s.begin_bulk_import();
    ASSERT_TRUE(bulk.ok()) << bulk.status().message();
    const DrawKey i1{"m", "i1", "none", "default", 0}, i2{"m", "i2", "none", "default", 0};
    bool dup = false;
    ASSERT_TRUE((*bulk)->add_outcome(i1, "c1", {"zeta", 1.0, ""}, &dup).ok());
    ASSERT_TRUE((*bulk)->add_outcome(i2, "c1", {"b", 0.0, ""}, &dup).ok());
    ASSERT_TRUE((*bulk)->add_outcome(i1, "c1", {"alpha", 0.5, "half"}, &dup).ok());
    ASSERT_TRUE((*bulk)->add_outcome(i2, "c1", {"a", 1.0, "x"}, &dup).ok());
    ASSERT_FALSE(dup);
    ASSERT_TRUE((*bulk)->commit().ok());
  }
  Draw d3;
  d3.key = {"gpt", "q1", "shuffle", "temperature=0.7", 0};
  d3.cluster = "q1";
  d3.request = {{"model", "gpt-x"}};
  d3.raw_response = R"({"choices":[]})";
  d3.content = "B";
  d3.outcomes = {{"correct", 0.0, "0"}, {"choice", 2.0, "C"}};
  d3.latency_ms = 12.5;
  d3.prompt_tokens = 10;
  d3.completion_tokens = 2;
  d3.finish_reason = "stop";
  d3.served_model = "gpt-x";
  d3.system_fingerprint = "fp";
  d3.extra = {{"perm", {1, 0}}};
  Draw d4;
  d4.key = {"gpt", "q1", "shuffle", "temperature=0.7", 1};
  d4.status = DrawStatus::kApiError;
  d4.cluster = "q1";
  d4.request = {{"model", "gpt-x"}};
  d4.error = "HTTP 500";
  d4.latency_ms = std::nan("");
  d4.attempts = 3;
  Draw d5;
  d5.key = {"gpt", "q2", "shuffle", "temperature=0.7", 0};
  d5.status = DrawStatus::kParseError;
  d5.cluster = "q2";
  d5.request = {{"model", "gpt-x"}};
  d5.raw_response = R"({"choices":[]})";
  d5.content = "maybe";
  d5.error = "no option letter";
  d5.latency_ms = 8.25;
  d5.prompt_tokens = 10;
  d5.completion_tokens = 5;
  d5.finish_reason = "stop";
  d5.served_model = "gpt-x";
  d5.cached = true;
  ASSERT_TRUE(s.put_draws({d3, d4, d5}).ok());
  RawDb raw(path);
  raw.exec("UPDATE draws SET created_at = CASE item || replicate || status WHEN 'i10ok' THEN 1700000001 "
           "WHEN 'i20ok' THEN 1700000002 WHEN 'q10ok' THEN 1700000003 WHEN 'q11api_error' THEN 1700000004 "
           "ELSE 1700000005 END");
}

struct Exports {
  std::string jsonl, csv;
};

Exports exports_of(Store& s) {
  std::ostringstream j, c;
  EXPECT_TRUE(s.export_jsonl(j).ok());
  EXPECT_TRUE(s.export_csv(c).ok());
  return {j.str(), c.str()};
}

// Every table and index by name, and the outcomes table's full definition (the fixture's
// older tables are the published ones, written on fewer lines, so their text differs).
std::string schema_of(const std::string& path) {
  RawDb raw(path);
  return raw.one("SELECT group_concat(type || ' ' || name, ', ') FROM (SELECT type, name FROM sqlite_master "
                 "ORDER BY name)") + "\n" + raw.one("SELECT sql FROM sqlite_master WHERE name = 'outcomes'");
}

TEST(StoreSchemaV3, V2StoreMigratesWithIdenticalExportsAndAnalysisInput) {
  ScratchDir dir;
  const std::string v2 = dir.path("v2.sqlite"), native = dir.path("native.sqlite");
  RawDb(v2).exec(kV2Fixture);
  auto migrated = Store::open(v2);
  ASSERT_TRUE(migrated.ok()) << migrated.status().message();
  auto fresh = Store::open(native);
  ASSERT_TRUE(fresh.ok()) << fresh.status().message();
  write_natively(**fresh, native);

  const Exports a = exports_of(**migrated), b = exports_of(**fresh);
  EXPECT_EQ(a.jsonl, b.jsonl);
  EXPECT_EQ(a.csv, b.csv);
  // The written order survives (not the name order of the new primary key).
  EXPECT_LT(a.csv.find("zeta"), a.csv.find("alpha"));
  EXPECT_LT(a.csv.find(",b,"), a.csv.find(",a,"));
  EXPECT_LT(a.jsonl.find("\"correct\""), a.jsonl.find("\"choice\""));
  EXPECT_NE(a.jsonl.find("\"HTTP 500\""), std::string::npos);  // draws without outcomes are kept
  auto d1 = (*migrated)->get_draw(DrawKey{"m", "i1", "none", "default", 0});
  ASSERT_TRUE(d1.ok()) << d1.status().message();
  ASSERT_EQ(d1->outcomes.size(), 2u);
  EXPECT_EQ(d1->outcomes[0].name, "zeta");
  EXPECT_EQ(d1->outcomes[1].label, "half");

  // Same analysis input (ok draws only, sorted).
  auto ra = (*migrated)->outcome_rows(), rb = (*fresh)->outcome_rows();
  ASSERT_TRUE(ra.ok() && rb.ok());
  ASSERT_EQ(ra->size(), 6u);
  ASSERT_EQ(rb->size(), ra->size());
  for (size_t i = 0; i < ra->size(); ++i) {
    const OutcomeRow &x = (*ra)[i], &y = (*rb)[i];
    EXPECT_EQ(std::tie(x.subject, x.config, x.condition, x.item, x.cluster, x.replicate, x.outcome, x.label),
              std::tie(y.subject, y.config, y.condition, y.item, y.cluster, y.replicate, y.outcome, y.label));
    EXPECT_EQ(x.value, y.value);
  }
  migrated->reset();
  fresh->reset();

  // One schema, whichever way the file got to v3; the outcomes table has no rowid.
  EXPECT_EQ(schema_of(v2), schema_of(native));
  RawDb raw(v2);
  // Through v3 to the current version (v4 adds outcome_chunks, which a v2 store leaves empty).
  EXPECT_EQ(raw.one("SELECT value FROM meta WHERE key = 'schema_version'"), std::to_string(kStoreSchemaVersion));
  EXPECT_EQ(raw.one("SELECT count(*) FROM outcome_chunks"), "0");
  EXPECT_EQ(raw.one("SELECT value FROM meta WHERE key = 'created_by'"), "0.1.0");
  EXPECT_NE(raw.one("SELECT sql FROM sqlite_master WHERE name = 'outcomes'").find("WITHOUT ROWID"), std::string::npos);
  EXPECT_EQ(raw.one("SELECT count(*) FROM sqlite_master WHERE name = 'outcomes_v3'"), "0");
  EXPECT_EQ(raw.one("SELECT group_concat(name || ord) FROM (SELECT name, ord FROM outcomes ORDER BY draw_id, ord)"),
            "zeta0,alpha1,b0,a1,correct0,choice1");
  EXPECT_EQ(raw.one("SELECT draw_id FROM judgments"), "3");
  EXPECT_EQ(raw.column("PRAGMA foreign_key_check").size(), 0u);
}

TEST(StoreSchemaV3, DeletingADrawStillDeletesItsOutcomesAfterMigration) {
  ScratchDir dir;
  const std::string v2 = dir.path("v2.sqlite");
  RawDb(v2).exec(kV2Fixture);
  {
    auto s = Store::open(v2);
    ASSERT_TRUE(s.ok()) << s.status().message();
    Draw d;
    d.key = {"gpt", "q1", "shuffle", "temperature=0.7", 0};
    d.cluster = "q1";
    d.outcomes = {{"correct", 1.0, "1"}};
    ASSERT_TRUE((*s)->replace_draw(d).ok());  // deletes the old draw 3 (ON DELETE CASCADE) and its judgment
    auto back = (*s)->get_draw(d.key);
    ASSERT_TRUE(back.ok());
    ASSERT_EQ(back->outcomes.size(), 1u);
    EXPECT_EQ(back->outcomes[0].value, 1.0);
    // An api_error draw replaced by put_draw: its outcomes go with it too.
    RawDb(v2).exec("INSERT INTO outcomes(draw_id, name, ord, value, label) VALUES(4, 'stale', 0, 1.0, '')");
    Draw ok4;
    ok4.key = {"gpt", "q1", "shuffle", "temperature=0.7", 1};
    ok4.cluster = "q1";
    ok4.outcomes = {{"correct", 0.0, "0"}};
    ASSERT_TRUE((*s)->put_draw(ok4).ok());
  }
  RawDb raw(v2);
  EXPECT_EQ(raw.one("SELECT count(*) FROM outcomes WHERE draw_id = 3 OR draw_id = 4"), "0");
  EXPECT_EQ(raw.one("SELECT count(*) FROM outcomes WHERE name = 'stale'"), "0");
  EXPECT_EQ(raw.one("SELECT count(*) FROM outcomes"), "6");  // 4 imported + 1 + 1
  EXPECT_EQ(raw.column("PRAGMA foreign_key_check").size(), 0u);
}

}  // namespace
}  // namespace nf
