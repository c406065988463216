// `stats fleiss --counts` bootstraps an interval over items (tester s9 finding 22.9: it printed
// "CI n/a" while the ratings layout of the same data bootstrapped one). The two layouts of the
// same items in the same order, with the same seed, give the same interval, with or without a
// cluster column; a case with no interval says why.
#include <gtest/gtest.h>

#include <fstream>
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

nlohmann::json ok_json(const TempDir& d, const std::string& args) {
  auto r = run_cli("stats " + args + " --json", d.path());
  EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.err;
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.out;
  return j;
}

// Every line of `csv` without its second field (the cluster column).
std::string without_second_column(const std::string& csv) {
  std::string out;
  for (size_t at = 0; at < csv.size();) {
    const size_t nl = csv.find('\n', at);
    const std::string line = csv.substr(at, nl - at);
    const size_t c1 = line.find(','), c2 = line.find(',', c1 + 1);
    out += line.substr(0, c1) + line.substr(c2) + "\n";
    at = nl + 1;
  }
  return out;
}

TEST(StatsFleissCountsCli, SameIntervalAsTheRatingsLayout) {
  TempDir d;
  // 8 items x 5 raters, counts A/B/C = 5/0/0, 4/1/0, 0/5/0, 0/4/1, 1/0/4, 0/0/5, 5/0/0, 3/2/0.
  const int counts[8][3] = {{5, 0, 0}, {4, 1, 0}, {0, 5, 0}, {0, 4, 1}, {1, 0, 4}, {0, 0, 5}, {5, 0, 0}, {3, 2, 0}};
  std::string ratings = "item,cluster,r1,r2,r3,r4,r5\n", table = "item,cluster,A,B,C\n";
  for (int i = 0; i < 8; ++i) {
    const std::string id = std::to_string(i + 1), cl = "p" + std::to_string(i / 2);
    ratings += id + "," + cl;
    for (int k = 0; k < 3; ++k)
      for (int r = 0; r < counts[i][k]; ++r) ratings += std::string(",") + static_cast<char>('A' + k);
    ratings += "\n";
    table += id + "," + cl + "," + std::to_string(counts[i][0]) + "," + std::to_string(counts[i][1]) + "," +
             std::to_string(counts[i][2]) + "\n";
  }
  write(d / "r.csv", ratings);
  write(d / "c.csv", table);
  // Without the cluster column: an item bootstrap.
  write(d / "r_items.csv", without_second_column(ratings));
  write(d / "c_items.csv", without_second_column(table));
  for (const char* f : {"", "_items"}) {
    SCOPED_TRACE(f);
    const auto r = ok_json(d, "fleiss " + (d / (std::string("r") + f + ".csv")) + " --resamples 1500 --seed 9");
    const auto c = ok_json(d, "fleiss " + (d / (std::string("c") + f + ".csv")) + " --counts --resamples 1500 --seed 9");
    EXPECT_NEAR(c["estimate"].get<double>(), 0.651163, 5e-7);  // docs/stats.md, statsmodels fleiss_kappa
    EXPECT_EQ(c["estimate"], r["estimate"]);
    ASSERT_TRUE(c["interval"].is_array()) << c.dump();
    EXPECT_EQ(c["interval"], r["interval"]);
    EXPECT_EQ(c["interval_method"], r["interval_method"]);
    EXPECT_EQ(c["resamples"], 1500);
    EXPECT_EQ(c["seed"], 9);
    EXPECT_LT(c["interval"][0].get<double>(), c["estimate"].get<double>());
  }
  EXPECT_EQ(ok_json(d, "fleiss " + (d / "c.csv") + " --counts")["interval_method"], "cluster bootstrap percentile CI");
  EXPECT_EQ(ok_json(d, "fleiss " + (d / "c_items.csv") + " --counts")["interval_method"],
            "item bootstrap percentile CI");
}

TEST(StatsFleissCountsCli, NoIntervalSaysWhy) {
  TempDir d;
  write(d / "one.csv", "A,B\n3,0\n3,0\n");  // every rating in one category: kappa undefined
  const auto j = ok_json(d, "fleiss " + (d / "one.csv") + " --counts");
  EXPECT_TRUE(j.contains("undefined")) << j.dump();
  EXPECT_TRUE(j["interval"].is_null()) << j.dump();
  auto bad = run_cli("stats fleiss " + (d / "one.csv") + " --counts --resamples 10", d.path());
  EXPECT_EQ(bad.exit_code, 2) << bad.err;  // too few resamples for a 95% percentile interval
}

}  // namespace
}  // namespace nf
