// Draws that are not ok survive `export` -> `import draws` (tester s11 finding 12: the
// parse_error, refused and api_error draws were dropped without a word, and the report's
// parse error rate became 0). A store holding draws of every status is exported as JSONL
// and as CSV, each file imported into a new store (SQLite, and PostgreSQL under
// scripts/with-postgres), and each analyzed: the Draws table (results.json draws.rows:
// total, ok, parse_error, api_error, refused, parse error rate) and the floors equal the
// original's; the import names its counts per status. A draw whose rows disagree on
// its status, or a second row of a draw that is not ok, is refused with file, line and
// field by the streaming import too, where the store finds rows of one draw apart.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

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

// The status of draw (item i, replicate r) under config c: a fixed pattern with every
// status in every config (the test's own construction, so the counts below are known).
DrawStatus status_of(int c, int i, int r) {
  switch ((i * 5 + r + 3 * c) % 9) {
    case 0: return DrawStatus::kParseError;
    case 4: return DrawStatus::kApiError;
    case 7: return DrawStatus::kRefused;
    case 2: return DrawStatus::kParseError;
    default: return DrawStatus::kOk;
  }
}

const std::array<std::string, 2> kConfigs{"temperature=0", "temperature=0.7"};
constexpr int kItems = 8, kReplicates = 6;

// A store as a run of an MCQ study leaves it: ok draws with outcomes `correct` (0/1) and
// `answer` (a category index with its label), the others with their status and none.
// Returns the expected number of draws of each status (index: DrawStatus).
std::array<int64_t, 4> make_store(const std::string& path) {
  std::array<int64_t, 4> n{};
  auto s = Store::open(path);
  EXPECT_TRUE(s.ok()) << s.status().to_string();
  if (!s.ok()) return n;
  Store& st = **s;
  EXPECT_TRUE(st.put_study(StudyRecord{"orig", "", 0, {{"name", "orig"}, {"imported", true}}}).ok());
  std::vector<Draw> draws;
  for (int i = 0; i < kItems; ++i) {
    const std::string item = "q" + std::to_string(i), cluster = "c" + std::to_string(i / 2);
    EXPECT_TRUE(st.put_item(item, cluster, {{"imported", true}}).ok());
    for (int c = 0; c < 2; ++c)
      for (int r = 0; r < kReplicates; ++r) {
        Draw d;
        d.key = DrawKey{"m", item, "none", kConfigs[c], r};
        d.cluster = cluster;
        d.status = status_of(c, i, r);
        d.extra = {{"imported", true}};
        if (d.status == DrawStatus::kApiError) d.error = "HTTP 500";
        if (d.status == DrawStatus::kOk) {
          const bool right = (i + r * c) % 3 != 0;
          d.outcomes = {{"correct", right ? 1.0 : 0.0, ""}, {"answer", right ? 0.0 : 1.0, right ? "A" : "B"}};
        }
        ++n[static_cast<size_t>(d.status)];
        draws.push_back(std::move(d));
      }
  }
  EXPECT_TRUE(st.put_draws(draws).ok());
  return n;
}

nlohmann::json results_of(const std::string& store, const TempDir& d, const std::string& out) {
  const CmdResult r = run_cli("analyze --store " + store + " --out " + d / out + " --resamples 50", d.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(slurp(d / out + "/results.json"), nullptr, false);
}

// What must survive the round trip: the Draws table and each floor analysis.
void expect_same_analysis(const nlohmann::json& want, const nlohmann::json& got, const std::string& what) {
  ASSERT_TRUE(want.is_object() && got.is_object()) << what;
  EXPECT_EQ(got["draws"]["rows"], want["draws"]["rows"]) << what;
  ASSERT_TRUE(want["analyses"].contains("floor")) << want["analyses"].dump();
  for (const char* a : {"floor", "majority_floor"}) {
    if (!want["analyses"].contains(a)) continue;
    EXPECT_EQ(got["analyses"][a], want["analyses"][a]) << what << ": " << a;
  }
}

std::string summary_of(const std::array<int64_t, 4>& n) {
  return "(ok " + std::to_string(n[0]) + ", parse_error " + std::to_string(n[1]) + ", refused " +
         std::to_string(n[3]) + ", api_error " + std::to_string(n[2]) + ")";
}

TEST(ImportDrawsStatusCli, EveryDrawStatusSurvivesExportAndImportInBothFormats) {
  TempDir d;
  const std::string orig = d / "orig.sqlite";
  const std::array<int64_t, 4> n = make_store(orig);
  ASSERT_GT(n[1], 0);
  ASSERT_GT(n[2], 0);
  ASSERT_GT(n[3], 0);
  const int64_t total = n[0] + n[1] + n[2] + n[3];
  const nlohmann::json want = results_of(orig, d, "a-orig");
  // The original's table holds the parse errors the import used to lose.
  int64_t parse_errors = 0;
  for (const auto& row : want["draws"]["rows"]) parse_errors += row["parse_error"].get<int64_t>();
  ASSERT_EQ(parse_errors, n[1]);

  for (const std::string fmt : {"jsonl", "csv"}) {
    const std::string file = d / ("d." + fmt);
    CmdResult r = run_cli("export --store " + orig + " --format " + fmt + " --out " + file, d.path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    if (fmt == "csv") {
      // One row per outcome of an ok draw (2 each), one per draw that is not ok.
      const std::string text = slurp(file);
      const int64_t lines = std::count(text.begin(), text.end(), '\n');
      EXPECT_EQ(lines, 1 + 2 * n[0] + n[1] + n[2] + n[3]);
      EXPECT_NE(text.find("m,q0,c0,none,temperature=0,0,parse_error,,,,0\n"), std::string::npos) << text;
    }
    const std::string store = d / ("from-" + fmt + ".sqlite");
    r = run_cli("import draws " + file + " --store " + store, d.path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find(std::to_string(total) + " draws of " + std::to_string(kItems) + " items " + summary_of(n)),
              std::string::npos)
        << r.err;
    expect_same_analysis(want, results_of(store, d, "a-" + fmt), fmt);
    // ... and back out again: the same file.
    const std::string again = d / ("again." + fmt);
    r = run_cli("export --store " + store + " --format " + fmt + " --out " + again, d.path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    if (fmt == "csv") {
      EXPECT_EQ(slurp(again), slurp(file));
    }
  }

  if (!testing::pg_base_url()) return;  // PostgreSQL: under scripts/with-postgres
  for (const std::string fmt : {"jsonl", "csv"}) {
    testing::PgSchema schema;
    const CmdResult r = run_cli("import draws " + d / ("d." + fmt) + " --store '" + schema.url() + "'", d.path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find(summary_of(n)), std::string::npos) << r.err;
    expect_same_analysis(want, results_of("'" + schema.url() + "'", d, "a-pg-" + fmt), "postgresql " + fmt);
    // PostgreSQL's CSV export writes the same rows (its own query: the draws that are not
    // ok through a LEFT JOIN).
    const CmdResult e =
        run_cli("export --store '" + schema.url() + "' --format csv --out " + d / ("pg-" + fmt + ".csv"), d.path());
    ASSERT_EQ(e.exit_code, 0) << e.err;
    EXPECT_EQ(slurp(d / ("pg-" + fmt + ".csv")), slurp(d / "d.csv")) << fmt;
  }
}

// The rows of one draw apart in the file: the reader does not keep every key, the store
// finds them (SQLite: BulkImport; PostgreSQL: the staged rows), with the reader's words.
TEST(ImportDrawsStatusCli, RowsOfOneDrawApartThatDisagreeOnItsStatusAreRefused) {
  TempDir d;
  const std::string header = "subject,item,condition,config,replicate,outcome,value,status\n";
  struct Case {
    std::string rows, want;
  };
  const std::vector<Case> cases{
      {"m,q1,none,default,0,,,parse_error\nm,q2,none,default,0,correct,1,\nm,q1,none,default,0,correct,1,ok\n",
       ":4: status: 'ok', but line 2 gave the draw (subject=m, item=q1, condition=none, config=default, "
       "replicate=0) status 'parse_error': the rows of one draw agree on its status"},
      {"m,q1,none,default,0,correct,1,\nm,q2,none,default,0,correct,1,\nm,q1,none,default,0,,,refused\n",
       ":4: status: 'refused', but line 2 gave the draw (subject=m, item=q1, condition=none, config=default, "
       "replicate=0) status 'ok'"},
      {"m,q1,none,default,0,,,api_error\nm,q2,none,default,0,correct,1,\nm,q1,none,default,0,,,refused\n",
       ":4: status: 'refused', but line 2 gave the draw (subject=m, item=q1, condition=none, config=default, "
       "replicate=0) status 'api_error'"},
      {"m,q1,none,default,0,,,api_error\nm,q2,none,default,0,correct,1,\nm,q1,none,default,0,,,api_error\n",
       ":4: status: a second row of the api_error draw (subject=m, item=q1, condition=none, config=default, "
       "replicate=0) (first on line 2): a draw that is not ok has one row"},
  };
  int k = 0;
  for (const Case& c : cases) {
    const std::string file = d / ("apart" + std::to_string(k++) + ".csv");
    write_text(file, header + c.rows);
    const std::string store = d / "new.sqlite";
    const CmdResult r = run_cli("import draws " + file + " --store " + store, d.path());
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find(file + c.want), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(store));  // the store the command created is removed
    if (!testing::pg_base_url()) continue;
    testing::PgSchema schema;
    const CmdResult p = run_cli("import draws " + file + " --store '" + schema.url() + "'", d.path());
    EXPECT_EQ(p.exit_code, 2) << p.err;
    EXPECT_NE(p.err.find(file + c.want), std::string::npos) << p.err;
  }
}

// A stored api_error draw is replaced by the import's row for it, of any status, as an
// ok one always was; a stored draw of another status is refused.
TEST(ImportDrawsStatusCli, AStoredApiErrorDrawIsReplacedAndOthersRefused) {
  TempDir d;
  const std::string store = d / "s.sqlite";
  write_text(d / "first.csv", "subject,item,condition,config,replicate,outcome,value,status\n"
                              "m,q1,none,default,0,,,api_error\nm,q1,none,default,1,,,parse_error\n");
  CmdResult r = run_cli("import draws " + d / "first.csv" + " --store " + store, d.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("2 rows -> 2 draws of 1 items (parse_error 1, api_error 1)"), std::string::npos) << r.err;
  write_text(d / "retry.csv", "subject,item,condition,config,replicate,outcome,value,status\n"
                              "m,q1,none,default,0,,,refused\n");
  r = run_cli("import draws " + d / "retry.csv" + " --store " + store, d.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("1 rows -> 1 draws of 1 items (refused 1)"), std::string::npos) << r.err;
  auto s = Store::open_existing(store);
  ASSERT_TRUE(s.ok());
  auto got = (*s)->get_draw(DrawKey{"m", "q1", "none", "default", 0});
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  EXPECT_EQ(got->status, DrawStatus::kRefused);
  s->reset();
  write_text(d / "again.csv", "subject,item,condition,config,replicate,outcome,value,status\n"
                              "m,q1,none,default,1,,,parse_error\n");
  r = run_cli("import draws " + d / "again.csv" + " --store " + store, d.path());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("already stored with status parse_error"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace nf
