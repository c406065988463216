// The whole product on a PostgreSQL store (docs/store.md "PostgreSQL"), each step checked
// against the same step on SQLite: `audit`, `import missing-info` + `analyze` of the
// released seed 004 votes (read in place via NOISEFLOOR_DATA), and `judge` with serve-sim
// judges. results.json must be equal up to the store location (run metadata).
#include <gtest/gtest.h>

#include <signal.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/pg.h"
#include "common/process.h"
#include "common/test_data.h"
#include "store/store.h"

namespace nf {
namespace {

using nlohmann::json;
using testing::CmdResult;
using testing::data_env;
using testing::data_file;
using testing::run_cli;
using testing::slurp;
using testing::TempDir;
using testing::write_text;

/// results.json without run metadata: the store location differs by construction.
json results_without_store(const std::string& dir) {
  json j = json::parse(slurp(dir + "/results.json"));
  j.erase("store");
  return j;
}

std::string quoted(const std::string& url) { return "'" + url + "'"; }

TEST(PgStoreCli, AuditOnPostgresqlEqualsTheSqliteAudit) {
  NF_SKIP_WITHOUT_PG();
  TempDir d;
  testing::PgSchema schema;
  const std::string study = std::string(NF_SOURCE_DIR) + "/examples/sample-floor.yaml";
  CmdResult pg = run_cli("audit " + study + " --quiet --out " + d / "pg" + " --store " + quoted(schema.url()), d.path());
  ASSERT_EQ(pg.exit_code, 0) << pg.err;
  CmdResult lite = run_cli("audit " + study + " --quiet --out " + d / "sqlite" + " --store " + d / "s.sqlite", d.path());
  ASSERT_EQ(lite.exit_code, 0) << lite.err;
  auto store = Store::open(schema.url());
  ASSERT_TRUE(store.ok()) << store.status().message();
  EXPECT_EQ(*(*store)->draw_count(), 24 * 4 * 2 * 6);  // items x conditions x configs x replicates
  const json rp = results_without_store(d / "pg"), rs = results_without_store(d / "sqlite");
  ASSERT_GT(rs["analyses"]["floor"]["rows"].size(), 0u);
  ASSERT_TRUE(rs["analyses"].contains("majority_floor"));
  EXPECT_EQ(rp["draws"], rs["draws"]);
  EXPECT_EQ(rp["analyses"], rs["analyses"]);
  EXPECT_EQ(rp, rs);
  EXPECT_EQ(slurp(d / "pg/report.md").size() > 0, true);
  // Resumable on PostgreSQL as on SQLite: a second audit runs no draw and gives the same results.
  CmdResult again = run_cli("audit " + study + " --out " + d / "pg2" + " --store " + quoted(schema.url()), d.path());
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(*(*store)->draw_count(), 24 * 4 * 2 * 6);
  EXPECT_EQ(results_without_store(d / "pg2"), rp);
}

TEST(PgStoreCli, ImportedSeed004VotesAndLabelsAnalyzeAsOnSqlite) {
  NF_SKIP_WITHOUT_PG();
  TempDir d;
  testing::PgSchema schema;
  const std::string dir = data_file("missing-info-judges");
  CmdResult pg = run_cli("import missing-info " + dir + " --store " + quoted(schema.url()), d.path());
  ASSERT_EQ(pg.exit_code, 0) << pg.err;
  EXPECT_NE(pg.err.find("800 votes, 150 human labels (raters 3), 50 items"), std::string::npos) << pg.err;
  // Re-importing skips what is stored, as on SQLite (the unique keys hold).
  CmdResult again = run_cli("import missing-info " + dir + " --store " + quoted(schema.url()), d.path());
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.err.find("already in the store, left unchanged"), std::string::npos) << again.err;
  CmdResult lite = run_cli("import missing-info " + dir + " --store " + d / "s.sqlite", d.path());
  ASSERT_EQ(lite.exit_code, 0) << lite.err;
  {
    auto s = Store::open(schema.url());
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(*(*s)->judgment_count(), 800);
    EXPECT_EQ((*s)->human_labels()->size(), 150u);
  }

  const std::string opts = " --resamples 100 --bootstrap-seed 4";
  CmdResult ap = run_cli("analyze --store " + quoted(schema.url()) + " --out " + d / "pg" + opts, d.path());
  ASSERT_EQ(ap.exit_code, 0) << ap.err;
  CmdResult as = run_cli("analyze --store " + d / "s.sqlite" + " --out " + d / "sqlite" + opts, d.path());
  ASSERT_EQ(as.exit_code, 0) << as.err;
  const json rp = results_without_store(d / "pg"), rs = results_without_store(d / "sqlite");
  ASSERT_TRUE(rs["analyses"].contains("judge_panel"));
  ASSERT_TRUE(rs["analyses"].contains("human_validity"));
  // The paper's Fleiss kappa (seed 004 Table 4), so the comparison is not of two empty sections.
  EXPECT_NEAR(rp["analyses"]["judge_panel"]["fleiss"]["kappa"].get<double>(), 0.649, 5e-4);
  EXPECT_EQ(rp["analyses"]["judge_panel"], rs["analyses"]["judge_panel"]);
  EXPECT_EQ(rp["analyses"]["human_validity"], rs["analyses"]["human_validity"]);
  EXPECT_EQ(rp, rs);
}

// Stops a spawned child when the test ends, also when an ASSERT returns early.
struct ChildGuard {
  testing::Child& child;
  ~ChildGuard() {
    if (child.pid > 0) testing::kill_and_wait(child, SIGTERM);
  }
};

std::string judges_yaml(const std::string& store) {
  std::string y = "name: probe-judges-pg\ntask: chat\nstore: " + store + "\njudge:\n  panel:\n";
  for (const char* j : {"judge-o:openai", "judge-a:anthropic"}) {
    const std::string s = j;
    const std::string name = s.substr(0, s.find(':')), provider = s.substr(s.find(':') + 1);
    y += "    - name: " + name + "\n      provider: " + provider + "\n      backend: openai\n      model: sim-" + name +
         "\n      base_url: ${SIM_URL}\n      max_retries: 0\n      concurrency: 4\n";
  }
  return y;
}

TEST(PgStoreCli, JudgeOnPostgresqlIsResumableAndEqualsSqlite) {
  NF_SKIP_WITHOUT_PG();
  TempDir d;
  testing::PgSchema schema;
  testing::Child sim;
  ChildGuard guard{sim};
  sim = testing::spawn({"serve-sim", "--port", "0"}, d / "sim.err");
  const std::string line = testing::read_line(sim);
  ASSERT_NE(line.find("http://"), std::string::npos) << slurp(d / "sim.err");
  const std::string env = "SIM_URL=" + line.substr(line.find("http://"));
  const std::string sheet = data_file("missing-info-judges/annotation_sheet.md");

  const std::vector<std::pair<std::string, std::string>> stores = {{"pg", schema.url()}, {"sqlite", d / "s.sqlite"}};
  for (const auto& [name, store] : stores) {
    CmdResult imp = run_cli("import probe-sheet " + sheet + " --store " + quoted(store), d.path(), data_env());
    ASSERT_EQ(imp.exit_code, 0) << name << ": " << imp.err;
    write_text(d / (name + ".yaml"), judges_yaml(quoted(store)));
    CmdResult first = run_cli("judge " + d / (name + ".yaml") + " --no-progress", d.path(), env);
    ASSERT_EQ(first.exit_code, 0) << name << ": " << first.err;
    EXPECT_NE(first.err.find("100 judgments planned, 0 already in the store, 100 run now"), std::string::npos)
        << name << ": " << first.err;
    CmdResult second = run_cli("judge " + d / (name + ".yaml") + " --no-progress", d.path(), env);
    EXPECT_EQ(second.exit_code, 0) << second.err;
    EXPECT_NE(second.err.find("100 already in the store, 0 run now"), std::string::npos) << name << ": " << second.err;
    CmdResult an = run_cli("analyze --store " + quoted(store) + " --out " + d / name + " --resamples 200", d.path());
    ASSERT_EQ(an.exit_code, 0) << name << ": " << an.err;
  }
  auto s = Store::open(schema.url());
  ASSERT_TRUE(s.ok());
  auto rows = (*s)->judgments();
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  ASSERT_EQ(rows->size(), 100u);
  for (const auto& r : *rows) {
    EXPECT_TRUE(r.draw_id.has_value());  // votes on the stored draws
    EXPECT_EQ(r.settings["backend"], "openai");
  }
  const json rp = results_without_store(d / "pg"), rs = results_without_store(d / "sqlite");
  ASSERT_TRUE(rs["analyses"].contains("judge_panel"));
  EXPECT_FALSE(rs["analyses"]["judge_panel"].contains("skipped"));
  EXPECT_EQ(rp["analyses"]["judge_panel"], rs["analyses"]["judge_panel"]);
  EXPECT_EQ(rp, rs);
}

}  // namespace
}  // namespace nf
