// Issue 12 items 3 and 4 through the real binary: any analysis on an imported store (the
// FairMedAgent model-A reference draws, converted at test time from ${NOISEFLOOR_DATA};
// the published numbers are seed 000's) and honest intervals (degenerate flag with a
// Wilson bound, cluster counts, coverage).
#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "common/test_data.h"

namespace nf {
namespace {

using testing::CmdResult;
using testing::run_cli;
using testing::slurp;
using testing::TempDir;

nlohmann::json results(const std::string& dir) { return nlohmann::json::parse(slurp(dir + "/results.json")); }

bool has(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

const nlohmann::json& floor_of(const nlohmann::json& rows, const std::string& action) {
  for (const auto& f : rows)
    if (f["action"] == action) return f;
  static const nlohmann::json none;
  ADD_FAILURE() << "no floor row " << action;
  return none;
}

// Seed 000 (model A, 16 vignettes x 10 reference replicates): pooled floor without
// cs_caution 245/3600; paired cs_caution - escalate_icu (129 - 16)/720 = 113/720;
// vignettes for 25 discordant pairs: pooled 289, cs_caution 140, escalate_icu 1,125.
TEST(AnyAnalysis, FairnessOnImportedModelADrawsReproducesPublishedNumbers) {
  TempDir d;
  testing::write_text(d / "model_a.csv", testing::fairmedagent_model_a_csv());
  CmdResult imp = run_cli("import draws " + d / "model_a.csv" + " --store " + d / "f.sqlite", d.path());
  ASSERT_EQ(imp.exit_code, 0) << imp.err;
  CmdResult an = run_cli(
      "analyze --store " + d / "f.sqlite" + " --out " + d / "out" + " --resamples 500 --analysis "
      "'fairness={\"pooled_exclude\":[\"cs_caution\"],\"paired_difference\":[\"cs_caution\",\"escalate_icu\"],"
      "\"target_pairs\":25,\"subsample_k\":[4,8,12,16]}'",
      d.path());
  ASSERT_EQ(an.exit_code, 0) << an.err;
  const auto j = results(d / "out");
  ASSERT_TRUE(j["analyses"].contains("fairness")) << j["analyses"].dump();
  EXPECT_FALSE(j["analyses"].contains("floor"));  // --analysis runs exactly the analyses named
  const auto& rows = j["analyses"]["fairness"]["rows"];
  ASSERT_EQ(rows.size(), 1u);
  const auto& r = rows[0];
  EXPECT_EQ(r["reference"], "reference");
  EXPECT_EQ(r["vignettes"], 16);
  const auto& without = floor_of(r["floors"], "pooled_without_cs_caution");
  EXPECT_EQ(without["discordant"], 245);
  EXPECT_EQ(without["comparisons"], 3600);
  const auto& p = r["paired_difference"];
  ASSERT_TRUE(p.is_object());
  EXPECT_EQ(p["difference_discordant"], 113);
  EXPECT_EQ(p["comparisons"], 720);
  EXPECT_NEAR(p["difference"].get<double>(), 113.0 / 720.0, 1e-12);
  EXPECT_EQ(floor_of(r["floors"], "pooled")["vignettes_needed"], 289);
  EXPECT_EQ(floor_of(r["floors"], "cs_caution")["vignettes_needed"], 140);
  EXPECT_EQ(floor_of(r["floors"], "escalate_icu")["vignettes_needed"], 1125);
  // The subsampling curve's last point is the full pooled floor (374/4320).
  ASSERT_EQ(r["subsample"].size(), 4u);
  EXPECT_EQ(r["subsample"][3]["k"], 16);
  EXPECT_EQ(r["subsample"][3]["discordant"], 374);
  EXPECT_EQ(r["subsample"][3]["comparisons"], 4320);
  // Contrasts are skipped and the results say so.
  EXPECT_TRUE(r["flips"].empty());
  ASSERT_TRUE(r["contrasts_skipped"].is_string());
  EXPECT_TRUE(has(r["contrasts_skipped"].get<std::string>(), "only the reference condition"));
  // Every interval carries its cluster count and the few-clusters flag (16 < 20).
  EXPECT_EQ(without["clusters"], 16);
  EXPECT_EQ(without["few_clusters"], true);
  EXPECT_EQ(without["ci_method"], "studentized cluster bootstrap");

  const std::string md = slurp(d / "out/report.md");
  EXPECT_TRUE(has(md, "| pooled_without_cs_caution | 245/3600 |")) << md;
  EXPECT_TRUE(has(md, "113/720")) << md;
  EXPECT_TRUE(has(md, "| 289 |")) << md;
  EXPECT_TRUE(has(md, "| 140 |")) << md;
  EXPECT_TRUE(has(md, "| 1,125 |")) << md;
  EXPECT_TRUE(has(md, "descriptor contrasts skipped")) << md;
  EXPECT_TRUE(has(md, "16 clusters (few)")) << md;
}

// A 0/160 floor (16 items x 5 replicates = 160 pairs, all agree) is flagged degenerate with
// its Wilson bound [0, 0.023] beside it, in results.json and report.md; coverage says the
// plan of an imported store is unknown and counts an item with one valid draw.
TEST(HonestIntervals, ZeroOf160FloorIsDegenerateWithWilsonBound) {
  TempDir d;
  std::ostringstream csv;
  csv << "subject,item,condition,config,replicate,outcome,value\n";
  for (int i = 0; i < 16; ++i)
    for (int rep = 0; rep < 5; ++rep) {
      csv << "m,v" << i << ",reference,default," << rep << ",escalate_icu,0\n";
      csv << "m,v" << i << ",reference,default," << rep << ",admit," << (rep < i % 4 ? 1 : 0) << "\n";
    }
  csv << "m,v16,reference,default,0,escalate_icu,0\nm,v16,reference,default,0,admit,1\n";  // one draw only
  testing::write_text(d / "draws.csv", csv.str());
  CmdResult imp = run_cli("import draws " + d / "draws.csv" + " --store " + d / "s.sqlite", d.path());
  ASSERT_EQ(imp.exit_code, 0) << imp.err;
  CmdResult an = run_cli("analyze --store " + d / "s.sqlite" + " --out " + d / "out" + " --resamples 300 --analysis floor",
                         d.path());
  ASSERT_EQ(an.exit_code, 0) << an.err;
  const auto j = results(d / "out");
  nlohmann::json icu, admit;
  for (const auto& row : j["analyses"]["floor"]["rows"]) {
    if (row["outcome"] == "escalate_icu") icu = row;
    if (row["outcome"] == "admit") admit = row;
  }
  ASSERT_TRUE(icu.is_object());
  EXPECT_EQ(icu["discordant"], 0);
  EXPECT_EQ(icu["comparisons"], 160);
  EXPECT_EQ(icu["degenerate"], true);
  ASSERT_TRUE(icu["exact_interval"].is_object());
  EXPECT_EQ(icu["exact_interval"]["method"], "wilson");
  EXPECT_EQ(icu["exact_interval"]["lo"].get<double>(), 0.0);
  // Wilson upper bound for 0/160 at 95%: z^2 / (n + z^2) = 3.8415 / 163.8415 (statsmodels: 0.023446).
  EXPECT_NEAR(icu["exact_interval"]["hi"].get<double>(), 0.0234463, 1e-6);
  EXPECT_TRUE(has(icu["exact_interval"]["note"].get<std::string>(), "not independent") ||
              has(icu["exact_interval"]["note"].get<std::string>(), "are not"));
  EXPECT_EQ(icu["clusters"], 16);
  EXPECT_EQ(icu["few_clusters"], true);
  EXPECT_EQ(admit["degenerate"], false);
  EXPECT_FALSE(admit.contains("exact_interval"));
  // Coverage: 16 of 17 observed items contributed pairs; the plan is unknown for an import.
  const auto& c = icu["coverage"];
  EXPECT_EQ(c["items_contributing"], 16);
  EXPECT_EQ(c["items_observed"], 17);
  EXPECT_EQ(c["valid_draws"], 81);
  EXPECT_TRUE(c["items_planned"].is_null());
  EXPECT_TRUE(c["draws_planned"].is_null());
  EXPECT_TRUE(has(c["planned_note"].get<std::string>(), "unknown"));
  EXPECT_EQ(c["items_without_pairs"], 1);
  EXPECT_EQ(icu["unanimous_cells"], 16);  // the one-draw item is never counted unanimous

  const std::string md = slurp(d / "out/report.md");
  EXPECT_TRUE(has(md, "degenerate [0.000, 0.000]; Wilson [0.000, 0.023]")) << md;
  EXPECT_TRUE(has(md, "pairs within an item are not")) << md;
  EXPECT_TRUE(has(md, "items 16/? · draws 81/?")) << md;
}

}  // namespace
}  // namespace nf

namespace nf {
namespace {

// Fairness floors report coverage too; a run store knows its plan (items x replicates).
TEST(HonestIntervals, FairnessFloorsReportCoverageAgainstThePlan) {
  TempDir d;
  CmdResult r = run_cli("audit " + std::string(NF_SOURCE_DIR) + "/examples/sample-agent-audit.yaml --quiet --out " +
                            d / "out" + " --store " + d / "s.sqlite",
                        d.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = results(d / "out");
  const auto& pooled = floor_of(j["analyses"]["fairness"]["rows"][0]["floors"], "pooled");
  const auto& c = pooled["coverage"];
  EXPECT_EQ(c["items_planned"], 3);   // data/sample-vignettes.json: 3 vignettes
  EXPECT_EQ(c["draws_planned"], 12);  // x 4 replicates
  EXPECT_EQ(c["items_contributing"], 3);
  EXPECT_EQ(c["valid_draws"], 12);
  EXPECT_EQ(pooled["clusters"], 3);
  EXPECT_EQ(pooled["few_clusters"], true);
  EXPECT_TRUE(has(slurp(d / "out/report.md"), "items 3/3 · draws 12/12"));
}

}  // namespace
}  // namespace nf
