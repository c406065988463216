// RunOptions::next_keys (a worker's source of claimed batches, runner/worker.h): run_study
// prepares once and runs batch after batch until an empty one; the draws equal those of a
// run of the same keys; a key outside the plan and a failing source stop the run.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/test_data.h"
#include "runner/runner.h"
#include "spec/study.h"
#include "store/store.h"

namespace nf {
namespace {

Study feed_study(const testing::TempDir& d) {
  const std::string yaml = "name: feed\nseed: 7\ndataset:\n  format: medqa\n  path: " + std::string(NF_SOURCE_DIR) +
                           "/data/sample-mcq.jsonl\nsubjects:\n  - name: sim\n    backend: sim\n    model: sim-mcq-1\n"
                           "conditions: [none, shuffle]\nconfigs:\n  temperature: [0.7]\nreplicates: 2\n";
  auto study = parse_study(yaml, d / "s.yaml");
  EXPECT_TRUE(study.ok()) << study.status().message();
  return *study;
}

std::vector<DrawKey> plan_keys(const Study& study) {
  auto task = make_task(study);
  EXPECT_TRUE(task.ok());
  std::vector<DrawKey> keys;
  for (const auto& p : plan_draws(study, (*task)->items(), expand_configs(study.axes))) keys.push_back(p.key);
  return keys;
}

TEST(RunFeed, BatchesRunOnceEachAndEqualARunOfTheSameKeys) {
  testing::TempDir d;
  const Study study = feed_study(d);
  const std::vector<DrawKey> all = plan_keys(study);
  ASSERT_EQ(all.size(), 96u);
  // Three batches out of plan order, then the end.
  std::vector<std::vector<DrawKey>> batches = {{all.begin() + 50, all.begin() + 60},
                                               {all.begin(), all.begin() + 20},
                                               {all.begin() + 90, all.end()}};
  size_t calls = 0;
  RunOptions ro;
  ro.progress = false;
  ro.threads = 3;
  ro.next_keys = [&]() -> Result<std::vector<DrawKey>> {
    return calls < batches.size() ? batches[calls++] : std::vector<DrawKey>();
  };
  auto fed = Store::open(d / "fed.sqlite");
  ASSERT_TRUE(fed.ok());
  auto sum = run_study(study, **fed, ro);
  ASSERT_TRUE(sum.ok()) << sum.status().message();
  EXPECT_EQ(calls, 3u);
  EXPECT_EQ(sum->executed, 36);
  EXPECT_FALSE(sum->interrupted);
  EXPECT_EQ(*(*fed)->draw_count(), 36);

  std::vector<DrawKey> want;
  for (const auto& b : batches) want.insert(want.end(), b.begin(), b.end());
  RunOptions plain;
  plain.progress = false;
  plain.keys = &want;
  auto ref = Store::open(d / "ref.sqlite");
  ASSERT_TRUE(ref.ok());
  ASSERT_TRUE(run_study(study, **ref, plain).ok());
  for (const auto& k : want) {
    auto a = (*fed)->get_draw(k), b = (*ref)->get_draw(k);
    ASSERT_TRUE(a.ok() && b.ok()) << k.to_string();
    EXPECT_EQ(a->content, b->content) << k.to_string();
    EXPECT_EQ(a->request, b->request) << k.to_string();
    ASSERT_EQ(a->outcomes.size(), b->outcomes.size());
    for (size_t i = 0; i < a->outcomes.size(); ++i) EXPECT_EQ(a->outcomes[i].value, b->outcomes[i].value);
  }
}

TEST(RunFeed, AKeyOutsideThePlanOrAFailingSourceStopsTheRun) {
  testing::TempDir d;
  const Study study = feed_study(d);
  auto store = Store::open(d / "s.sqlite");
  ASSERT_TRUE(store.ok());
  RunOptions ro;
  ro.progress = false;
  ro.next_keys = []() -> Result<std::vector<DrawKey>> {
    return std::vector<DrawKey>{{"sim", "no-such-item", "none", "temperature=0.7", 0}};
  };
  auto sum = run_study(study, **store, ro);
  ASSERT_FALSE(sum.ok());
  EXPECT_EQ(sum.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(sum.status().message().find("is not in this study's plan"), std::string::npos) << sum.status().message();
  ro.next_keys = []() -> Result<std::vector<DrawKey>> { return Unavailable("claim failed"); };
  sum = run_study(study, **store, ro);
  ASSERT_FALSE(sum.ok());
  EXPECT_EQ(sum.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(*(*store)->draw_count(), 0);
}

}  // namespace
}  // namespace nf
