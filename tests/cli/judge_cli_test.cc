// End to end: `noisefloor import missing-info` on the released seed 004 files (read in
// place via NOISEFLOOR_DATA), then `noisefloor analyze`, checked against the paper.
#include <gtest/gtest.h>

#include <fstream>

#include "common/test_data.h"

namespace nf {
namespace {

using nlohmann::json;
using testing::run_cli;
using testing::TempDir;

const json* row_where(const json& rows, const char* k1, const std::string& v1, const char* k2 = nullptr,
                      const std::string& v2 = "") {
  for (const auto& r : rows)
    if (r[k1] == v1 && (k2 == nullptr || r[k2] == v2)) return &r;
  return nullptr;
}

TEST(JudgeCli, ImportMissingInfoThenAnalyzeReproducesThePaper) {
  TempDir t;
  const std::string dir = testing::data_file("missing-info-judges");
  const std::string store = t / "s.sqlite", out = t / "out";
  auto imp = run_cli("import missing-info " + dir + " --store " + store, t.path());
  ASSERT_EQ(imp.exit_code, 0) << imp.err;
  EXPECT_NE(imp.err.find("800 votes, 150 human labels (raters 3), 50 items"), std::string::npos) << imp.err;
  // Re-importing the same votes skips them and says so (issue 12), never duplicates them.
  auto again = run_cli("import missing-info " + dir + " --store " + store, t.path());
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.err.find("already in the store, left unchanged"), std::string::npos) << again.err;

  auto an = run_cli("analyze --store " + store + " --out " + out + " --resamples 100 --bootstrap-seed 4", t.path());
  ASSERT_EQ(an.exit_code, 0) << an.err;
  const json r = json::parse(testing::slurp(out + "/results.json"));
  ASSERT_TRUE(r["analyses"].contains("judge_panel"));
  ASSERT_TRUE(r["analyses"].contains("human_validity"));
  EXPECT_FALSE(r["analyses"].contains("floor"));  // no draws in this store
  const json& jp = r["analyses"]["judge_panel"];
  // Table 4: GPT-5.5 judged by openai/anthropic/xai/google.
  const double want[] = {0.860, 0.780, 33.0 / 49, 0.640};
  const char* judges[] = {"openai", "anthropic", "xai", "google"};
  for (int i = 0; i < 4; ++i) {
    const json* c = row_where(jp["rates"], "judge", judges[i], "subject", "gpt-5_5-high");
    ASSERT_NE(c, nullptr);
    EXPECT_NEAR((*c)["rate"].get<double>(), want[i], 1e-12) << judges[i];
  }
  EXPECT_NEAR(jp["fleiss"]["kappa"].get<double>(), 0.649, 5e-4);
  EXPECT_EQ(jp["fleiss"]["complete_units"], 198);
  const json& shared = jp["logistic"]["models"][0]["terms"][0];
  EXPECT_EQ(shared["term"], "same_provider");
  EXPECT_NEAR(shared["coef"].get<double>(), 0.350, 5e-4);
  EXPECT_DOUBLE_EQ(jp["permutation"]["p"].get<double>(), 1.0 / 24);
  EXPECT_EQ(jp["bootstrap"]["seed"], 4);
  const json& hv = r["analyses"]["human_validity"];
  EXPECT_EQ(hv["bootstrap"]["clusters"], 33);
  const json* una = row_where(hv["aggregation"], "rule", "unanimity", "reference", "O");
  ASSERT_NE(una, nullptr);
  EXPECT_NEAR((*una)["kappa"]["estimate"].get<double>(), 0.56, 0.005);
  EXPECT_EQ((*una)["false_lenient"], 8);
  EXPECT_EQ((*una)["false_strict"], 3);

  const std::string md = testing::slurp(out + "/report.md");
  EXPECT_NE(md.find("## Judge panel reliability"), std::string::npos);
  EXPECT_NE(md.find("## Judges against human raters"), std::string::npos);
  EXPECT_NE(md.find("100 resamples of the 33 prompts as clusters"), std::string::npos);
  EXPECT_NE(md.find("reproducible from the seed"), std::string::npos);
  EXPECT_NE(md.find("| unanimity | O | 0.56"), std::string::npos);
  // The ranking reads best first: highest appropriate-response rate, then " > " (a store
  // without a study: the missing-information wording).
  std::string ranking = "Full panel: ";
  for (size_t i = 0; i < jp["leave_one_judge_out"]["full_ranking"].size(); ++i)
    ranking += (i ? " > " : "") + jp["leave_one_judge_out"]["full_ranking"][i].get<std::string>();
  EXPECT_NE(md.find(ranking + "."), std::string::npos) << ranking << "\n" << md;
  EXPECT_NE(md.find("the ranking (highest appropriate-response rate first)"), std::string::npos);
  EXPECT_EQ(jp["rate_label"], "appropriate-response rate");
  const json& lopo = jp["leave_own_provider_out"];
  const std::string best = jp["leave_one_judge_out"]["full_ranking"][0].get<std::string>();
  for (const auto& row : lopo)  // the first has the lowest panel inappropriate rate
    EXPECT_LE((*row_where(lopo, "subject", best, "subject", best))["panel_inappropriate"].get<double>(),
              row["panel_inappropriate"].get<double>());

  // The same seed gives byte-identical results.
  auto an2 = run_cli("analyze --store " + store + " --out " + (t / "out2") + " --resamples 100 --bootstrap-seed 4",
                     t.path());
  ASSERT_EQ(an2.exit_code, 0) << an2.err;
  EXPECT_EQ(testing::slurp(out + "/results.json"), testing::slurp(t / "out2/results.json"));
}

TEST(JudgeCli, ImportVotesAndLabelsLongFormat) {
  TempDir t;
  std::ofstream(t / "v.csv") << "subject,subject_provider,item,cluster,judge,judge_provider,label\n"
                                "m1,openai,i1,p1,j1,openai,1\nm1,openai,i1,p1,j2,xai,0\n"
                                "m2,xai,i1,p1,j1,openai,1\nm2,xai,i1,p1,j2,xai,\n";
  std::ofstream(t / "l.csv") << "rater,subject,item,label\nO,m1,i1,1\nG,m1,i1,0\n";
  auto v = run_cli("import votes " + (t / "v.csv") + " --store " + (t / "s.sqlite"), t.path());
  ASSERT_EQ(v.exit_code, 0) << v.err;
  auto l = run_cli("import labels " + (t / "l.csv") + " --store " + (t / "s.sqlite"), t.path());
  ASSERT_EQ(l.exit_code, 0) << l.err;
  EXPECT_NE(l.err.find("2 human labels"), std::string::npos) << l.err;
  std::ofstream(t / "bad.csv") << "subject,subject_provider,item,cluster,judge,judge_provider,label\n"
                                  "m1,openai,i1,p1,j1,openai,yes\n";
  auto bad = run_cli("import votes " + (t / "bad.csv") + " --store " + (t / "s.sqlite"), t.path());
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_NE(bad.err.find("bad.csv:2: label"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace nf
