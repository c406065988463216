// Store schema v3 through the real binary: a store in the v2 layout (the rowid outcomes
// table as published, outcomes in written order) is migrated on first open, and then
// `export` and `analyze` give what the same store gave natively: exports byte for byte,
// results.json equal but for the `store` path it names.
#include <sqlite3.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "common/test_data.h"
#include "data/draws_import.h"
#include "runner/import.h"
#include "store/store.h"

namespace nf {
namespace {

using testing::CmdResult;
using testing::run_cli;
using testing::slurp;
using testing::TempDir;

// v3 -> the published v2 layout of the same rows: the outcomes table rebuilt with a rowid
// in written order (ord), schema_version 2.
constexpr const char* kToV2 = R"sql(
CREATE TABLE outcomes_v2(draw_id INTEGER NOT NULL REFERENCES draws(id) ON DELETE CASCADE, name TEXT NOT NULL,
  value REAL NOT NULL, label TEXT NOT NULL, PRIMARY KEY (draw_id, name));
INSERT INTO outcomes_v2(draw_id, name, value, label) SELECT draw_id, name, value, label FROM outcomes
  ORDER BY draw_id, ord;
DROP TABLE outcomes;
ALTER TABLE outcomes_v2 RENAME TO outcomes;
DROP TABLE outcome_chunks;
UPDATE meta SET value = '2' WHERE key = 'schema_version';
)sql";

std::string one(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  std::string out;
  if (sqlite3_open(path.c_str(), &db) == SQLITE_OK) {
    sqlite3_exec(
        db, sql.c_str(),
        [](void* o, int n, char** v, char**) {
          if (n > 0 && v[0] != nullptr) *static_cast<std::string*>(o) = v[0];
          return 0;
        },
        &out, nullptr);
  }
  sqlite3_close(db);
  return out;
}

nlohmann::json results_without_store(const std::string& dir) {
  nlohmann::json j = nlohmann::json::parse(slurp(dir + "/results.json"));
  EXPECT_TRUE(j.contains("store"));
  j.erase("store");
  return j;
}

TEST(StoreV3MigrationCli, MigratedStoreExportsAndAnalyzesAsBefore) {
  TempDir d;
  // Outcome names in non-alphabetical order within each draw, so the written order (ord)
  // and the primary-key order differ.
  std::string csv = "subject,item,cluster,condition,config,replicate,outcome,value,label\n";
  for (int i = 0; i < 40; ++i)
    for (int r = 0; r < 6; ++r) {
      const std::string key = "m,q" + std::to_string(i) + ",c" + std::to_string(i / 4) + ",none,default," +
                              std::to_string(r);
      csv += key + ",zz_correct," + std::to_string((i * 7 + r * (i % 3)) % 2) + ",\n";
      csv += key + ",aa_refused," + std::to_string((i + r) % 5 == 0 ? 1 : 0) + ",\n";
      csv += key + ",mm_choice," + std::to_string((i + r * i) % 3) + ",opt\n";
    }
  testing::write_text(d / "d.csv", csv);
  const std::string native = d / "native.sqlite", old = d / "old.sqlite";
  {
    // As outcome rows (the in-memory import, put_draws): `import draws` writes chunks
    // since schema v4, which a v2 store cannot hold.
    auto rows = read_long_draws(d / "d.csv");
    ASSERT_TRUE(rows.ok()) << rows.status().to_string();
    auto s = Store::open(native);
    ASSERT_TRUE(s.ok());
    ASSERT_TRUE(import_long_draws(*rows, **s, "d").ok());
  }
  std::filesystem::copy_file(native, old);
  CmdResult r;
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(old.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, kToV2, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_close(db);
  ASSERT_EQ(one(old, "SELECT value FROM meta WHERE key = 'schema_version'"), "2");
  ASSERT_EQ(one(old, "SELECT name FROM outcomes ORDER BY rowid LIMIT 1"), "zz_correct");

  for (const char* fmt : {"csv", "jsonl"}) {
    const std::string f(fmt);
    r = run_cli("export --store " + old + " --format " + f + " --out " + d / ("old." + f), d.path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = run_cli("export --store " + native + " --format " + f + " --out " + d / ("native." + f), d.path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string a = slurp(d / ("old." + f)), b = slurp(d / ("native." + f));
    EXPECT_EQ(a, b) << f;
    EXPECT_LT(a.find("zz_correct"), a.find("aa_refused")) << f;  // written order, not name order
  }
  EXPECT_EQ(one(old, "SELECT value FROM meta WHERE key = 'schema_version'"), "4");  // migrated by the export (v2 -> v3 -> v4)

  const std::string analyze = " --analysis floor --analysis majority_floor --resamples 200";
  r = run_cli("analyze --store " + old + " --out " + d / "out_old" + analyze, d.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_cli("analyze --store " + native + " --out " + d / "out_native" + analyze, d.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json a = results_without_store(d / "out_old"), b = results_without_store(d / "out_native");
  EXPECT_EQ(a, b);
  ASSERT_TRUE(a.contains("analyses") && a.at("analyses").contains("floor")) << a.dump().substr(0, 400);
  EXPECT_FALSE(a.at("analyses").at("floor").empty());
}

}  // namespace
}  // namespace nf
