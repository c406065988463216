// Every analysis that the data cannot support says so the same way (issue 32 item 1): its
// heading, then "Skipped: <reason>", in report.md and report.html, never a heading over an
// empty table, a table of zeros, or nothing at all; and every registered analysis has a
// report section (bbq_bias had none: its results vanished from report.md). The judge
// figure's title follows the judge criterion (issue 32 item 2).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include <nlohmann/json.hpp>

#include "metrics/registry.h"
#include "report/figures.h"
#include "report/html.h"
#include "report/markdown.h"

namespace nf {
namespace {

using nlohmann::json;

json base_results() {
  json r;
  r["study"] = {{"name", "t"}};
  r["draws"]["rows"] = json::array();
  r["analyses"] = json::object();
  return r;
}

// The text of report.md from `heading` to the next "## " heading or the closing "---" rule
// (the newline before either is the section's).
std::string section_of(const std::string& md, const std::string& heading) {
  const size_t at = md.find(heading + "\n");
  if (at == std::string::npos) return "";
  const size_t next = std::min(md.find("\n## ", at + heading.size()), md.find("\n---\n", at + heading.size()));
  return md.substr(at, next == std::string::npos ? std::string::npos : next + 1 - at);
}

TEST(ReportSkipped, EveryRegisteredAnalysisHasASection) {
  for (const auto& name : analysis_names())
    EXPECT_TRUE(std::any_of(report_sections().begin(), report_sections().end(),
                            [&](const ReportSection& s) { return name == s.analysis; }))
        << name << " is registered but report.md has no section for it";
}

TEST(ReportSkipped, EverySkippedSectionSaysWhyTheSameWay) {
  for (const auto& sec : report_sections()) {
    SCOPED_TRACE(sec.analysis);
    json r = base_results();
    // What run_analysis leaves for an analysis with nothing to read: the analysis's own keys
    // (an empty rows array) beside `skipped`.
    r["analyses"][sec.analysis] = {{"method", "m"}, {"source", "s"}, {"rows", json::array()},
                                   {"arms", json::array()}, {"skipped", "nothing to analyse: the store holds no X"}};
    std::string md;
    ASSERT_NO_THROW(md = render_markdown(r));
    const std::string body = section_of(md, sec.heading);
    ASSERT_FALSE(body.empty()) << md;
    EXPECT_EQ(body, std::string(sec.heading) + "\n\nSkipped: nothing to analyse: the store holds no X\n\n") << body;
    const std::string html = render_html(r, "");
    EXPECT_NE(html.find("<p>Skipped: nothing to analyse: the store holds no X</p>"), std::string::npos);
  }
}

TEST(ReportSkipped, AnAnalysisWithoutARendererIsNamedNotDropped) {
  json r = base_results();
  r["analyses"]["new_metric"] = {{"rows", json::array({{{"x", 1}}})}};
  r["analyses"]["other_metric"] = {{"skipped", "needs Y"}};
  const std::string md = render_markdown(r);
  EXPECT_NE(md.find("## new_metric\n\nThis report has no section for this analysis; its results are in results.json "
                    "(analyses.new_metric)."),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("## other_metric\n\nSkipped: needs Y\n"), std::string::npos) << md;
}

TEST(ReportSkipped, BbqBiasRowsAreATable) {
  json r = base_results();
  r["analyses"]["bbq_bias"] = {
      {"source", "Parrish et al. 2022"},
      {"rows",
       {{{"subject", "m"}, {"config", "c"}, {"condition", "none"}, {"context_condition", "disambig"}, {"items", 4},
         {"answered", 4}, {"correct", 3}, {"non_unknown", 4}, {"biased", 3}, {"accuracy", 0.75}, {"score", 0.5}}}}};
  const std::string body = section_of(render_markdown(r), "## BBQ bias score");
  EXPECT_NE(body.find("| m | c | none | disambig | 4 | 4 | 3 | 4 | 3 | 0.750 | 0.500 |"), std::string::npos) << body;
}

TEST(ReportFigures, JudgeFigureTitleFollowsTheCriterion) {
  json r = base_results();
  json rates = json::array();
  for (const char* j : {"j1", "j2"})
    rates.push_back({{"judge", j}, {"subject", "s"}, {"rate", 0.5}, {"low", 0.3}, {"high", 0.7}});
  r["analyses"]["judge_panel"] = {{"rates", rates}, {"rate_label", "full-compliance rate"}};
  bool seen = false;
  for (const auto& f : build_figures(r))
    if (f["id"] == "judge_panel-rates") {
      seen = true;
      EXPECT_EQ(f["title"], "Full-compliance rate by judge and subject");
      EXPECT_EQ(f["spec"]["title"]["text"], "Full-compliance rate by judge and subject");
    }
  EXPECT_TRUE(seen);
  r["analyses"]["judge_panel"].erase("rate_label");  // an older results.json: the default criterion's words
  for (const auto& f : build_figures(r)) {
    if (f["id"] == "judge_panel-rates") {
      EXPECT_EQ(f["title"], "Appropriate-response rate by judge and subject");
    }
  }
}

}  // namespace
}  // namespace nf
