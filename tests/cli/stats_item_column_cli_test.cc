// The agreement tests' item-id column through the real binary: an id column not headed
// exactly item/id is never counted as a rater (refused, or named with --item-column).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "common/test_data.h"

namespace nf {
namespace {

using testing::run_cli;
using testing::TempDir;

void write(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
}

std::string sample_ratings() {
  std::ifstream f(std::string(NF_SOURCE_DIR) + "/data/sample-ratings.csv");
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Fleiss kappa of data/sample-ratings.csv (10 items, raters a/b/c, q05 missing one
// rating): 0.45032679738562065 from a standalone Python evaluation of Fleiss (1971) with
// P_i over n_i (n_i - 1) and p_j over all ratings (not this code).
constexpr double kSampleFleiss = 0.45032679738562065;

TEST(StatsItemColumnCli, IdColumnWithAnotherNameIsRefusedOrNamed) {
  TempDir d;
  std::string text = sample_ratings();
  ASSERT_EQ(text.rfind("item,", 0), 0u) << text;
  write(d / "item.csv", text);
  write(d / "fr.csv", "item_id," + text.substr(5));
  for (const char* test : {"fleiss", "gwet", "krippendorff"}) {
    auto r = run_cli(std::string("stats ") + test + " " + (d / "fr.csv") + " --resamples 50", d.path());
    EXPECT_EQ(r.exit_code, 2) << test << ": " << r.out;
    EXPECT_NE(r.err.find("fr.csv:1:1: column 'item_id' looks like an item id"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--item-column item_id"), std::string::npos) << r.err;
  }
  auto named = run_cli("stats fleiss " + (d / "fr.csv") + " --item-column item_id --resamples 50 --json", d.path());
  ASSERT_EQ(named.exit_code, 0) << named.err;
  const auto j = nlohmann::json::parse(named.out);
  EXPECT_NEAR(j["estimate"].get<double>(), kSampleFleiss, 1e-12);
  EXPECT_EQ(j["raters"], nlohmann::json::array({"rater_a", "rater_b", "rater_c"}));
  EXPECT_EQ(j["categories"], nlohmann::json::array({"0", "1"}));
  auto plain = run_cli("stats fleiss " + (d / "item.csv") + " --resamples 50 --json", d.path());
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_NEAR(nlohmann::json::parse(plain.out)["estimate"].get<double>(), kSampleFleiss, 1e-12);
  // --raters chooses the columns explicitly: no refusal.
  auto picked = run_cli("stats fleiss " + (d / "fr.csv") + " --raters rater_a,rater_b,rater_c --resamples 50 --json",
                        d.path());
  ASSERT_EQ(picked.exit_code, 0) << picked.err;
  EXPECT_NEAR(nlohmann::json::parse(picked.out)["estimate"].get<double>(), kSampleFleiss, 1e-12);
  // The named item column is not a rater, wherever it stands.
  auto bad = run_cli("stats fleiss " + (d / "fr.csv") + " --item-column item_id --raters item_id,rater_a", d.path());
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("the item-id column"), std::string::npos) << bad.err;
  auto missing = run_cli("stats fleiss " + (d / "fr.csv") + " --item-column itemid", d.path());
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("no column named 'itemid'"), std::string::npos) << missing.err;
}

TEST(StatsItemColumnCli, IdByValuesIsRefusedAndLegitimateRatersAreNot) {
  TempDir d;
  // A column with a different value in each row, next to raters that repeat: an id.
  write(d / "v.csv", "r1,question,r2\nA,17,A\nB,23,A\nB,42,B\nA,8,A\n");
  auto r = run_cli("stats fleiss " + (d / "v.csv"), d.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("v.csv:1:2: column 'question' looks like an item id"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("different value in each of the 4 rows"), std::string::npos) << r.err;
  auto ok = run_cli("stats fleiss " + (d / "v.csv") + " --item-column question --json --resamples 50", d.path());
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(nlohmann::json::parse(ok.out)["raters"], nlohmann::json::array({"r1", "r2"}));
  // Every rater distinct across rows (3 items, 3 categories): nothing looks like an id.
  write(d / "all.csv", "r1,r2\nA,A\nB,C\nC,B\n");
  EXPECT_EQ(run_cli("stats fleiss " + (d / "all.csv") + " --resamples 50", d.path()).exit_code, 0);
  // Words that merely contain "id" are raters ("valid", "david").
  write(d / "w.csv", "valid,david\n1,1\n0,1\n1,1\n");
  EXPECT_EQ(run_cli("stats fleiss " + (d / "w.csv") + " --resamples 50", d.path()).exit_code, 0);
  // Counts layout: an id-named column is refused, --item-column skips it.
  write(d / "c.csv", "ItemId,yes,no\n1,2,1\n2,3,0\n3,0,3\n");
  auto c = run_cli("stats fleiss " + (d / "c.csv") + " --counts", d.path());
  EXPECT_EQ(c.exit_code, 2);
  EXPECT_NE(c.err.find("column 'ItemId' looks like an item id"), std::string::npos) << c.err;
  auto cj = run_cli("stats fleiss " + (d / "c.csv") + " --counts --item-column ItemId --json", d.path());
  ASSERT_EQ(cj.exit_code, 0) << cj.err;
  EXPECT_EQ(nlohmann::json::parse(cj.out)["categories"], nlohmann::json::array({"yes", "no"}));
}

TEST(StatsItemColumnCli, HelpDocumentsTheItemColumn) {
  TempDir d;
  auto h = run_cli("stats fleiss --help", d.path());
  EXPECT_EQ(h.exit_code, 0);
  EXPECT_NE(h.out.find("--item-column NAME"), std::string::npos) << h.out;
  EXPECT_NE(h.out.find("looks like an item id is refused"), std::string::npos) << h.out;
}

// A UTF-8 byte-order mark (spreadsheet exports) is not part of the first header name.
TEST(StatsItemColumnCli, ByteOrderMarkIsNotPartOfTheHeader) {
  TempDir d;
  write(d / "b.csv", "\xef\xbb\xbfx,y\n1,2\n2,1\n3,3\n");
  auto k = run_cli("stats kendall " + (d / "b.csv") + " --json", d.path());
  ASSERT_EQ(k.exit_code, 0) << k.err;
  // Kendall tau of x = 1,2,3 and y = 2,1,3 by hand: 2 concordant, 1 discordant of 3 pairs = 1/3
  EXPECT_NEAR(nlohmann::json::parse(k.out)["estimate"].get<double>(), 1.0 / 3.0, 1e-12);
  write(d / "c.csv", "\xef\xbb\xbfrun1,run2\nA,A\nB,A\nB,B\n");
  auto c = run_cli("stats cohen " + (d / "c.csv") + " --json --resamples 50", d.path());
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_EQ(nlohmann::json::parse(c.out)["raters"], nlohmann::json::array({"run1", "run2"}));
  write(d / "i.csv", "\xef\xbb\xbfitem,r1,r2\n1,A,A\n2,B,A\n3,B,B\n");  // the item column still found
  auto i = run_cli("stats fleiss " + (d / "i.csv") + " --json --resamples 50", d.path());
  ASSERT_EQ(i.exit_code, 0) << i.err;
  EXPECT_EQ(nlohmann::json::parse(i.out)["raters"], nlohmann::json::array({"r1", "r2"}));
}

}  // namespace
}  // namespace nf
