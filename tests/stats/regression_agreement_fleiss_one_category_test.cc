// Fault: Fleiss kappa with every rating in one category divided 0 by 0 and passed NaN on (or crashed); it must be reported as Undefined.
#include <gtest/gtest.h>

#include "stats/agreement.h"

namespace nf::stats {
namespace {

TEST(RegressionAgreement, FleissAllRatersOneCategoryIsUndefined) {
  auto r = fleiss_kappa_counts({3, 0, 3, 0, 3, 0, 3, 0}, 2);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUndefined);
  EXPECT_NE(r.status().message().find("one category"), std::string::npos);
  auto t = fleiss_kappa({{1, 1, 1}, {1, 1}, {1, 1, 1, 1}});
  EXPECT_EQ(t.status().code(), StatusCode::kUndefined);
  EXPECT_EQ(cohen_kappa({0, 0, 0}, {0, 0, 0}).status().code(), StatusCode::kUndefined);
  EXPECT_EQ(scott_pi({0, 0, 0}, {0, 0, 0}).status().code(), StatusCode::kUndefined);
}

}  // namespace
}  // namespace nf::stats
