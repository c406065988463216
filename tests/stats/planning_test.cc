// Vignettes needed for N discordant pairs: the published values of seed 000 S2.
#include "stats/planning.h"

#include <gtest/gtest.h>

namespace nf::stats {
namespace {

TEST(Planning, ReproducesSeed000S2) {
  struct Case { double floor; int64_t want; };
  // pooled 16-vignette floor 374/4320 -> 289; cs_caution 129/720 -> 140; escalate_icu 16/720 -> 1,125.
  for (const Case& c : {Case{374.0 / 4320.0, 289}, Case{129.0 / 720.0, 140}, Case{16.0 / 720.0, 1125}}) {
    auto p = vignettes_needed(c.floor, 25);
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p->vignettes, c.want) << c.floor;
    EXPECT_DOUBLE_EQ(p->pairs_per_vignette, c.floor);
  }
}

TEST(Planning, MoreDrawsPerConditionNeedFewerVignettes) {
  auto one = vignettes_needed(0.1, 25, 1);
  auto two = vignettes_needed(0.1, 25, 2);
  ASSERT_TRUE(one.ok() && two.ok());
  EXPECT_EQ(one->vignettes, 250);
  EXPECT_EQ(two->vignettes, 63);  // 25 / 0.4 = 62.5
  EXPECT_FALSE(vignettes_needed(0.0, 25).ok());
  EXPECT_FALSE(vignettes_needed(1.5, 25).ok());
  EXPECT_FALSE(vignettes_needed(0.1, 0).ok());
  EXPECT_FALSE(vignettes_needed(0.1, 25, 0).ok());
}

}  // namespace
}  // namespace nf::stats
