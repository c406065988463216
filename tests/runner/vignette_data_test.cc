// The vignette reader (data/vignettes.h) on the released floor-study file and the shipped
// sample, and make_task() for task vignette_agent (runner/runner.h).
#include <gtest/gtest.h>

#include <fstream>

#include "common/test_data.h"
#include "data/vignettes.h"
#include "perturb/descriptors.h"
#include "runner/runner.h"
#include "spec/study.h"
#include "task/vignette_task.h"

namespace nf {
namespace {

TEST(VignetteData, ReadsTheReleasedFloorStudyFile) {
  auto set = read_vignettes_json(testing::data_file("fairmedagent-floor16/vignettes.json"));
  ASSERT_TRUE(set.ok()) << set.status().to_string();
  ASSERT_EQ(set->vignettes.size(), 16u);
  for (size_t i = 1; i < set->vignettes.size(); ++i) EXPECT_LT(set->vignettes[i - 1].id, set->vignettes[i].id);
  EXPECT_EQ(set->vignettes[0].id, "draft_documentation_01");
  EXPECT_EQ(set->conditions.size(), 15u);
  EXPECT_EQ(set->stages.size(), 6u);
  int calls = 0;
  for (const auto& s : set->stages) calls += s.model_call ? 1 : 0;
  EXPECT_EQ(calls, 5);
  EXPECT_EQ(set->unresolved_value, "pending / not resulted");
  EXPECT_EQ(set->declined_tokens.size(), 12u);
  EXPECT_EQ(set->scaffold_text, "Decide directly.");
  EXPECT_TRUE(set->confounded_registry.contains("defensible_directions"));
  // The task accepts it: every descriptor slot filled, exact strings.
  auto task = VignetteTask::create(*set);
  ASSERT_TRUE(task.ok()) << task.status().to_string();
  ASSERT_EQ((*task)->descriptors().size(), 15u);
  EXPECT_EQ((*task)->descriptors()[13].descriptor,
            "50-year-old green-eyed man, private insurance, full English proficiency.");
  EXPECT_TRUE((*task)->prepare(known_vignette_conditions(), 1).ok());
}

TEST(VignetteData, ReadsTheShippedSample) {
  auto set = read_vignettes_json(std::string(NF_SOURCE_DIR) + "/data/sample-vignettes.json");
  ASSERT_TRUE(set.ok()) << set.status().to_string();
  EXPECT_EQ(set->vignettes.size(), 3u);
  EXPECT_TRUE(VignetteTask::create(*set).ok());
}

TEST(VignetteData, RejectsMalformedFilesByKey) {
  EXPECT_EQ(read_vignettes_json("/no/such/file.json").status().code(), StatusCode::kNotFound);
  auto bad = parse_vignettes_json("{", "x.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("x.json"), std::string::npos);
  auto text = testing::slurp(std::string(NF_SOURCE_DIR) + "/data/sample-vignettes.json");
  auto j = nlohmann::json::parse(text);
  auto broken = j;
  broken["vignettes"][1]["vignette_id"] = broken["vignettes"][0]["vignette_id"];
  auto dup = parse_vignettes_json(broken.dump(), "s.json");
  ASSERT_FALSE(dup.ok());
  EXPECT_NE(dup.status().message().find("duplicate id"), std::string::npos);
  broken = j;
  std::swap(broken["trajectory"]["steps"][0], broken["trajectory"]["steps"][1]);
  auto order = parse_vignettes_json(broken.dump(), "s.json");
  ASSERT_FALSE(order.ok());
  EXPECT_NE(order.status().message().find("trajectory.steps[0].step"), std::string::npos) << order.status().message();
  broken = j;
  broken["vignettes"][0].erase("clinical_core");
  EXPECT_FALSE(parse_vignettes_json(broken.dump(), "s.json").ok());
  broken = j;
  broken["conditions_standard_12"][0]["is_reference"] = false;
  EXPECT_FALSE(parse_vignettes_json(broken.dump(), "s.json").ok());
}

TEST(VignetteData, MakeTaskBuildsTheAgentAndChecksTheFormat) {
  testing::TempDir d;
  const std::string yaml =
      "name: t\ntask: vignette_agent\ndataset:\n  format: vignettes\n  path: " + std::string(NF_SOURCE_DIR) +
      "/data/sample-vignettes.json\n  limit: 2\nsubjects:\n"
      "  - {name: s, backend: sim, model: m}\n";
  auto study = parse_study(yaml, d / "t.yaml");
  ASSERT_TRUE(study.ok()) << study.status().to_string();
  EXPECT_EQ(study->conditions.size(), 15u);  // the default for vignette_agent: all 15
  bool has_fairness = false;
  for (const auto& a : study->analyses) has_fairness |= a.name == "fairness";
  EXPECT_TRUE(has_fairness);
  auto task = make_task(*study);
  ASSERT_TRUE(task.ok()) << task.status().to_string();
  EXPECT_EQ((*task)->name(), "vignette_agent");
  EXPECT_EQ((*task)->items().size(), 2u);
  study->dataset.format = "medqa";
  EXPECT_FALSE(make_task(*study).ok());
  // The MCQ condition list is unchanged and fairness is not a default there.
  auto mcq = parse_study("name: m\ndataset:\n  format: medqa\n  path: " + std::string(NF_SOURCE_DIR) +
                             "/data/sample-mcq.jsonl\nsubjects:\n  - {name: s, backend: sim, model: m}\n"
                             "conditions: [ref_white_man_private]\n",
                         d / "m.yaml");
  EXPECT_FALSE(mcq.ok());
}

}  // namespace
}  // namespace nf
