// report.html (report/html.h) and its figures (report/figures.h) as pure functions of results.json:
// the same sections as report.md, every figure placed, nothing fetched from the network, the
// tables-only note when Vega is missing, flagged intervals marked, a generic figure for any
// analysis whose rows carry an estimate and an interval.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

#include <nlohmann/json.hpp>

#include "common/test_data.h"
#include "report/figures.h"
#include "report/html.h"
#include "report/markdown.h"
#include "report/summary.h"

namespace nf {
namespace {

using nlohmann::json;

json results() {
  json r;
  r["study"] = {{"name", "t"}};
  r["draws"]["rows"] = json::array();
  json rows = json::array();
  for (const char* cond : {"none", "shuffle"})
    for (const char* outcome : {"choice", "pooled"})
      rows.push_back({{"subject", "s"}, {"config", "c"}, {"condition", cond}, {"outcome", outcome},
                      {"discordant", 0}, {"comparisons", 160}, {"rate", 0.0}, {"ci_low", 0.0}, {"ci_high", 0.0},
                      {"degenerate", true}, {"exact_interval", {{"method", "Wilson"}, {"lo", 0.0}, {"hi", 0.023}}},
                      {"clusters", 16}, {"few_clusters", true}});
  r["analyses"]["floor"] = {{"source", "seed 000"}, {"rows", rows}};
  // An analysis no renderer knows: the generic forest plot draws it; the HTML appends it.
  r["analyses"]["rerun_metrics"]["rows"] = {
      {{"arm", "a"}, {"metric", "divergence"}, {"estimate", 0.2}, {"low", 0.1}, {"high", 0.3}},
      {{"arm", "b"}, {"metric", "divergence"}, {"estimate", 0.4}, {"low", 0.3}, {"high", 0.5}}};
  return r;
}

TEST(ReportFigures, FlaggedRowsAreMarkedWithTheirExactInterval) {
  const json figs = build_figures(results());
  ASSERT_GE(figs.size(), 2u);
  const json& floor = figs[0];
  EXPECT_EQ(floor["analysis"], "floor");
  const json& values = floor["spec"]["data"][0]["values"];
  ASSERT_EQ(values.size(), 4u);
  EXPECT_EQ(values[0]["mark"], "degenerate interval (every resample equal)");
  EXPECT_DOUBLE_EQ(values[0]["xhi"].get<double>(), 0.023);
  EXPECT_NE(values[0]["tip"].get<std::string>().find("Wilson [0.000, 0.023]"), std::string::npos);
  EXPECT_NE(values[0]["tip"].get<std::string>().find("only 16 clusters"), std::string::npos);
}

TEST(ReportFigures, GenericForestForAnyAnalysisWithEstimateAndInterval) {
  const json figs = build_figures(results());
  const json* generic = nullptr;
  for (const auto& f : figs)
    if (f["analysis"] == "rerun_metrics") generic = &f;
  ASSERT_NE(generic, nullptr);
  const json& v = (*generic)["spec"]["data"][0]["values"];
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[1]["label"], "b");  // "divergence" is common to every row: the subtitle says it once
  EXPECT_EQ(v[1]["full_label"], "b · divergence");
  EXPECT_EQ((*generic)["spec"]["title"]["subtitle"], "every row: metric divergence");
  EXPECT_DOUBLE_EQ(v[1]["est"].get<double>(), 0.4);
  EXPECT_DOUBLE_EQ(v[1]["lo"].get<double>(), 0.3);
  EXPECT_DOUBLE_EQ(v[1]["hi"].get<double>(), 0.5);
}

// Results from an older or newer tool (missing fields, odd types) give fewer figures and summary
// lines, never an exception.
TEST(ReportFigures, OddShapesAreSkippedNotThrown) {
  const json odd = json::parse(R"({"analyses": {"foo": 3, "floor": {"rows": [{"subject": 1}, 7]},
    "fairness": {"rows": [{"flips": [{"flip_rate": "x"}, {"flip_rate": 0.1}], "floors": [{"action": 2}]}]},
    "human_validity": {"pairs": [{"a": "G"}], "aggregation": [{"rule": "r"}], "judge_minus_rater": [{}]},
    "mcq_robustness": {"rows": [{"metric": "accuracy_none"}]}}})");
  EXPECT_NO_THROW(build_figures(odd));
  EXPECT_NO_THROW(headline(odd));
}

TEST(ReportHtml, SameSectionsAsMarkdownEveryFigurePlacedNothingFetched) {
  const json r = results();
  const std::string md = render_markdown(r);
  const std::string html = render_html(r, "var nfVega = {};");
  std::regex h2("\n## ([^\n]+)");
  size_t sections = 0;
  for (auto it = std::sregex_iterator(md.begin(), md.end(), h2); it != std::sregex_iterator(); ++it, ++sections)
    EXPECT_NE(html.find("<h2>" + (*it)[1].str() + "</h2>"), std::string::npos) << (*it)[1].str();
  EXPECT_GE(sections, 3u);  // Summary, Draws, Instability floor
  EXPECT_EQ(html.find("@@NF-FIGURE"), std::string::npos);
  for (const auto& f : build_figures(r))
    EXPECT_NE(html.find("id=\"nf-fig-" + f["id"].get<std::string>() + "\""), std::string::npos) << f["id"];
  EXPECT_NE(html.find("<h2>More figures</h2>"), std::string::npos);  // rerun_metrics has no section yet
  // Self-contained: no script, stylesheet or image is loaded from anywhere.
  EXPECT_FALSE(std::regex_search(html, std::regex("(src|href)=\"(https?:)?//")));
  EXPECT_NE(html.find("data-nf-status=\"loading\""), std::string::npos);
  EXPECT_EQ(html.find("Tables only"), std::string::npos);
}

TEST(ReportHtml, UserStringsAreEscaped) {
  json r = results();
  r["analyses"]["floor"]["rows"][0]["condition"] = "<script>alert(1)</script>";
  const std::string html = render_html(r, "var nfVega = {};");
  EXPECT_EQ(html.find("<script>alert(1)"), std::string::npos);
}

TEST(ReportHtml, MissingVegaWritesTablesOnlyWithAVisibleNote) {
  testing::TempDir tmp;
  ASSERT_TRUE(write_html_report(tmp.path(), results(), tmp / "no-vega-here").ok());
  const std::string html = testing::slurp(tmp / "report.html");
  EXPECT_NE(html.find("class=\"nf-note\"><b>Tables only:</b>"), std::string::npos);
  EXPECT_NE(html.find(tmp / "no-vega-here/vega-util.min.js"), std::string::npos);
  EXPECT_EQ(html.find("var nfVega=(function"), std::string::npos);
  const json figs = json::parse(testing::slurp(tmp / "figures.json"));
  EXPECT_EQ(figs["schema"], "noisefloor.figures/1");
  EXPECT_EQ(figs["figures"].size(), build_figures(results()).size());
}

TEST(ReportHtml, VegaBundleFromDebian) {
  if (!std::filesystem::exists(default_vega_dir() + "/vega-view.min.js"))
    GTEST_SKIP() << "libjs-vega not installed (scripts/install-deps)";
  auto js = load_vega_bundle(default_vega_dir());
  ASSERT_TRUE(js.ok()) << js.status().message();
  EXPECT_EQ(js->rfind("/* Vega 5", 0), 0u);
  EXPECT_EQ(js->find("sourceMappingURL"), std::string::npos);
  EXPECT_LT(js->size(), 700u * 1000);
}

}  // namespace
}  // namespace nf
