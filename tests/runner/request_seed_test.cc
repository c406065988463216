// Issue 13 item 0: per-draw request seeds. A server that honours `seed` (llama.cpp, vLLM)
// seeds its sampler from that value alone, so a seed of (config seed, replicate) made
// replicate r of every item and condition repeat one random stream: the identical-prompt
// rerender_control never flipped and items were not independent clusters. The seed is now
// mixed from the whole draw key; the simulator honours seeds the way those servers do.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "backend/openai.h"
#include "common/test_data.h"
#include "core/draw_seed.h"
#include "runner/judge.h"
#include "runner/runner.h"
#include "sim/sim.h"
#include "sim/sim_server.h"
#include "spec/study.h"
#include "store/store.h"

namespace nf {
namespace {

TEST(RequestSeed, DependsOnEveryFieldOfTheDrawKeyAndIsReproducible) {
  Config c;
  c.id = "default";
  c.seed = 0;
  const DrawKey k{"s", "item-1", "none", "default", 0};
  const auto base = request_seed(c, 7, k);
  ASSERT_TRUE(base.has_value());
  EXPECT_EQ(request_seed(c, 7, k), base);  // reproducible
  EXPECT_GE(*base, 0);
  EXPECT_LT(*base, int64_t{1} << 31);  // fits every server's int32 seed field
  std::set<int64_t> seen{*base};
  auto add = [&](const DrawKey& key, uint64_t study_seed = 7, std::optional<int64_t> cfg = 0) {
    Config cc = c;
    cc.seed = cfg;
    const auto s = request_seed(cc, study_seed, key);
    ASSERT_TRUE(s.has_value());
    EXPECT_TRUE(seen.insert(*s).second) << key.to_string() << " repeats a seed";
  };
  add({"t", "item-1", "none", "default", 0});          // subject
  add({"s", "item-2", "none", "default", 0});          // item
  add({"s", "item-1", "rerender_control", "default", 0});  // condition
  add({"s", "item-1", "none", "T=0.8", 0});            // config
  add({"s", "item-1", "none", "default", 1});          // replicate
  add(k, 8);                                           // study seed
  add(k, 7, 1);                                        // config seed
  Config none = c;
  none.seed.reset();
  EXPECT_EQ(request_seed(none, 7, k), std::nullopt);  // a null config seed sends none
  // Pinned value: the mix is part of reproducibility across versions.
  EXPECT_EQ(*draw_request_seed(0, 7, k), *base);
}

TEST(RequestSeed, NoTwoDrawsOfAStudyPlanShareASeed) {
  std::set<int64_t> seeds;
  int n = 0;
  Config c;
  c.id = "default";
  c.seed = 0;
  for (const char* subject : {"a", "b"})
    for (int item = 0; item < 50; ++item)
      for (const char* cond : {"none", "rerender_control", "sham"})
        for (int r = 0; r < 5; ++r) {
          seeds.insert(*request_seed(c, 1, {subject, "v" + std::to_string(item), cond, "default", r}));
          ++n;
        }
  EXPECT_EQ(static_cast<int>(seeds.size()), n);  // 1500 draws: P(any 31-bit collision) ~ 5e-4, pinned
}

TEST(RequestSeed, JudgeRequestsGetOneSeedPerJudgeAndDraw) {
  JudgeSpec spec;
  spec.seed = 0;
  SubjectSpec j1, j2;
  j1.name = "judge-a";
  j2.name = "judge-b";
  const DrawKey d1{"s", "p1", "none", "default", 0}, d2{"s", "p2", "none", "default", 0};
  const auto a = judge_request_seed(spec, j1, d1);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(judge_request_seed(spec, j1, d1), a);  // a re-judged draw gets the same seed
  EXPECT_NE(judge_request_seed(spec, j1, d2), a);
  EXPECT_NE(judge_request_seed(spec, j2, d1), a);
  spec.seed.reset();
  EXPECT_EQ(judge_request_seed(spec, j1, d1), std::nullopt);  // seed: null sends none
}

// The sim behind serve-sim samples as a seed-honouring server: equal seeds give equal
// uniforms whatever the prompt, so two prompts with the same option probabilities (here
// the same item under two system messages) always agree at equal seeds.
TEST(RequestSeed, ServeSimHonoursSeedsLikeARealServer) {
  auto server = SimServer::start(SimParams{.seed = 3, .spread = 0.3});
  ASSERT_TRUE(server.ok()) << server.status().message();
  OpenAiOptions o;
  o.base_url = (*server)->base_url();
  OpenAiBackend client(o);
  const std::string user =
      "Which is first-line?\n\nA. alpha\nB. beta\nC. gamma\nD. delta\n\nAnswer with <answer>X</answer>.";
  int differ_same_seed = 0, differ_other_seed = 0;
  for (int64_t s = 0; s < 40; ++s) {
    ChatRequest a;
    a.model = "m";
    a.temperature = 1.0;
    a.seed = s;
    a.messages = {{"system", "You are careful."}, {"user", user}};
    ChatRequest b = a;
    b.messages[0].content = "You are a physician.";
    const ChatResponse ra = client.complete(a), rb = client.complete(b), ra2 = client.complete(a);
    ASSERT_EQ(ra.kind, ResponseKind::kOk) << ra.error;
    EXPECT_EQ(ra.content, ra2.content);  // same seed + same prompt -> same answer
    const std::string la = ra.content.substr(ra.content.rfind("<answer>")),
                      lb = rb.content.substr(rb.content.rfind("<answer>"));
    differ_same_seed += la != lb;
    ChatRequest c = b;
    c.seed = s + 1000;
    const ChatResponse rc = client.complete(c);
    differ_other_seed += la != rc.content.substr(rc.content.rfind("<answer>"));
  }
  EXPECT_EQ(differ_same_seed, 0);    // one stream per seed, as llama.cpp / vLLM
  EXPECT_GT(differ_other_seed, 10);  // spread 0.3: near-uniform over 4 options
}

// End to end over serve-sim: the identical-prompt rerender_control flips against the
// reference condition (under shared seeds every pair repeated itself: 0 flips), and no
// two stored draws carry the same request seed.
TEST(RequestSeed, RerenderControlOverServeSimIsNotARepeatOfTheReference) {
  auto server = SimServer::start(SimParams{.seed = 1});
  ASSERT_TRUE(server.ok()) << server.status().message();
  testing::TempDir d;
  const std::string yaml = "name: seeds\nseed: 7\ntask: vignette_agent\ndataset:\n  format: vignettes\n  path: " +
                           std::string(NF_SOURCE_DIR) +
                           "/data/sample-vignettes.json\nsubjects:\n  - name: agent\n    backend: openai\n"
                           "    model: agent-sim\n    base_url: " +
                           (*server)->base_url() +
                           "\n    extra_body:\n      sim_agent: {floor: 0.3}\n"
                           "conditions: [ref_white_man_private, rerender_control]\nconfigs:\n  temperature: [1.0]\nreplicates: 4\n";
  auto study = parse_study(yaml, d / "s.yaml");
  ASSERT_TRUE(study.ok()) << study.status().message();
  auto store = Store::open(d / "store.sqlite");
  ASSERT_TRUE(store.ok()) << store.status().message();
  RunOptions ro;
  ro.progress = false;
  auto sum = run_study(*study, **store, ro);
  ASSERT_TRUE(sum.ok()) << sum.status().message();
  ASSERT_EQ(sum->ok, sum->planned);
  auto rows = (*store)->outcome_rows();
  ASSERT_TRUE(rows.ok());
  std::map<std::string, std::map<std::string, double>> by_cond;  // condition -> item|rep|outcome -> value
  std::set<int64_t> seeds;
  std::set<std::string> keys;
  for (const auto& r : *rows) {
    by_cond[r.condition][r.item + "|" + std::to_string(r.replicate) + "|" + r.outcome] = r.value;
    const DrawKey k{r.subject, r.item, r.condition, r.config, r.replicate};
    if (keys.insert(k.to_string()).second) {
      auto draw = (*store)->get_draw(k);
      ASSERT_TRUE(draw.ok());
      ASSERT_TRUE(draw->request.contains("seed"));
      EXPECT_TRUE(seeds.insert(draw->request["seed"].get<int64_t>()).second) << k.to_string();
    }
  }
  ASSERT_EQ(by_cond["ref_white_man_private"].size(), by_cond["rerender_control"].size());
  int flips = 0;
  for (const auto& [k, v] : by_cond["ref_white_man_private"]) flips += by_cond["rerender_control"].at(k) != v;
  EXPECT_GT(flips, 0);
}

}  // namespace
}  // namespace nf
