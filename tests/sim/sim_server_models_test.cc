// serve-sim with several simulated models (issue 11 "Must show": the envelope study over
// HTTP): the request's model selects its own SimParams, and the reply -- answer, logprobs
// at the answer position, fingerprint -- equals the in-process SimBackend with those params.
#include <gtest/gtest.h>
#include <httplib.h>

#include <cmath>

#include "backend/openai.h"
#include "sim/sim.h"
#include "sim/sim_server.h"
#include "sim/sim_test_util.h"

namespace nf {
namespace {

SimParams params_with(double gold_logit, const std::string& when, double add) {
  SimParams p;
  p.spread = 1.0;
  // An answer key held in memory: gold option text per stem (SimParams::gold).
  auto gold = std::make_shared<std::map<std::string, std::string>>();
  for (const auto& [stem, options] : testing::item_bank()) (*gold)[stem] = options.back();
  p.gold = gold;
  p.gold_logit = gold_logit;
  if (!when.empty()) p.gold_logit_when.push_back({when, add});
  return p;
}

TEST(SimServerModels, EachModelAnswersWithItsOwnParamsExactlyAsInProcess) {
  const SimModels models{{"sim-a", params_with(0.0, "Think through", 4.0)}, {"sim-b", params_with(3.0, "", 0.0)}};
  auto server = SimServer::start(SimParams{}, 0, FaultOptions{0.0, 0.0, {}, "1", 0.0, 1}, models);
  ASSERT_TRUE(server.ok()) << server.status().to_string();
  OpenAiOptions o;
  o.base_url = (*server)->base_url();
  o.max_retries = 0;
  OpenAiBackend http(o);
  int compared = 0, top_listed = 0;
  for (const auto& [name, params] : models) {
    SimBackend local(params);
    for (const auto& [stem, options] : testing::item_bank()) {
      for (const double t : {0.0, 0.7}) {
        ChatRequest r = testing::mcq_request(stem, options, t, 11, 1.0, name);
        r.messages.back().content += "\nThink through the options.";
        r.extra_body = {{"logprobs", true}, {"top_logprobs", 2}};
        const ChatResponse want = local.complete(r);
        const ChatResponse got = http.complete(r);
        ASSERT_EQ(got.kind, ResponseKind::kOk) << got.error;
        EXPECT_EQ(got.content, want.content) << name;
        EXPECT_EQ(got.system_fingerprint, want.system_fingerprint) << name;
        EXPECT_EQ(got.system_fingerprint, "sim-" + params.short_hash());
        EXPECT_EQ(got.logprobs, want.logprobs) << name;
        // The answer position's top_logprobs are the sim's option probabilities (T = 1).
        const auto p = local.option_probabilities(name, stem, options, 1.0, 1.0, r.messages.back().content);
        const auto letters = std::vector<std::string>{"A", "B", "C", "D", "E"};
        const AnswerTokenProbs at = answer_token_probabilities(
            got.logprobs, std::vector<std::string>(letters.begin(), letters.begin() + options.size()));
        ASSERT_TRUE(at.position.has_value()) << at.note;
        EXPECT_EQ(*at.position, 4u) << "the letter follows the prose, '<', 'answer', '>' as on a real server";
        EXPECT_EQ(at.token, testing::answer_letter(got.content));
        for (size_t i = 0; i < options.size(); ++i) {
          const auto& v = at.probs.at(letters[i]);
          if (!v) continue;  // not in the top 2: unknown, never zero
          ++top_listed;
          EXPECT_NEAR(*v, p[i], 1e-12) << name << " " << letters[i];
        }
        ++compared;
      }
    }
  }
  EXPECT_GT(compared, 0);
  EXPECT_GE(top_listed, 2 * compared);
  // The two models differ: sim-a's gold bonus (4 with "Think through") is not sim-b's (3).
  const auto& [stem, options] = testing::item_bank().front();
  ChatRequest ra = testing::mcq_request(stem, options, 0.0, std::nullopt, 1.0, "sim-a");
  ChatRequest rb = ra;
  rb.model = "sim-b";
  EXPECT_NE(http.complete(ra).system_fingerprint, http.complete(rb).system_fingerprint);
}

TEST(SimReplyTokens, ConcatenateToTheReplyWithTheLetterAlone) {
  const std::string reply = "Option B, Vitamin C, fits best.\n\n<answer>B</answer>";
  const auto t = sim_reply_tokens(reply);
  std::string joined;
  for (const auto& x : t) joined += x;
  EXPECT_EQ(joined, reply);
  const std::vector<std::string> tail(t.end() - 7, t.end());
  EXPECT_EQ(tail, (std::vector<std::string>{"<", "answer", ">", "B", "</", "answer", ">"}));
  ASSERT_EQ(t.size(), 8u);
  EXPECT_EQ(t[0], "Option B, Vitamin C, fits best.\n\n");
  EXPECT_TRUE(sim_reply_tokens("").empty());
  EXPECT_EQ(sim_reply_tokens("no tag"), (std::vector<std::string>{"no tag"}));
  // A parse-error reply has no answer position, so every option stays unknown.
  SimParams p;
  p.parse_error_rate = 1.0;
  SimBackend sim(p);
  const auto& [stem, options] = testing::item_bank()[1];
  ChatRequest r = testing::mcq_request(stem, options, 0.0, std::nullopt);
  r.extra_body = {{"logprobs", true}, {"top_logprobs", 4}};
  const ChatResponse resp = sim.complete(r);
  ASSERT_FALSE(resp.logprobs.is_null());
  const auto at = answer_token_probabilities(resp.logprobs, {"A", "B", "C", "D"});
  EXPECT_FALSE(at.position.has_value()) << resp.content;
}

TEST(SimServerModels, UnknownModelIs404AndModelsAreListed) {
  auto server = SimServer::start(SimParams{}, 0, FaultOptions{0.0, 0.0, {}, "1", 0.0, 1},
                                 SimModels{{"sim-a", SimParams{}}, {"sim-b", SimParams{}}});
  ASSERT_TRUE(server.ok()) << server.status().to_string();
  OpenAiOptions o;
  o.base_url = (*server)->base_url();
  o.max_retries = 0;
  OpenAiBackend http(o);
  const auto& [stem, options] = testing::item_bank().front();
  const ChatResponse r = http.complete(testing::mcq_request(stem, options, 0.0, std::nullopt, 1.0, "sim-x"));
  EXPECT_EQ(r.kind, ResponseKind::kApiError);  // never scored as an answer
  EXPECT_EQ(r.http_status, 404);
  EXPECT_NE(r.error.find("The model `sim-x` does not exist"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("sim-a, sim-b"), std::string::npos) << r.error;
  httplib::Client cli("127.0.0.1", (*server)->port());
  auto models = cli.Get("/v1/models");
  ASSERT_TRUE(models);
  const auto j = nlohmann::json::parse(models->body);
  ASSERT_EQ(j["data"].size(), 2u);
  EXPECT_EQ(j["data"][0]["id"], "sim-a");
  EXPECT_EQ(j["data"][1]["id"], "sim-b");
  // Without a table every name is served (the old behaviour) and /v1/models says "sim".
  auto plain = SimServer::start(SimParams{}, 0);
  ASSERT_TRUE(plain.ok());
  o.base_url = (*plain)->base_url();
  OpenAiBackend http2(o);
  EXPECT_EQ(http2.complete(testing::mcq_request(stem, options, 0.0, std::nullopt, 1.0, "sim-x")).kind,
            ResponseKind::kOk);
}

}  // namespace
}  // namespace nf
