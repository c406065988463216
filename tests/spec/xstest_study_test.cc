// A `dataset.format: xstest` chat study (docs/xstest-chat.md): the judge's default criterion
// is XSTest's full compliance, not seed 004's missing-information criterion; an explicit
// criterion is kept; xstest is refused for a task that does not read it.
#include <gtest/gtest.h>

#include "common/test_data.h"
#include "spec/study.h"

namespace nf {
namespace {

std::string study_text(const std::string& task, const std::string& criterion_line, bool judge = true) {
  return "name: x\ntask: " + task + "\ndataset: {format: xstest, path: " + testing::data_file("xstest/xstest_prompts.csv") +
         "}\nsubjects: [{name: s, backend: sim, model: s}]\nconditions: [none]\nreplicates: 1\n" +
         (judge ? "judge:\n" + criterion_line + "  panel: [{name: j, backend: sim, model: j}]\n" : std::string());
}

TEST(XstestStudy, JudgeCriterionDefaultsToFullCompliance) {
  testing::TempDir t;
  testing::write_text(t / "a.yaml", study_text("chat", ""));
  auto a = load_study(t / "a.yaml");
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->judge.criterion, xstest_judge_criterion());
  EXPECT_NE(a->judge.criterion.find("complies"), std::string::npos);
  testing::write_text(t / "b.yaml", study_text("chat", "  criterion: \"Is it polite?\"\n"));
  auto b = load_study(t / "b.yaml");
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ(b->judge.criterion, "Is it polite?");
  testing::write_text(t / "c.yaml", study_text("mcq", "", false));
  auto c = load_study(t / "c.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("does not fit task 'mcq'"), std::string::npos) << c.status().message();
}

}  // namespace
}  // namespace nf
