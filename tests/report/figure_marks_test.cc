// Every figure says what it draws (tester s9 finding 21): distinct legend and axis labels short
// enough to be drawn whole; an interval or an explicit no-interval mark for every point, the
// interval the table gives (the rerun's group bootstrap, the envelope's bootstrap range); a
// legend entry and a caption sentence for every mark used; captions that match the page; wide
// tables that scroll in their own box.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "common/figure_checks.h"
#include "report/figure_labels.h"
#include "report/figures.h"
#include "report/html.h"
#include "report/markdown.h"

namespace nf {
namespace {

using nlohmann::json;
using testing::check_figure;

json interval_row(const char* subject, const char* config, const char* condition, const char* outcome, double rate,
                  bool degenerate, bool few) {
  json r = {{"subject", subject}, {"config", config}, {"condition", condition}, {"outcome", outcome},
            {"rate", rate}, {"ci_low", degenerate ? rate : rate - 0.05}, {"ci_high", degenerate ? rate : rate + 0.05},
            {"degenerate", degenerate}, {"clusters", few ? 6 : 100}, {"few_clusters", few}};
  if (degenerate) r["exact_interval"] = {{"method", "wilson"}, {"lo", 0.0}, {"hi", 0.0038}};
  return r;
}

// The shapes the tester's four reports had: the FHIR rerun, medqa-floor, envelope and a floor
// with few clusters.
json results() {
  json r;
  r["study"] = {{"name", "t"}};
  json floor = json::array(), majority = json::array();
  for (const char* t : {"temperature=0", "temperature=0.7"})
    for (const char* c : {"none", "shuffle", "remove_answer", "remove_context"}) {
      const bool zero = std::string(t) == "temperature=0";
      floor.push_back(interval_row("sim", t, c, "pooled", zero ? 0.0 : 0.4, zero, c == std::string("shuffle")));
      floor.push_back(interval_row("sim", t, c, "choice", zero ? 0.0 : 0.38, zero, false));
      json m = interval_row("sim", t, c, "pooled", zero ? 0.0 : 0.22, zero, false);
      m["vote_size"] = 3;
      majority.push_back(m);
    }
  r["analyses"]["floor"] = {{"rows", floor}};
  r["analyses"]["majority_floor"] = {{"rows", majority}};
  json arms = json::array();
  for (const char* t : {"temperature=0.05", "temperature=0.7"})
    arms.push_back(
        {{"subject", "sim-fhir-agent"},
         {"config", t},
         {"metrics",
          {{"order_set_divergence",
            {{"count", 4}, {"n", 26}, {"rate", 0.154}, {"low", 0.062}, {"high", 0.335}, {"denominator", "ordering groups"}}},
           {"pairwise_order_set_disagreement",
            {{"rate", 0.0615}, {"pairs", 260}, {"pairs_differing", 16},
             {"group_bootstrap", {{"low", 0.015}, {"high", 0.123}, {"unit", "group"}}}}}}}});
  r["analyses"]["rerun"] = {{"bootstrap", {{"level", 0.95}}}, {"arms", arms}};
  json cells = json::array();
  for (const char* t : {"0", "0.7"})
    for (const char* k : {"0", "3"})
      for (const char* p : {"free_form", "logprob"})
        cells.push_back({{"config", std::string("temperature=") + t + ",fewshot=" + k + ",template=default,scoring_path=" + p},
                         {"score", 0.9}, {"n", 200}, {"parse_rate", 1.0},
                         {"neighbourhood", {{"min", 0.375}, {"max", 0.91}, {"n", 4}}}});
  r["analyses"]["envelope"] = {
      {"pairs", {{{"a", "sim-a"}, {"b", "sim-b"}, {"rho_flip", 0.5}, {"no_strict_reversal", false}}}},
      {"bootstrap", {{"level", 0.95}, {"metrics", {{"sim-a|sim-b.rho_flip", {{"low", 0.167}, {"high", 0.5}}}}}}},
      {"subjects", {{{"subject", "sim-a"}, {"cells", cells}}, {{"subject", "sim-b"}, {"cells", cells}}}}};
  r["analyses"]["mcq_robustness"]["rows"] = {
      {{"subject", "sim"}, {"config", "temperature=0"}, {"metric", "accuracy_none"}, {"rate", 0.26}, {"ci_low", 0.18},
       {"ci_high", 0.35}},
      {{"subject", "sim"}, {"config", "temperature=0"}, {"metric", "shuffle_mcnemar"}, {"rate", 0.01}}};
  return r;
}

const json& figure_by_id(const json& figs, const std::string& id) {
  for (const auto& f : figs)
    if (f["id"] == id) return f;
  static const json none;
  ADD_FAILURE() << "no figure " << id;
  return none;
}

TEST(ReportFigureMarks, EveryFigureLabelsIntervalsAndMarksExplained) {
  const json figs = build_figures(results());
  int checked = 0;
  for (const auto& f : figs) {
    check_figure(f);
    ++checked;
  }
  EXPECT_EQ(checked, 6);  // floor, majority, mcq, rerun, rho_flip, scores
}

TEST(ReportFigureMarks, RerunDrawsTheGroupBootstrapAndTellsTheArmsApart) {
  const json figs = build_figures(results());
  const json& f = figure_by_id(figs, "rerun-metrics");
  std::set<std::string> groups;
  for (const auto& r : f["spec"]["data"][0]["values"]) {
    groups.insert(r["group"].get<std::string>());
    if (r["full_label"].get<std::string>().rfind("pairwise_order_set_disagreement", 0) == 0) {
      EXPECT_DOUBLE_EQ(r["lo"].get<double>(), 0.015);
      EXPECT_DOUBLE_EQ(r["hi"].get<double>(), 0.123);
      EXPECT_EQ(r["ci"], "95% group-cluster bootstrap");
    } else {
      EXPECT_EQ(r["ci"], "Wilson 95%");
    }
  }
  EXPECT_EQ(groups, (std::set<std::string>{"temperature=0.05", "temperature=0.7"}));
  EXPECT_EQ(f["spec"]["title"]["subtitle"], "rows: metric · temperature; every row: subject sim-fhir-agent");
}

TEST(ReportFigureMarks, MajorityVoteSeriesAreEightDistinctLegendEntries) {
  const json figs = build_figures(results());
  const json& f = figure_by_id(figs, "majority-floor-curve");
  std::set<std::string> series;
  for (const auto& r : f["spec"]["data"][0]["values"]) series.insert(r["series"].get<std::string>());
  EXPECT_EQ(series.size(), 8u);
  EXPECT_TRUE(series.count("temperature=0.7 · remove_answer"));
  EXPECT_TRUE(series.count("temperature=0.7 · remove_context"));
  EXPECT_EQ(f["spec"]["legends"][0]["title"], "temperature · condition");
}

TEST(ReportFigureMarks, EnvelopeRhoFlipDrawsItsBootstrapRange) {
  const json r = results();
  const json figs = build_figures(r);
  for (const auto& row : figure_by_id(figs, "envelope-rho-flip")["spec"]["data"][0]["values"]) {
    EXPECT_DOUBLE_EQ(row["lo"].get<double>(), 0.167);
    EXPECT_DOUBLE_EQ(row["hi"].get<double>(), 0.5);
  }
  const json& scores = figure_by_id(figs, "envelope-scores");
  for (const auto& row : scores["spec"]["data"][0]["values"]) EXPECT_EQ(row["mark"], "no interval: estimate only");
  // The caption names the table report.md has (tests/cli/report_figures_cli_test.cc checks it is there).
  const std::string caption = scores["caption"];
  EXPECT_NE(caption.find("\"Score per configuration\""), std::string::npos) << caption;
}

// Wide tables scroll inside their own box instead of widening the page.
TEST(ReportFigureMarks, EveryTableScrollsInItsOwnBox) {
  json r;
  r["study"] = {{"name", "t"}};
  r["draws"]["rows"] = json::array();
  json rows = json::array();
  for (const char* cond : {"none", "shuffle"})
    for (const char* outcome : {"choice", "pooled"})
      rows.push_back({{"subject", "s"}, {"config", "c"}, {"condition", cond}, {"outcome", outcome},
                      {"discordant", 3}, {"comparisons", 160}, {"rate", 3.0 / 160}, {"ci_low", 0.0}, {"ci_high", 0.05},
                      {"clusters", 16}, {"few_clusters", true}});
  r["analyses"]["floor"] = {{"source", "seed 000"}, {"rows", rows}};
  const std::string html = render_html(r, "var nfVega = {};");
  size_t tables = 0, boxed = 0;
  for (size_t at = html.find("<table>"); at != std::string::npos; at = html.find("<table>", at + 1)) {
    ++tables;
    const std::string box = "<div class=\"nf-table\">";
    boxed += at >= box.size() && html.compare(at - box.size(), box.size(), box) == 0;
  }
  EXPECT_GE(tables, 1u);
  EXPECT_EQ(boxed, tables);
  EXPECT_NE(html.find(".nf-table{overflow-x:auto;"), std::string::npos);
  EXPECT_NE(html.find("nf-scroll-note"), std::string::npos);
}

}  // namespace
}  // namespace nf
