// `noisefloor import draws` into PostgreSQL (issue 14; COPY into a staging table, checked
// and written at the end, runner/import_staged.h) against the same import into SQLite
// (Store::BulkImport, row by row): the same files give the same `export` (CSV and JSONL)
// and the same analyze results.json (up to the store location); every error case gives
// the same exit code and message (up to the store location) and writes nothing; a stored
// ok draw is refused and a stored api_error draw replaced on both.
#include <gtest/gtest.h>

#include <sqlite3.h>

#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/pg.h"
#include "common/test_data.h"
#include "store/store.h"

namespace nf {
namespace {

using nlohmann::json;
using testing::CmdResult;
using testing::run_cli;
using testing::slurp;
using testing::TempDir;
using testing::write_text;

std::string quoted(const std::string& s) { return "'" + s + "'"; }

// The id of the stored draw of `item` in the SQLite file or PostgreSQL URL `where`.
int64_t draw_id_of(const std::string& where, const std::string& item) {
  const std::string sql = "SELECT id FROM draws WHERE item = '" + item + "'";
  if (Store::is_postgresql_url(where)) {
    PGconn* c = PQconnectdb(where.c_str());
    PGresult* r = PQexec(c, sql.c_str());
    const int64_t id = PQntuples(r) > 0 ? std::stoll(PQgetvalue(r, 0, 0)) : -1;
    PQclear(r);
    PQfinish(c);
    return id;
  }
  sqlite3* db = nullptr;
  sqlite3_open(where.c_str(), &db);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr);
  const int64_t id = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
  sqlite3_finalize(st);
  sqlite3_close(db);
  return id;
}

// Every occurrence of `from` in `s` replaced by `to`.
std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  return s;
}

// A JSONL export without the write times (the test writes its fixture draws into the two
// stores a moment apart, so their created_at may differ by a second).
std::string without_times(const std::string& jsonl) {
  return std::regex_replace(jsonl, std::regex(R"("created_at":[0-9]+)"), "\"created_at\":0");
}

const char* kHeader = "subject,item,cluster,condition,config,replicate,outcome,value,label\n";

// A file with what an import must keep: rows of one draw apart (ord = first appearance),
// category labels, a numeric value with its label, an empty cluster (= the item), bytes
// that COPY's text format escapes (tab, backslash), quoted commas and newlines.
std::string rich_csv() {
  std::string csv = kHeader;
  for (int rep = 0; rep < 3; ++rep)
    for (int i = 0; i < 5; ++i) {
      const std::string item = "q" + std::to_string(i), cluster = i < 4 ? "c" + std::to_string(i / 2) : "";
      for (const char* subject : {"m1", "m2"}) {
        const std::string key = std::string(subject) + "," + item + "," + cluster + ",none,default," +
                                std::to_string(rep) + ",";
        csv += key + "correct," + std::to_string((i + rep) % 2) + ",\n";
        csv += key + "choice," + std::string(i % 2 ? "A" : "B") + ",\n";
        csv += key + "score," + std::to_string(0.1 * (i + 1) + rep) + ",B\n";
      }
    }
  // A draw whose rows are not adjacent, and odd bytes in keys and labels.
  csv += "m1,\"q\tx\",c9,none,default,0,correct,1,\n";
  csv += "m1,q0,c0,\"cond,with \\\\ backslash\",default,0,correct,0,\n";
  csv += "m1,\"q\tx\",c9,none,default,0,choice,\"a\nb\",\n";
  return csv;
}

class PgImportDraws : public ::testing::Test {
 protected:
  void SetUp() override { NF_SKIP_WITHOUT_PG(); }
  // Imports `file` into a fresh SQLite store and a fresh PostgreSQL schema.
  struct Both {
    CmdResult lite, pg;
  };
  Both import_both(const std::string& file, const std::string& flags = "") {
    Both b;
    b.lite = run_cli("import draws " + file + " --store " + lite_ + " " + flags, d_.path());
    b.pg = run_cli("import draws " + file + " --store " + quoted(schema_.url()) + " " + flags, d_.path());
    return b;
  }
  // The stderr of the PostgreSQL import with its store location written as the SQLite one.
  std::string pg_err_as_lite(const CmdResult& pg) {
    auto store = Store::open(schema_.url());
    return replace_all(pg.err, (*store)->path(), lite_);
  }
  TempDir d_;
  testing::PgSchema schema_;
  std::string lite_ = d_ / "s.sqlite";
};

TEST_F(PgImportDraws, SameFileGivesTheSameExportAndAnalysisAsSqlite) {
  write_text(d_ / "d.csv", rich_csv());
  Both b = import_both(d_ / "d.csv");
  ASSERT_EQ(b.lite.exit_code, 0) << b.lite.err;
  ASSERT_EQ(b.pg.exit_code, 0) << b.pg.err;
  EXPECT_EQ(pg_err_as_lite(b.pg), b.lite.err);  // the same summary line
  for (const char* format : {"csv", "jsonl"}) {
    CmdResult el = run_cli(std::string("export --format ") + format + " --store " + lite_, d_.path());
    ASSERT_EQ(el.exit_code, 0) << el.err;
    const std::string lite_out = el.out;
    CmdResult ep = run_cli(std::string("export --format ") + format + " --store " + quoted(schema_.url()), d_.path());
    ASSERT_EQ(ep.exit_code, 0) << ep.err;
    EXPECT_GT(lite_out.size(), 1000u);
    // the two imports ran a moment apart: their created_at may differ by a second
    EXPECT_EQ(without_times(ep.out), without_times(lite_out)) << format;
  }
  // The JSONL export imports back into PostgreSQL as into SQLite (the outcomes-array form).
  ASSERT_EQ(run_cli("export --format jsonl --store " + lite_ + " --out " + d_ / "e.jsonl", d_.path()).exit_code, 0);
  for (const char* kind : {"lite", "pg"}) {
    const std::string out = d_ / (std::string("out-") + kind);
    const std::string store = std::string(kind) == "lite" ? lite_ : quoted(schema_.url());
    CmdResult a = run_cli("analyze --store " + store + " --out " + out + " --resamples 200", d_.path());
    ASSERT_EQ(a.exit_code, 0) << a.err;
  }
  json rl = json::parse(slurp(d_ / "out-lite/results.json")), rp = json::parse(slurp(d_ / "out-pg/results.json"));
  rl.erase("store");
  rp.erase("store");
  ASSERT_TRUE(rl.contains("analyses"));
  EXPECT_EQ(rp, rl);

  testing::PgSchema again;
  CmdResult rj = run_cli("import draws " + d_ / "e.jsonl" + " --store " + quoted(again.url()), d_.path());
  ASSERT_EQ(rj.exit_code, 0) << rj.err;
  CmdResult e2 = run_cli("export --format csv --store " + quoted(again.url()), d_.path());
  CmdResult e1 = run_cli("export --format csv --store " + lite_, d_.path());
  EXPECT_EQ(e2.out, e1.out);
}

TEST_F(PgImportDraws, ErrorsAreTheSqliteErrorsInTheSameOrderAndWriteNothing) {
  const std::string ok = "m,q1,c,none,default,0,correct,1,\n";
  struct Case {
    std::string file, text, flags, expect;
  };
  const std::vector<Case> cases{
      // a repeated (draw, outcome), adjacent and apart: both lines named
      {"dup.csv", kHeader + ok + "m,q2,c,none,default,0,correct,1,\n" + ok, "",
       "dup.csv:4: outcome: duplicate row for (subject=m, item=q1, condition=none, config=default, replicate=0, "
       "outcome=correct) (first on line 2)"},
      // the earlier of two duplicates wins; a parse error after it comes second
      {"dup2.csv",
       kHeader + ok + "m,q2,c,none,default,0,x,1,\nm,q2,c,none,default,0,x,0,\n" + ok +
           "m,q3,c,none,default,zz,x,1,\n",
       "", "dup2.csv:4: outcome: duplicate row for (subject=m, item=q2, condition=none, config=default, "
           "replicate=0, outcome=x) (first on line 3)"},
      // a parse error before any duplicate wins
      {"parse.csv", kHeader + ok + "m,q3,c,none,default,zz,x,1,\n" + ok, "",
       "parse.csv:3: replicate: expected a non-negative integer, got 'zz'"},
      // an item given two clusters, before a duplicate
      {"cluster.csv", kHeader + ok + "m,q1,d,none,default,1,correct,1,\n" + ok, "",
       "cluster.csv:3: cluster: item 'q1' is given two clusters ('c' and 'd')"},
      // a duplicate before an item's second cluster
      {"cluster2.csv", kHeader + ok + ok + "m,q1,d,none,default,1,correct,1,\n", "",
       "cluster2.csv:3: outcome: duplicate row for (subject=m, item=q1, condition=none, config=default, "
       "replicate=0, outcome=correct) (first on line 2)"},
      // a duplicate inside one JSONL draw line (both rows on line 1)
      {"dup.jsonl",
       R"({"subject":"m","item":"q1","condition":"none","config":"default","replicate":0,"outcomes":[{"name":"a","value":1},{"name":"a","value":0}]})"
       "\n",
       "", "dup.jsonl:1: outcome: duplicate row for (subject=m, item=q1, condition=none, config=default, "
           "replicate=0, outcome=a) (first on line 1)"},
      // issue 19: key values that differ only by surrounding whitespace (the reader's check,
      // shared by both stores), in CSV and JSONL
      {"twin.csv", kHeader + ok + "m,q2,c,none,default,0,correct,1,\nm,q1 ,c,none,default,0,correct,1,\n", "",
       "twin.csv:4: item: values that differ only by surrounding whitespace: 'q1' (first on line 2) and 'q1 ' "
       "(first on line 4); they would be two items: remove the spaces"},
      {"twin.jsonl",
       R"({"subject":"m","item":"q1","condition":"none","config":"default","replicate":0,"outcomes":[{"name":"a","value":1}]})"
       "\n"
       R"({"subject":" m","item":"q1","condition":"none","config":"default","replicate":0,"outcomes":[{"name":"a","value":1}]})"
       "\n",
       "", "twin.jsonl:2: subject: values that differ only by surrounding whitespace: 'm' (first on line 1) and ' m' "
           "(first on line 2); they would be two subjects: remove the spaces"},
      // a duplicate before a twin wins, and a twin before a duplicate
      {"twin2.csv", kHeader + ok + ok + "m,q1,c,none ,default,1,correct,1,\n", "",
       "twin2.csv:3: outcome: duplicate row for (subject=m, item=q1, condition=none, config=default, "
       "replicate=0, outcome=correct) (first on line 2)"},
      {"twin3.csv", kHeader + ok + "m,q1,c ,none,default,1,correct,1,\n" + ok, "",
       "twin3.csv:3: cluster: values that differ only by surrounding whitespace: 'c' (first on line 2) and 'c ' "
       "(first on line 3)"},
      // a check decided at the end of the file
      {"binary.csv", kHeader + ok, "--binary nope", "binary.csv: --binary: "},
      {"typo.csv", kHeader + ok + "m,q1,c,none,default,1,correct,1O,\n", "", "typo.csv:3: value: "},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    write_text(d_ / c.file, c.text);
    std::filesystem::remove(lite_);
    Both b = import_both(d_ / c.file, c.flags);
    EXPECT_EQ(b.lite.exit_code, 2) << b.lite.err;
    EXPECT_EQ(b.pg.exit_code, 2) << b.pg.err;
    EXPECT_NE(b.lite.err.find(c.expect), std::string::npos) << b.lite.err;
    EXPECT_EQ(pg_err_as_lite(b.pg), b.lite.err);
    auto store = Store::open(schema_.url());
    ASSERT_TRUE(store.ok());
    EXPECT_EQ(*(*store)->draw_count(), 0) << "nothing written on error";
    EXPECT_TRUE((*store)->items()->empty());
  }
}

TEST_F(PgImportDraws, StoredOkDrawIsRefusedAndStoredApiErrorDrawIsReplacedAsOnSqlite) {
  // Both stores hold: (m,q1) ok, (m,q2) api_error with a judgment on it.
  for (const std::string& where : {lite_, schema_.url()}) {
    auto s = Store::open(where);
    ASSERT_TRUE(s.ok()) << s.status().message();
    Draw okd;
    okd.key = {"m", "q1", "none", "default", 0};
    okd.cluster = "c";
    okd.outcomes = {{"correct", 1.0, ""}};
    ASSERT_TRUE((*s)->put_draw(okd).ok());
    Draw failed = okd;
    failed.key.item = "q2";
    failed.status = DrawStatus::kApiError;
    failed.outcomes.clear();
    failed.error = "HTTP 500";
    ASSERT_TRUE((*s)->put_draw(failed).ok());
    JudgmentRow j;
    j.subject = "m";
    j.item = "q2";
    j.cluster = "c";
    j.judge = "judge-1";
    j.label = 1;
    j.draw_id = draw_id_of(where, "q2");
    ASSERT_TRUE((*s)->put_judgments({j}).ok());
  }
  // The api_error draw is replaced; ok draws of the file follow their first row's order.
  write_text(d_ / "replace.csv", std::string(kHeader) + "m,q3,c,none,default,0,correct,0,\n"
                                                          "m,q2,c,none,default,0,correct,1,\n"
                                                          "m,q2,c,none,default,0,choice,B,\n");
  Both b = import_both(d_ / "replace.csv");
  ASSERT_EQ(b.lite.exit_code, 0) << b.lite.err;
  ASSERT_EQ(b.pg.exit_code, 0) << b.pg.err;
  EXPECT_EQ(pg_err_as_lite(b.pg), b.lite.err);
  CmdResult el = run_cli("export --format jsonl --store " + lite_, d_.path());
  const std::string lite_out = el.out;
  CmdResult ep = run_cli("export --format jsonl --store " + quoted(schema_.url()), d_.path());
  EXPECT_EQ(without_times(ep.out), without_times(lite_out));
  EXPECT_NE(lite_out.find(R"("item":"q2")"), std::string::npos);
  EXPECT_EQ(lite_out.find("HTTP 500"), std::string::npos) << "the api_error draw is replaced";
  // A stored ok draw: refused with the same words, after the rows before it; nothing written.
  write_text(d_ / "again.csv", std::string(kHeader) + "m,q4,c,none,default,0,correct,0,\n"
                                                        "m,q1,c,none,default,0,correct,1,\n"
                                                        "m,q4,c,none,default,0,correct,1,\n");
  b = import_both(d_ / "again.csv");
  EXPECT_EQ(b.lite.exit_code, b.pg.exit_code);
  EXPECT_NE(b.lite.exit_code, 0);
  EXPECT_NE(b.lite.err.find("is already stored with status ok"), std::string::npos)
      << b.lite.err;
  EXPECT_EQ(pg_err_as_lite(b.pg), b.lite.err);
  // A duplicate before the stored draw's row wins, as row by row.
  write_text(d_ / "again2.csv", std::string(kHeader) + "m,q4,c,none,default,0,correct,0,\n"
                                                         "m,q4,c,none,default,0,correct,1,\n"
                                                         "m,q1,c,none,default,0,correct,1,\n");
  b = import_both(d_ / "again2.csv");
  EXPECT_EQ(b.pg.exit_code, 2);
  EXPECT_NE(b.lite.err.find("again2.csv:3: outcome: duplicate row"), std::string::npos) << b.lite.err;
  EXPECT_EQ(pg_err_as_lite(b.pg), b.lite.err);
  for (const std::string& where : {lite_, schema_.url()}) {
    auto s = Store::open(where);
    EXPECT_EQ(*(*s)->draw_count(), 3) << where;  // q1, q2 (replaced), q3; nothing of the failed imports
    auto js = (*s)->judgments();
    ASSERT_EQ(js->size(), 1u) << where;
    EXPECT_FALSE((*js)[0].draw_id.has_value()) << where << ": the replaced draw's judgment is unlinked";
  }
  EXPECT_EQ(without_times(run_cli("export --format jsonl --store " + quoted(schema_.url()), d_.path()).out),
            without_times(run_cli("export --format jsonl --store " + lite_, d_.path()).out));
}

}  // namespace
}  // namespace nf
