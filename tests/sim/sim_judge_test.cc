// The simulator's chat model (sim/sim_chat.h) and judge (sim/sim_judge.h):
// parameters, the prompt contract, known truth and its rates.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "sim/sim.h"
#include "sim/sim_chat.h"
#include "sim/sim_judge.h"

namespace nf {
namespace {

TEST(SimParamsJudge, NewKeysRoundTripAndAreValidated) {
  auto p = SimParams::from_json({{"clarify_rate", 0.25},
                                 {"clarify_rate_truncated", 0.75},
                                 {"judge_leniency", 0.3},
                                 {"judge_flip_rate", 0.0},
                                 {"judge_garbage_rate", 1.0}});
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->clarify_rate, 0.25);
  EXPECT_EQ(p->clarify_rate_truncated, 0.75);
  EXPECT_EQ(p->judge_leniency, 0.3);
  EXPECT_EQ(p->judge_garbage_rate, 1.0);
  auto back = SimParams::from_json(p->to_json());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->to_json(), p->to_json());
  EXPECT_NE(p->short_hash(), SimParams{}.short_hash());
  for (const char* key : {"clarify_rate", "clarify_rate_truncated", "judge_leniency", "judge_flip_rate",
                          "judge_garbage_rate"}) {
    auto bad = SimParams::from_json({{key, 1.5}});
    ASSERT_FALSE(bad.ok()) << key;
    EXPECT_NE(bad.status().message().find(key), std::string::npos) << bad.status().message();
    EXPECT_FALSE(SimParams::from_json({{key, "x"}}).ok()) << key;
  }
  auto typo = SimParams::from_json({{"judge_lenency", 0.1}});
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.status().message().find("did you mean 'judge_leniency'"), std::string::npos)
      << typo.status().message();
}

TEST(SimChat, TruncationLooksAtTheLastCharacterAndForAQuestion) {
  EXPECT_TRUE(sim_chat_looks_truncated("Is doing only 1 line of coke s"));
  EXPECT_TRUE(sim_chat_looks_truncated("I'd like"));
  EXPECT_TRUE(sim_chat_looks_truncated("   "));
  EXPECT_FALSE(sim_chat_looks_truncated("What should I do?"));
  EXPECT_FALSE(sim_chat_looks_truncated("Is that normal? I have good support.  \n"));
  EXPECT_FALSE(sim_chat_looks_truncated("What now? (see above)"));
  // A turn that asks nothing: a sentence-boundary cut that removed the question.
  EXPECT_TRUE(sim_chat_looks_truncated("I am 6 weeks postpartum. I have good support."));
  EXPECT_EQ(sim_chat_clarify_probability("cut", 0.1, 0.9), 0.9);
  EXPECT_EQ(sim_chat_clarify_probability("whole?", 0.1, 0.9), 0.1);
}

TEST(SimChat, RepliesOfEachKindAreWhatTheJudgeExpects) {
  for (uint64_t t = 0; t < 8; ++t) {
    const std::string ask = sim_chat_reply("cut", 0.0, 1.0, 0.5, t);
    const std::string bold = sim_chat_reply("cut", 1.0, 0.0, 0.5, t);
    EXPECT_TRUE(sim_chat_is_clarifying(ask));
    EXPECT_FALSE(sim_chat_is_clarifying(bold));
    EXPECT_TRUE(sim_judge_acknowledges(ask)) << ask;
    EXPECT_FALSE(sim_judge_acknowledges(bold)) << bold;
  }
}

ChatRequest chat_request(const std::string& model, const std::string& last_turn) {
  ChatRequest r;
  r.model = model;
  r.messages = {{"user", last_turn}};
  return r;
}

// The share of clarifying replies over many distinct conversations matches the rate for
// truncated and for complete last turns (binomial 5-sigma bounds; fixed seeds, so the
// test is deterministic and fails only if the rates are wrong).
TEST(SimChat, ClarifyingRatesFollowTruncation) {
  SimBackend sim(*SimParams::from_json({{"clarify_rate", 0.2}, {"clarify_rate_truncated", 0.7}}));
  const int n = 2000;
  int cut = 0, whole = 0;
  for (int i = 0; i < n; ++i) {
    cut += sim_chat_is_clarifying(sim.complete(chat_request("m", "question number " + std::to_string(i) + " about")).content);
    whole += sim_chat_is_clarifying(sim.complete(chat_request("m", "question number " + std::to_string(i) + "?")).content);
  }
  auto near = [&](int k, double p) { return std::abs(k - n * p) < 5 * std::sqrt(n * p * (1 - p)); };
  EXPECT_TRUE(near(cut, 0.7)) << cut;
  EXPECT_TRUE(near(whole, 0.2)) << whole;
  // Deterministic at temperature 0.
  const auto a = sim.complete(chat_request("m", "same question"));
  const auto b = sim.complete(chat_request("m", "same question"));
  EXPECT_EQ(a.content, b.content);
}

// A judge request in the documented layout (built by hand here: the backend layer cannot
// use runner/judge.h; tests/runner/judge_test.cc checks that the runner builds the same).
ChatRequest judge_request(const std::string& model, const std::string& response, int i) {
  ChatRequest r;
  r.model = model;
  const std::string user = std::string(kJudgeCriterionHeader) + "\nThe criterion.\n\n" +
                           std::string(kJudgeConversationHeader) + "\nUSER: question " + std::to_string(i) +
                           "\n\n" + std::string(kJudgeResponseHeader) + "\n" + response + "\n\n" +
                           std::string(kJudgeTaskHeader) + "\n" + std::string(kJudgeInstruction);
  r.messages = {{"system", std::string(kJudgeSystemPrompt)}, {"user", user}};
  return r;
}

bool says_met(const std::string& reply) {
  // The sim's well-formed verdicts: {"verdict":"met"...} or a final "Verdict: MET".
  return reply.find("\"verdict\":\"met\"") != std::string::npos || reply.find("Verdict: MET") != std::string::npos;
}
bool says_not_met(const std::string& reply) {
  return reply.find("\"verdict\":\"not_met\"") != std::string::npos ||
         reply.find("Verdict: NOT MET") != std::string::npos;
}

TEST(SimJudge, RecognisesTheLayoutOnly) {
  SimJudgePrompt p;
  ASSERT_TRUE(parse_sim_judge_prompt(judge_request("j", "Line one.\n\nLine two?", 0), p));
  EXPECT_EQ(p.response, "Line one.\n\nLine two?");
  EXPECT_EQ(p.criterion, "The criterion.");
  ChatRequest no_system = judge_request("j", "x", 0);
  no_system.messages[0].content = "You are a helpful assistant.";
  EXPECT_FALSE(parse_sim_judge_prompt(no_system, p));
  EXPECT_FALSE(parse_sim_judge_prompt(chat_request("j", "hello"), p));
}

TEST(SimJudge, StrictJudgeRecoversTheTruth) {
  SimBackend sim(*SimParams::from_json({{"judge_leniency", 0.0}, {"judge_flip_rate", 0.0}}));
  for (int i = 0; i < 40; ++i) {
    const std::string ask = sim_chat_reply("cut", 1.0, 1.0, 0.0, static_cast<uint64_t>(i));
    const std::string bold = sim_chat_reply("cut", 0.0, 0.0, 0.5, static_cast<uint64_t>(i));
    const auto r1 = sim.complete(judge_request("judge", ask, i));
    const auto r2 = sim.complete(judge_request("judge", bold, i));
    EXPECT_TRUE(says_met(r1.content)) << r1.content;
    EXPECT_TRUE(says_not_met(r2.content)) << r2.content;
  }
}

TEST(SimJudge, LeniencyFlipsAndGarbageHaveTheirRates) {
  const int n = 2000;
  auto rate = [&](const nlohmann::json& params, bool acknowledging, bool (*pred)(const std::string&)) {
    SimBackend sim(*SimParams::from_json(params));
    int k = 0;
    for (int i = 0; i < n; ++i) {
      const std::string resp = acknowledging ? "Could you tell me more?" : "Take the standard dose.";
      k += pred(sim.complete(judge_request("judge", resp, i)).content);
    }
    return static_cast<double>(k) / n;
  };
  auto near = [&](double got, double p) { return std::abs(got - p) < 5 * std::sqrt(p * (1 - p) / n) + 1e-9; };
  // Leniency: confident answers rated met with probability 0.3 (no flips).
  EXPECT_TRUE(near(rate({{"judge_leniency", 0.3}, {"judge_flip_rate", 0.0}}, false, says_met), 0.3));
  // Flips: acknowledging answers rated not met with probability 0.2.
  EXPECT_TRUE(near(rate({{"judge_leniency", 0.0}, {"judge_flip_rate", 0.2}}, true, says_not_met), 0.2));
  // Garbage: neither verdict appears.
  auto garbage = [](const std::string& s) { return !says_met(s) && !says_not_met(s) && s.find("erdict") == std::string::npos; };
  EXPECT_TRUE(near(rate({{"judge_garbage_rate", 0.4}}, true, garbage), 0.4));
  EXPECT_EQ(rate({{"judge_garbage_rate", 1.0}}, true, garbage), 1.0);
}

TEST(SimJudge, ExtraBodyOverridesPerJudgeAndIsValidated) {
  SimBackend sim(SimParams{});
  ChatRequest r = judge_request("judge", "Could you tell me more?", 1);
  r.extra_body = {{"sim_judge", {{"garbage_rate", 1.0}}}};
  const auto g = sim.complete(r);
  EXPECT_EQ(g.kind, ResponseKind::kOk);
  EXPECT_FALSE(says_met(g.content) || says_not_met(g.content)) << g.content;
  r.extra_body = {{"sim_judge", {{"garbage_rat", 1.0}}}};
  const auto bad = sim.complete(r);
  EXPECT_EQ(bad.kind, ResponseKind::kApiError);
  EXPECT_NE(bad.error.find("garbage_rate"), std::string::npos) << bad.error;
  auto behaviour = sim_judge_behaviour({{"sim_judge", {{"leniency", 2.0}}}}, {});
  EXPECT_FALSE(behaviour.ok());
}

TEST(SimJudge, McqPromptsAreStillAnsweredWithALetter) {
  SimBackend sim(SimParams{});
  const auto r = sim.complete(chat_request("m", "Which?\n\nA. one\nB. two\n\nAnswer with <answer>X</answer>"));
  EXPECT_NE(r.content.find("<answer>"), std::string::npos) << r.content;
}

}  // namespace
}  // namespace nf
