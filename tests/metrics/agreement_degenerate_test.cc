// A unanimous kappa is flagged degenerate, with its cluster count (issue 12 item 4).
#include <gtest/gtest.h>

#include "metrics/judge_panel.h"

namespace nf {
namespace {

JudgmentRow vote(const std::string& subject, const std::string& sp, const std::string& item,
                 const std::string& judge, const std::string& jp, int label) {
  JudgmentRow r;
  r.subject = subject;
  r.subject_provider = sp;
  r.item = item;
  r.cluster = item;
  r.judge = judge;
  r.judge_provider = jp;
  r.label = label;
  r.status = "ok";
  return r;
}

TEST(AgreementIntervals, PerfectAgreementKappaIsDegenerateWithClusterCount) {
  // Two judges agree on every answer of two subjects over 12 prompts (labels mixed): Fleiss
  // kappa 1, and every resample with both labels gives 1 as well.
  std::vector<JudgmentRow> rows;
  for (int i = 0; i < 12; ++i)
    for (const auto& [s, sp] : {std::pair<std::string, std::string>{"m1", "pa"}, {"m2", "pb"}})
      for (const auto& [j, jp] : {std::pair<std::string, std::string>{"ja", "pa"}, {"jb", "pb"}})
        rows.push_back(vote(s, sp, "q" + std::to_string(i), j, jp, (i + (s == "m1" ? 0 : 1)) % 2));
  auto panel = build_panel(rows);
  ASSERT_TRUE(panel.ok()) << panel.status().message();
  JudgePanelOptions o;
  o.bootstrap = {200, 3, 0.95};
  auto r = judge_panel_analysis(*panel, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const auto& f = (*r)["fleiss"];
  EXPECT_DOUBLE_EQ(f["kappa"].get<double>(), 1.0);
  EXPECT_EQ(f["degenerate"], true) << f.dump();
  EXPECT_TRUE(f.contains("degenerate_note"));
  EXPECT_EQ(f["clusters"], 12);
  EXPECT_EQ(f["few_clusters"], true);
}

}  // namespace
}  // namespace nf
