// `noisefloor import draws` streams (issue 14 item 2): a bad row names file, line and
// column with exit code 2 and leaves no store behind when the command created it; a good
// file imports and analyzes; importing it again is refused and changes nothing.
#include <gtest/gtest.h>

#include <filesystem>
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

}  // namespace
}  // namespace nf
