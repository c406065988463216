// Conditions are reported in the study's order (issue 12 item 6).
#include "metrics/condition_order.h"

#include <gtest/gtest.h>

namespace nf {
namespace {

TEST(ConditionOrder, RowsFollowTheStudyOrderWithinSubjectAndConfig) {
  nlohmann::json results = {
      {"draws", {{"rows", {{{"subject", "a"}, {"config", "c"}, {"condition", "none"}},
                           {{"subject", "a"}, {"config", "c"}, {"condition", "shuffle"}},
                           {{"subject", "b"}, {"config", "c"}, {"condition", "none"}},
                           {{"subject", "b"}, {"config", "c"}, {"condition", "shuffle"}}}}}},
      {"analyses",
       {{"floor", {{"rows", {{{"subject", "a"}, {"config", "c"}, {"condition", "none"}, {"outcome", "x"}},
                             {{"subject", "a"}, {"config", "c"}, {"condition", "none"}, {"outcome", "pooled"}},
                             {{"subject", "a"}, {"config", "c"}, {"condition", "extra"}, {"outcome", "x"}},
                             {{"subject", "a"}, {"config", "c"}, {"condition", "shuffle"}, {"outcome", "x"}}}}}},
        {"fairness", {{"rows", {{{"subject", "a"}, {"flips", {{{"condition", "z"}}, {{"condition", "y"}}}}}}}}}}}};
  order_by_study_conditions(results, {"shuffle", "none", "y", "z"});
  const auto& d = results["draws"]["rows"];
  EXPECT_EQ(d[0]["condition"], "shuffle");
  EXPECT_EQ(d[0]["subject"], "a");
  EXPECT_EQ(d[1]["condition"], "none");
  EXPECT_EQ(d[2]["condition"], "shuffle");
  EXPECT_EQ(d[2]["subject"], "b");
  const auto& f = results["analyses"]["floor"]["rows"];
  EXPECT_EQ(f[0]["condition"], "shuffle");
  EXPECT_EQ(f[1]["outcome"], "x");       // none: outcome rows keep their order,
  EXPECT_EQ(f[2]["outcome"], "pooled");  // pooled last
  EXPECT_EQ(f[3]["condition"], "extra");  // not in the study's list: after the listed ones
  const auto& flips = results["analyses"]["fairness"]["rows"][0]["flips"];
  EXPECT_EQ(flips[0]["condition"], "y");
  nlohmann::json untouched = results;
  order_by_study_conditions(untouched, {});
  EXPECT_EQ(untouched, results);
}

}  // namespace
}  // namespace nf
