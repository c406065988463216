// configs.fewshot (issue 11; seed 003 §3): an axis of the configuration id like the others;
// bad values are refused naming the key.
#include <gtest/gtest.h>

#include "spec/study.h"

namespace nf {
namespace {

std::string study(const std::string& configs) {
  return "name: t\nseed: 1\ndataset:\n  format: medqa\n  path: " + std::string(NF_SOURCE_DIR) +
         "/data/sample-mcq.jsonl\n  limit: 2\nsubjects:\n  - name: s\n    backend: sim\n    model: m\nconfigs:\n" +
         configs + "replicates: 1\n";
}

TEST(FewshotAxis, ExpandsIntoConfigIds) {
  auto s = parse_study(study("  fewshot: [0, 3]\n  template: [default, step-by-step]\n"), "t.yaml");
  ASSERT_TRUE(s.ok()) << s.status().message();
  const auto c = expand_configs(s->axes);
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(c[0].id, "fewshot=0,template=default");
  EXPECT_EQ(c[3].id, "fewshot=3,template=step-by-step");
  EXPECT_EQ(c[3].fewshot, 3);
  EXPECT_EQ(c[3].to_json()["fewshot"], 3);
  EXPECT_FALSE(c[0].to_json().contains("fewshot"));  // k = 0: the config JSON is as before
}

TEST(FewshotAxis, BadValuesAreRefused) {
  auto neg = parse_study(study("  fewshot: [-1]\n"), "t.yaml");
  ASSERT_FALSE(neg.ok());
  EXPECT_NE(neg.status().message().find("configs.fewshot"), std::string::npos) << neg.status().message();
  EXPECT_FALSE(parse_study(study("  fewshot: [3, 3]\n"), "t.yaml").ok());
  EXPECT_FALSE(parse_study(study("  fewshot: [x]\n"), "t.yaml").ok());
}

}  // namespace
}  // namespace nf
