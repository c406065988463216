// Issue 12 item 6: MCQ accuracy says which replicate it uses and gives the all-replicate rate.
#include <gtest/gtest.h>

#include "metrics/mcq_robustness.h"

namespace nf {
namespace {

TEST(McqRobustness, AccuracyNamesItsReplicateAndGivesTheAllReplicateRate) {
  // Item a: replicate 0 right, 1 right, 2 wrong; item b: 0 wrong, 1 right, 2 right.
  // Replicate 0: 1/2 = 0.5; all replicates: 4/6.
  std::vector<OutcomeRow> rows;
  auto add = [&](const std::string& item, int rep, double v) {
    rows.push_back({"s", "c", "none", item, item, rep, "correct", v, ""});
  };
  add("a", 0, 1);
  add("a", 1, 1);
  add("a", 2, 0);
  add("b", 0, 0);
  add("b", 1, 1);
  add("b", 2, 1);
  auto r = compute_mcq_robustness(rows);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->size(), 1u);
  const auto j = mcq_robustness_row_to_json((*r)[0]);
  EXPECT_EQ(j["metric"], "accuracy_none");
  EXPECT_EQ(j["replicate"], 0);
  EXPECT_EQ(j["x"], 1);
  EXPECT_EQ(j["n"], 2);
  EXPECT_EQ(j["all_replicates"]["x"], 4);
  EXPECT_EQ(j["all_replicates"]["n"], 6);
  EXPECT_NEAR(j["all_replicates"]["rate"].get<double>(), 4.0 / 6.0, 1e-12);
}

}  // namespace
}  // namespace nf
