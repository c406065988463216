// The sim's configuration-dependent skill (issue 11): an answer key lifts the gold option's
// logit by gold_logit plus the rules whose text occurs in the prompt; bad keys and rules
// are refused naming file, line and field.
#include <gtest/gtest.h>

#include <cmath>

#include "common/test_data.h"
#include "sim/sim.h"

namespace nf {
namespace {

const char* kKey =
    R"({"question": "Which is red?", "options": {"A": "sky", "B": "blood", "C": "grass"}, "answer_idx": "B"})"
    "\n";

TEST(SimGold, RuleLiftsTheGoldOptionOnlyWhenThePromptMatches) {
  testing::TempDir t;
  testing::write_text(t / "key.jsonl", kKey);
  auto p = SimParams::from_json({{"answer_key", t / "key.jsonl"},
                                 {"gold_logit", 1.0},
                                 {"gold_logit_when", {{{"contains", "step by step"}, {"add", 2.0}}}}});
  ASSERT_TRUE(p.ok()) << p.status().message();
  SimBackend sim(*p);
  SimBackend plain(SimParams{});
  const std::vector<std::string> opts{"sky", "blood", "grass"};
  const auto base = plain.option_logits("m", "Which is red?", opts);
  const auto off = sim.option_logits("m", "Which is red?", opts, "Answer now.");
  const auto on = sim.option_logits("m", "Which is red?", opts, "Think step by step.");
  EXPECT_DOUBLE_EQ(off[1] - base[1], 1.0);
  EXPECT_DOUBLE_EQ(on[1] - base[1], 3.0);
  EXPECT_DOUBLE_EQ(on[0], base[0]);
  EXPECT_DOUBLE_EQ(on[2], base[2]);
  // A stem the key does not know gets no bonus.
  EXPECT_EQ(sim.option_logits("m", "Other?", opts, "step by step"), plain.option_logits("m", "Other?", opts));
  // The params' hash (cache identity) changes with the skill; a plain sim's hash does not.
  EXPECT_NE(p->short_hash(), SimParams{}.short_hash());
  EXPECT_FALSE(SimParams{}.to_json().contains("gold_logit"));
}

TEST(SimGold, BadKeysAndRulesAreRefused) {
  testing::TempDir t;
  testing::write_text(t / "bad.jsonl", std::string(kKey) + R"({"question": "q", "options": {"A": "x"}, "answer_idx": "Z"})" "\n");
  auto r = SimParams::from_json({{"answer_key", t / "bad.jsonl"}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("bad.jsonl:2: answer_idx"), std::string::npos) << r.status().message();
  EXPECT_FALSE(SimParams::from_json({{"answer_key", t / "missing.jsonl"}}).ok());
  EXPECT_FALSE(SimParams::from_json({{"gold_logit_when", {{{"contains", "x"}}}}}).ok());
  EXPECT_FALSE(SimParams::from_json({{"gold_logit_when", {{{"contains", ""}, {"add", 1}}}}}).ok());
  EXPECT_FALSE(SimParams::from_json({{"gold_logit", "high"}}).ok());
}

}  // namespace
}  // namespace nf
