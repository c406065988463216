// `import draws` into a store that `run` wrote keeps to the recorded study's plan (issue 31
// item 4): rows for a replicate, item, subject, config or condition the plan does not
// have were accepted and counted against it ("draws 145/144" in the report's coverage,
// and the extra replicate entered the floor). They are refused, naming file, line, field
// and what the plan has; rows inside the plan (the study's own draws, e.g. from another
// machine's export) are imported. Over PostgreSQL too (the staged import path).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "common/pg.h"
#include "common/test_data.h"
#include "store/store.h"

namespace nf {
namespace {

using testing::CmdResult;
using testing::run_cli;
using testing::slurp;
using testing::TempDir;
using testing::write_text;

// 24 items x 6 replicates of one simulated subject = 144 planned draws.
std::string study_text() {
  return "name: plan4\nseed: 3\ndataset:\n  format: medqa\n  path: " + std::string(NF_SOURCE_DIR) +
         "/data/sample-mcq.jsonl\nsubjects:\n  - {name: simmy, backend: sim, model: sim-mcq-1}\n"
         "conditions: [none]\nconfigs:\n  temperature: [0.7]\nreplicates: 6\nanalyses:\n  floor: {}\n";
}

const char* kHeader = "subject,item,cluster,condition,config,replicate,status,outcome,value,label\n";

int64_t draws_in(const std::string& store) {
  auto s = Store::open_existing(store);
  if (!s.ok()) return -1;
  auto n = (*s)->draw_count();
  return n.ok() ? *n : -1;
}

// Each row out of the plan is refused with its line, field and what the plan has; the
// store keeps its draws. `store` holds the complete run of study_text().
void expect_rows_beyond_plan_refused(const TempDir& d, const std::string& store) {
  struct Case {
    std::string row, message;
  };
  const std::vector<Case> cases = {
      {"simmy,medqa-1,medqa-1,none,default,6,ok,correct,0,",
       ":2: replicate: 6 is not in the plan of study 'plan4' recorded in store " + store +
           " (its replicates are 0..5; 144 planned draws)"},
      {"other,medqa-1,medqa-1,none,default,0,ok,correct,0,",
       ":2: subject: 'other' is not in the plan of study 'plan4' recorded in store " + store +
           " (its subjects are 'simmy'; 144 planned draws)"},
      {"simmy,medqa-99,medqa-99,none,default,0,ok,correct,0,",
       ":2: item: 'medqa-99' is not in the plan of study 'plan4' recorded in store " + store +
           " (it has 24 items, and this is not one; 144 planned draws)"},
      {"simmy,medqa-1,medqa-1,shuffled,default,0,ok,correct,0,",
       ":2: condition: 'shuffled' is not in the plan of study 'plan4'"},
      {"simmy,medqa-1,medqa-1,none,temperature=0,0,ok,correct,0,",
       ":2: config: 'temperature=0' is not in the plan of study 'plan4'"},
  };
  for (const auto& c : cases) {
    write_text(d / "extra.csv", std::string(kHeader) + c.row + "\n");
    const CmdResult r = run_cli("import draws " + d / "extra.csv" + " --store " + store, d.path());
    EXPECT_EQ(r.exit_code, 2) << c.row << "\n" << r.err;
    EXPECT_NE(r.err.find("noisefloor import: " + d / "extra.csv" + c.message), std::string::npos)
        << c.row << "\n" << r.err;
    EXPECT_NE(r.err.find("import them into a store of their own (--store OTHER.sqlite)"), std::string::npos) << r.err;
  }
}

TEST(ImportBeyondPlan, RowsOutsideARunStudysPlanAreRefusedAndTheStudysOwnAreImported) {
  TempDir d;
  write_text(d / "s.yaml", study_text());
  const std::string full = d / "full.sqlite", partial = d / "partial.sqlite";
  ASSERT_EQ(run_cli("run " + d / "s.yaml" + " --quiet --store " + full, d.path()).exit_code, 0);
  ASSERT_EQ(draws_in(full), 144);
  expect_rows_beyond_plan_refused(d, full);
  EXPECT_EQ(draws_in(full), 144);
  CmdResult an = run_cli("analyze --store " + full + " --out " + d / "out", d.path());
  ASSERT_EQ(an.exit_code, 0) << an.err;
  EXPECT_NE(slurp(d / "out/report.md").find("items 24/24 · draws 144/144"), std::string::npos);

  // The study's own draws (here: the full run's export) import into a store that has the
  // plan but not the draws (a run stopped before its first draw).
  const CmdResult none = run_cli("run " + d / "s.yaml" + " --quiet --max-draws 0 --store " + partial, d.path());
  ASSERT_EQ(none.exit_code, 0) << none.err;
  ASSERT_EQ(draws_in(partial), 0);
  ASSERT_EQ(run_cli("export --store " + full + " --format csv --out " + d / "full.csv", d.path()).exit_code, 0);
  const CmdResult imp = run_cli("import draws " + d / "full.csv" + " --store " + partial, d.path());
  ASSERT_EQ(imp.exit_code, 0) << imp.err;
  EXPECT_EQ(draws_in(partial), 144);
}

TEST(ImportBeyondPlan, PostgresStoreRefusesRowsOutsideThePlanToo) {
  NF_SKIP_WITHOUT_PG();
  TempDir d;
  testing::PgSchema schema;
  write_text(d / "s.yaml", study_text());
  const std::string url = "'" + schema.url() + "'";
  const CmdResult run = run_cli("run " + d / "s.yaml" + " --quiet --store " + url, d.path());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  write_text(d / "extra.csv",
             std::string(kHeader) + "simmy,medqa-1,medqa-1,none,default,6,ok,correct,0,\n");
  const CmdResult r = run_cli("import draws " + d / "extra.csv" + " --store " + url, d.path());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(d / "extra.csv" + ":2: replicate: 6 is not in the plan of study 'plan4'"), std::string::npos)
      << r.err;
  EXPECT_EQ(schema.query("SELECT count(*) FROM draws"), "144");
}

}  // namespace
}  // namespace nf
