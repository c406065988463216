// The seeded simulator: parameters, determinism, ground truth, thread independence.
#include "sim/sim.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <thread>

#include "sim/sim_test_util.h"

namespace nf {
namespace {

using testing::answer_letter;
using testing::item_bank;
using testing::mcq_request;

TEST(SimParams, DefaultsAndRoundTrip) {
  SimParams p;
  p.seed = 7;
  p.spread = 2.0;
  p.parse_error_rate = 0.1;
  auto back = SimParams::from_json(p.to_json());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->to_json(), p.to_json());
  auto empty = SimParams::from_json(nlohmann::json::object());
  ASSERT_TRUE(empty.ok());
  EXPECT_DOUBLE_EQ(empty->spread, 1.5);
  EXPECT_DOUBLE_EQ(empty->abstain_logit, -1.0);
  EXPECT_NE(p.short_hash(), empty->short_hash());
  EXPECT_EQ(p.short_hash().size(), 12u);
}

TEST(SimParams, UnknownKeySuggestsTheClosest) {
  auto r = SimParams::from_json({{"sprad", 1.0}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("'sprad'"), std::string::npos);
  EXPECT_NE(r.status().message().find("did you mean 'spread'"), std::string::npos) << r.status().message();
}

TEST(SimParams, WrongTypesAndRangesNameTheKey) {
  const std::vector<std::pair<nlohmann::json, std::string>> cases = {
      {{{"seed", -1}}, "seed"},        {{{"seed", "x"}}, "seed"},
      {{{"spread", -0.5}}, "spread"},  {{{"spread", "wide"}}, "spread"},
      {{{"abstain_logit", true}}, "abstain_logit"},
      {{{"parse_error_rate", 1.5}}, "parse_error_rate"}, {{{"parse_error_rate", -0.1}}, "parse_error_rate"},
  };
  for (const auto& [j, key] : cases) {
    auto r = SimParams::from_json(j);
    ASSERT_FALSE(r.ok()) << j.dump();
    EXPECT_NE(r.status().message().find("'" + key + "'"), std::string::npos) << r.status().message();
  }
  EXPECT_FALSE(SimParams::from_json(nlohmann::json::array()).ok());
}

TEST(SimPrompt, ParsesStemAndOptions) {
  SimMcqPrompt p;
  ASSERT_TRUE(parse_sim_mcq_prompt(testing::render_mcq("  Stem line one.\nline two  ", {"x", "y. z", "w"}), p));
  EXPECT_EQ(p.stem, "Stem line one.\nline two");
  EXPECT_EQ(p.options, (std::vector<std::string>{"x", "y. z", "w"}));
  EXPECT_FALSE(parse_sim_mcq_prompt("Just chat, no options.\nB. not a first option", p));
}

TEST(Sim, IdentityAndResponseFields) {
  SimBackend sim(SimParams{});
  EXPECT_EQ(sim.kind(), "sim");
  EXPECT_EQ(sim.identity(), "sim:" + SimParams{}.short_hash());
  const auto& [stem, opts] = item_bank()[1];
  ChatResponse r = sim.complete(mcq_request(stem, opts, 0.0, 1));
  EXPECT_EQ(r.kind, ResponseKind::kOk);
  EXPECT_EQ(r.finish_reason, "stop");
  EXPECT_EQ(r.served_model, "sim-a");
  EXPECT_EQ(r.system_fingerprint, "sim-" + SimParams{}.short_hash());
  EXPECT_GT(r.prompt_tokens, 10);
  EXPECT_GT(r.completion_tokens, 3);
  EXPECT_FALSE(answer_letter(r.content).empty());
  const auto body = nlohmann::json::parse(r.raw_body);
  EXPECT_EQ(body["object"], "chat.completion");
  EXPECT_EQ(body["choices"][0]["message"]["content"], r.content);
  EXPECT_EQ(body["usage"]["completion_tokens"], r.completion_tokens);
}

TEST(Sim, GreedyPicksTheArgmaxAndIgnoresTheSeed) {
  SimBackend sim(SimParams{.seed = 3});
  for (const auto& [stem, opts] : item_bank()) {
    const auto p = sim.option_probabilities("sim-a", stem, opts, 0.0);
    const auto logits = sim.option_logits("sim-a", stem, opts);
    const size_t argmax = static_cast<size_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
    EXPECT_DOUBLE_EQ(p[argmax], 1.0);
    const std::string first = sim.complete(mcq_request(stem, opts, 0.0, 0)).content;
    EXPECT_EQ(answer_letter(first), std::string(1, static_cast<char>('A' + argmax)));
    for (int64_t seed : {1, 2, 99, -5}) {
      EXPECT_EQ(sim.complete(mcq_request(stem, opts, 0.0, seed)).content, first);
    }
    EXPECT_EQ(sim.complete(mcq_request(stem, opts, 0.0, std::nullopt)).content, first);
  }
}

TEST(Sim, PositiveTemperatureVariesAcrossSeedsAndRepeatsPerSeed) {
  SimBackend sim(SimParams{.seed = 3, .spread = 0.5});
  const auto& [stem, opts] = item_bank()[0];
  std::set<std::string> letters;
  for (int64_t seed = 0; seed < 40; ++seed) {
    const auto req = mcq_request(stem, opts, 0.7, seed);
    const std::string a = sim.complete(req).content;
    EXPECT_EQ(sim.complete(req).content, a);  // same seed, same draw
    letters.insert(answer_letter(a));
  }
  EXPECT_GE(letters.size(), 2u);
}

TEST(Sim, PreferenceFollowsTheOptionTextNotTheLetter) {
  SimBackend sim(SimParams{.seed = 11});
  const auto& [stem, opts] = item_bank()[0];
  std::vector<std::string> shuffled = {opts[3], opts[0], opts[4], opts[1], opts[2]};
  const auto l1 = sim.option_logits("sim-a", stem, opts);
  const auto l2 = sim.option_logits("sim-a", stem, shuffled);
  EXPECT_DOUBLE_EQ(l2[0], l1[3]);
  EXPECT_DOUBLE_EQ(l2[1], l1[0]);
  EXPECT_DOUBLE_EQ(l2[2], l1[4]);
  const auto chosen = [&](const std::vector<std::string>& o) {
    const std::string let = answer_letter(sim.complete(mcq_request(stem, o, 0.0, 1)).content);
    return o[static_cast<size_t>(let[0] - 'A')];
  };
  EXPECT_EQ(chosen(opts), chosen(shuffled));
  // A different model or stem gets different logits.
  EXPECT_NE(sim.option_logits("sim-b", stem, opts), l1);
}

TEST(Sim, AbstainLogitShiftsOnlyAbstentionOptions) {
  const auto& [stem, opts] = item_bank()[0];  // option E is an abstention option
  SimBackend base(SimParams{.seed = 5, .abstain_logit = 0.0});
  SimBackend low(SimParams{.seed = 5, .abstain_logit = -3.0});
  const auto a = base.option_logits("sim-a", stem, opts);
  const auto b = low.option_logits("sim-a", stem, opts);
  for (size_t i = 0; i < 4; ++i) EXPECT_DOUBLE_EQ(a[i], b[i]);
  EXPECT_DOUBLE_EQ(b[4], a[4] - 3.0);
}

TEST(Sim, ProbabilitiesAreASoftmaxWithNucleus) {
  SimBackend sim(SimParams{.seed = 2});
  const auto& [stem, opts] = item_bank()[0];
  const auto logits = sim.option_logits("sim-a", stem, opts);
  const double T = 0.8;
  double z = 0.0;
  for (double l : logits) z += std::exp(l / T);
  const auto p = sim.option_probabilities("sim-a", stem, opts, T);
  double sum = 0.0;
  for (size_t i = 0; i < p.size(); ++i) {
    EXPECT_NEAR(p[i], std::exp(logits[i] / T) / z, 1e-12);
    sum += p[i];
  }
  EXPECT_NEAR(sum, 1.0, 1e-12);
  // Nucleus: keep the smallest top set with mass >= top_p, renormalised.
  std::vector<size_t> order(p.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t x, size_t y) { return p[x] > p[y]; });
  const double top_p = p[order[0]] + 0.5 * p[order[1]];  // needs exactly the top two
  const auto q = sim.option_probabilities("sim-a", stem, opts, T, top_p);
  const double kept = p[order[0]] + p[order[1]];
  EXPECT_NEAR(q[order[0]], p[order[0]] / kept, 1e-12);
  EXPECT_NEAR(q[order[1]], p[order[1]] / kept, 1e-12);
  for (size_t k = 2; k < order.size(); ++k) EXPECT_EQ(q[order[k]], 0.0);
}

// Empirical choice frequencies against option_probabilities at T = 0.7 (the other
// temperatures and top_p < 1: sim_slow_test.cc). See check_frequencies for the tolerance.
TEST(Sim, EmpiricalFrequenciesMatchTheGroundTruth) {
  SimBackend sim(SimParams{.seed = 17, .spread = 1.0});
  testing::check_frequencies(sim, 0.7, 1.0);
}

TEST(Sim, ParseErrorRateGivesUnparseableReplies) {
  const auto& [stem, opts] = item_bank()[1];
  SimBackend always(SimParams{.parse_error_rate = 1.0});
  for (int64_t s = 0; s < 20; ++s) {
    const auto r = always.complete(mcq_request(stem, opts, 0.7, s));
    EXPECT_EQ(r.kind, ResponseKind::kOk);
    EXPECT_EQ(answer_letter(r.content), "");
    EXPECT_EQ(r.content.find("answer"), std::string::npos) << r.content;
  }
  SimBackend some(SimParams{.seed = 4, .parse_error_rate = 0.25});
  int unparsed = 0;
  const int n = 4000;
  for (int64_t s = 0; s < n; ++s) {
    if (answer_letter(some.complete(mcq_request(stem, opts, 1.0, s)).content).empty()) ++unparsed;
  }
  EXPECT_NEAR(static_cast<double>(unparsed) / n, 0.25, 0.03);  // sd 0.0068
}

TEST(Sim, GenericReplyForNonMcqAndErrorsForBadRequests) {
  SimBackend sim(SimParams{});
  ChatRequest r;
  r.model = "sim-a";
  r.messages = {{"user", "How are you today?"}};
  r.temperature = 0.7;
  r.seed = 3;
  const auto a = sim.complete(r);
  EXPECT_EQ(a.kind, ResponseKind::kOk);
  EXPECT_FALSE(a.content.empty());
  EXPECT_EQ(sim.complete(r).content, a.content);
  r.messages = {{"system", "only a system message"}};
  EXPECT_EQ(sim.complete(r).kind, ResponseKind::kApiError);
  r.messages = {{"user", "hi"}};
  r.temperature = -1.0;
  EXPECT_EQ(sim.complete(r).kind, ResponseKind::kApiError);
  r.temperature = 0.5;
  r.top_p = 0.0;
  EXPECT_EQ(sim.complete(r).kind, ResponseKind::kApiError);
}

std::vector<ChatRequest> request_set() {
  std::vector<ChatRequest> out;
  for (const auto& [stem, opts] : item_bank()) {
    for (double T : {0.0, 0.5, 1.0}) {
      for (int64_t s = 0; s < 25; ++s) out.push_back(mcq_request(stem, opts, T, s));
    }
  }
  return out;
}

TEST(Sim, ResultsDoNotDependOnThreadsOrOrder) {
  const auto reqs = request_set();
  SimBackend serial(SimParams{.seed = 9});
  std::vector<std::string> expect(reqs.size());
  for (size_t i = 0; i < reqs.size(); ++i) expect[i] = serial.complete(reqs[i]).content;

  SimBackend shared(SimParams{.seed = 9});
  std::vector<std::string> got(reqs.size());
  std::vector<std::thread> threads;
  for (size_t t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      // Each thread walks its share backwards: a different order from the serial run.
      for (size_t i = reqs.size(); i-- > 0;) {
        if (i % 4 == t) got[i] = shared.complete(reqs[i]).content;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(got, expect);
}

}  // namespace
}  // namespace nf
