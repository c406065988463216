// `noisefloor import draws` streams (issue 14 item 2): a bad row names file, line and
// column with exit code 2 and leaves no store behind when the command created it; a good
// file imports and analyzes; importing it again is refused and changes nothing.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <vector>
#include <string>

#include "common/test_data.h"
#include "store/store.h"

namespace nf {
namespace {

using testing::run_cli;
using testing::TempDir;

const char* kHeader = "subject,item,cluster,condition,config,replicate,outcome,value\n";

TEST(ImportDrawsStreamCli, BadRowNamesLineAndColumnAndLeavesNoNewStore) {
  TempDir d;
  testing::write_text(d / "bad.csv", std::string(kHeader) + "m,q1,c,none,default,0,correct,1\n"
                                                           "m,q1,c,none,default,x,correct,1\n");
  const auto r = run_cli("import draws " + d / "bad.csv" + " --store " + d / "new.sqlite", d.path());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("bad.csv:3: replicate: expected a non-negative integer, got 'x'"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(d / "new.sqlite"));
}

TEST(ImportDrawsStreamCli, ImportsAnalyzesAndRefusesASecondImport) {
  TempDir d;
  std::string csv = kHeader;
  for (int i = 0; i < 6; ++i)
    for (int r = 0; r < 4; ++r)
      csv += "m,q" + std::to_string(i) + ",c" + std::to_string(i / 2) + ",none,default," + std::to_string(r) +
             ",correct," + std::to_string((i * r) % 2) + "\n";
  testing::write_text(d / "d.csv", csv);
  const std::string store = d / "s.sqlite";
  auto r = run_cli("import draws " + d / "d.csv" + " --store " + store, d.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("24 rows -> 24 draws of 6 items"), std::string::npos) << r.err;
  r = run_cli("analyze --store " + store + " --out " + d / "out" + " --analysis floor --resamples 50", d.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_cli("import draws " + d / "d.csv" + " --store " + store, d.path());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("already stored"), std::string::npos) << r.err;
  EXPECT_TRUE(std::filesystem::exists(store));  // an existing store is kept
  auto s = Store::open_existing(store);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*(*s)->draw_count(), 24);
}

// Values that would be imported as silently wrong numbers (issue 14 follow-up): each is
// exit 2 with FILE:LINE: value: ..., and nothing is written: a store the command created
// is removed, an existing store keeps exactly what it held.
TEST(ImportDrawsStreamCli, BadValuesExit2AndWriteNothing) {
  TempDir d;
  const std::string good_rows = "m,q1,c,none,default,0,correct,1\nm,q1,c,none,default,1,correct,0\n";
  testing::write_text(d / "good.csv", std::string(kHeader) + good_rows);
  const std::string existing = d / "existing.sqlite";
  ASSERT_EQ(run_cli("import draws " + d / "good.csv" + " --store " + existing, d.path()).exit_code, 0);
  const std::string jrow = R"({"subject":"m","item":"q2","condition":"none","config":"default","outcome":"correct",)";
  struct Case {
    std::string file, text, flags, error;
  };
  const std::vector<Case> cases{
      {"nan.csv", std::string(kHeader) + "m,q2,c,none,default,0,correct,nan\n", "",
       "nan.csv:2: value: 'nan' is not a finite number"},
      {"inf.csv", std::string(kHeader) + "m,q2,c,none,default,0,score,0.5\nm,q2,c,none,default,1,score,-inf\n", "",
       "inf.csv:3: value: '-inf' is not a finite number"},
      {"typo.csv",
       std::string(kHeader) + "m,q2,c,none,default,0,correct,1\nm,q2,c,none,default,1,correct,0\n"
                              "m,q2,c,none,default,2,correct,1O\n",
       "",
       "typo.csv:4: value: outcome 'correct' mixes numbers and non-numeric values: '1' on line 2 is a number, '1O' "
       "on line 4 is not (first of each)"},
      {"mixed.jsonl", jrow + R"("replicate":0,"value":"abc"})" + "\n" + jrow + R"("replicate":1,"value":0})" + "\n",
       "", "mixed.jsonl:2: value: outcome 'correct' mixes numbers and non-numeric values: '0' on line 2 is a number, "
           "'abc' on line 1 is not (first of each)"},
      {"two.csv", std::string(kHeader) + "m,q2,c,none,default,0,correct,1\nm,q2,c,none,default,1,correct,2\n",
       " --binary correct,parsed",
       "two.csv:3: value: outcome 'correct' is declared binary (--binary): expected 0, 1, true or false, got '2'"},
      {"undeclared.csv", std::string(kHeader) + "m,q2,c,none,default,0,correct,1\n", " --binary corect",
       "undeclared.csv: --binary: outcome 'corect' has no row in the file (outcomes: correct) (did you mean "
       "'correct'?)"},
  };
  for (const auto& c : cases) {
    testing::write_text(d / c.file, c.text);
    auto r = run_cli("import draws " + d / c.file + " --store " + d / "new.sqlite" + c.flags, d.path());
    EXPECT_EQ(r.exit_code, 2) << c.file << "\n" << r.err;
    EXPECT_NE(r.err.find(c.error), std::string::npos) << c.file << "\n" << r.err;
    EXPECT_FALSE(std::filesystem::exists(d / "new.sqlite")) << c.file;
    r = run_cli("import draws " + d / c.file + " --store " + existing + c.flags, d.path());
    EXPECT_EQ(r.exit_code, 2) << c.file << "\n" << r.err;
    auto s = Store::open_existing(existing);
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(*(*s)->draw_count(), 2) << c.file;
    auto rows = (*s)->outcome_rows();
    ASSERT_TRUE(rows.ok());
    EXPECT_EQ(rows->size(), 2u) << c.file;
  }
}

TEST(ImportDrawsStreamCli, NearlyBinaryOutcomeWarnsUnlessDeclaredBinary) {
  TempDir d;
  std::string csv = kHeader;
  for (int i = 0; i < 20; ++i) csv += "m,q" + std::to_string(i) + ",,none,default,0,correct," + std::to_string(i % 2) + "\n";
  csv += "m,q20,,none,default,0,correct,-1\n";  // line 22
  testing::write_text(d / "d.csv", csv);
  auto r = run_cli("import draws " + d / "d.csv" + " --store " + d / "s.sqlite", d.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("import: warning: " + d / "d.csv" +
                       ": value: outcome 'correct' looks binary but 1 of its 21 values are not 0/1: -1 (1 row, first "
                       "on line 22); they are imported as written and enter its means (fix them, or import with "
                       "--binary correct to refuse them)\n"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("21 rows -> 21 draws of 21 items"), std::string::npos) << r.err;
  r = run_cli("import draws " + d / "d.csv" + " --store " + d / "b.sqlite" + " --binary correct", d.path());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("d.csv:22: value: outcome 'correct' is declared binary (--binary): expected 0, 1, true or "
                       "false, got '-1'"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(d / "b.sqlite"));
  r = run_cli("import votes " + d / "d.csv" + " --store " + d / "v.sqlite" + " --binary correct", d.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--binary: only for `import draws`"), std::string::npos) << r.err;
}

// `import --help` says which draws columns are required and gives an example that runs
// as printed: its three CSV lines are read from the help text itself.
TEST(ImportDrawsStreamCli, HelpNamesRequiredColumnsAndItsExampleRuns) {
  TempDir d;
  const auto h = run_cli("import --help", d.path());
  ASSERT_EQ(h.exit_code, 0) << h.err;
  EXPECT_NE(h.out.find("required columns: subject,item,condition,config,replicate,outcome,value"), std::string::npos)
      << h.out;
  EXPECT_NE(h.out.find("optional columns: cluster (empty or absent = the item), label, status"), std::string::npos);
  const std::string marker = "Example: draws.csv holding the three lines\n";
  const size_t at = h.out.find(marker);
  ASSERT_NE(at, std::string::npos) << h.out;
  std::istringstream in(h.out.substr(at + marker.size()));
  std::string csv, line, command;
  for (int i = 0; i < 3 && std::getline(in, line); ++i) csv += line.substr(line.find_first_not_of(' ')) + "\n";
  ASSERT_TRUE(std::getline(in, command));
  command = command.substr(command.find_first_not_of(' '));
  ASSERT_EQ(command.rfind("noisefloor import draws draws.csv --store S.sqlite", 0), 0u) << command;
  testing::write_text(d / "draws.csv", csv);
  // As printed, in the folder holding draws.csv.
  const auto r = run_cli(command.substr(std::string("noisefloor ").size()), d.path(), "cd '" + d.path() + "' &&");
  ASSERT_EQ(r.exit_code, 0) << csv << r.err;
  EXPECT_NE(r.err.find("2 rows -> 2 draws of 1 items"), std::string::npos) << r.err;
  EXPECT_TRUE(std::filesystem::exists(d / "S.sqlite"));
}

}  // namespace
}  // namespace nf
