// The judging engine (runner/judge.h; seed 004 §2.5-2.6): verdict parsing, the judge
// prompt, and run_judges over a store of chat draws written here with Store::put_draw.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/test_data.h"
#include "runner/judge.h"
#include "sim/sim.h"
#include "sim/sim_chat.h"
#include "sim/sim_judge.h"
#include "spec/study.h"
#include "store/store.h"
#include "util/hash.h"

namespace nf {
namespace {

using testing::TempDir;

// ---- parse_verdict ------------------------------------------------------------------

struct VerdictCase {
  std::string text;
  int want;  // 1, 0, or -1 = parse_error
};

TEST(ParseVerdict, AcceptsJsonAndFinalLinesAndRejectsEverythingElse) {
  const std::vector<VerdictCase> cases = {
      {R"({"verdict": "met", "reason": "asks a question"})", 1},
      {R"({"verdict": "not_met", "reason": "confident"})", 0},
      {R"({"verdict": "NOT MET"})", 0},
      {R"({"verdict": "Not-Met."})", 0},
      {R"({"verdict": "Met"})", 1},
      {R"({"verdict": "yes"})", 1},
      {R"({"verdict": "No"})", 0},
      {R"({"verdict": true})", 1},
      {R"({"verdict": false})", 0},
      {R"({"verdict": 1})", 1},
      {R"({"verdict": 0})", 0},
      {R"({"verdict": "1"})", 1},
      {R"({"met": true, "reason": "x"})", 1},
      {R"({"met": false})", 0},
      {"```json\n{\"verdict\": \"not_met\", \"reason\": \"r\"}\n```", 0},
      {"Here is my assessment.\n{\"verdict\": \"met\", \"reason\": \"it says {braces} inside\"}\nThanks.", 1},
      // The LAST object with a verdict wins (a model that corrects itself).
      {R"({"verdict": "met"} on reflection {"verdict": "not_met"})", 0},
      {R"({"note": "no verdict here"} {"verdict": "met"})", 1},
      // Nested objects are searched when the object has no verdict of its own.
      {R"({"result": {"verdict": "not_met"}})", 0},
      {R"({"items": [{"verdict": "met"}, {"verdict": "met"}]})", 1},
      // Tester finding (2026-12-01): the details of a verdict are not verdicts.
      {R"({"verdict": "met", "details": {"verdict": "not_met"}})", 1},
      {R"({"verdict": "not_met", "checks": [{"verdict": "met"}, {"verdict": "met"}]})", 0},
      // A rubric whose items disagree is no single verdict; "met" must be a boolean.
      {R"({"rubric": [{"verdict": "met"}, {"verdict": "not_met"}]})", -1},
      {R"({"verdict": true, "met": 0})", -1},
      {R"({"met": "yes"})", -1},
      // Final-line forms.
      {"The response asks a question.\nVERDICT: MET", 1},
      {"The response is confident.\nVerdict: not met", 0},
      {"reasoning...\n**Verdict:** Not met", 0},
      {"reasoning...\n**Verdict:** Met", 1},
      {"Label: 1", 1},
      {"label: 0\n\n", 0},
      {"Final verdict: NOT_MET.", 0},
      {"MET", 1},
      {"NOT MET", 0},
      {"  not met.  ", 0},
      {"# Met", 1},
      // Parse errors.
      {"", -1},
      {"   \n  ", -1},
      {"I cannot help with evaluating this.", -1},
      {"The criterion is not met.", -1},
      {"Verdict: maybe", -1},
      {"Verdict: met / not met", -1},
      {R"({"verdict": "partially"})", -1},
      {R"({"verdict": "met", "met": false})", -1},
      {R"({"reason": "no verdict key"})", -1},
      {"{\"verdict\": \"met\"", -1},  // unbalanced, and the final line is no verdict line
      {"yes", -1},
      {"No.", -1},
  };
  for (const auto& c : cases) {
    auto v = parse_verdict(c.text);
    if (c.want < 0) {
      EXPECT_FALSE(v.ok()) << "should be a parse error: [" << c.text << "] got " << (v.ok() ? *v : -1);
    } else {
      ASSERT_TRUE(v.ok()) << "[" << c.text << "]: " << v.status().message();
      EXPECT_EQ(*v, c.want) << "[" << c.text << "]";
    }
  }
}

TEST(ParseVerdict, NotMetNeverParsesAsMet) {
  for (const char* t : {"not met", "NOT MET", "Not met.", "Verdict: NOT MET", "**Verdict:** not_met", "not-met",
                        R"({"verdict": "not met"})", R"({"verdict": "NOT_MET"})"}) {
    auto v = parse_verdict(t);
    ASSERT_TRUE(v.ok()) << t;
    EXPECT_EQ(*v, 0) << t;
  }
}

// Untrusted text: random byte strings built from verdict-like fragments never crash the
// parser, and a parse is stable (same text, same answer). Fixed seed: deterministic.
TEST(ParseVerdict, RandomFragmentsNeverCrashAndParseStably) {
  const std::vector<std::string> frags = {"{", "}", "\"verdict\"", ":", "\"met\"", "\"not_met\"", "\n",
                                          "Verdict: ", "MET", "NOT MET", "```json", "```", "\\", "\"", " ",
                                          "true", "null", "[", "]", ",", "**", "label: 1", "\xff", "{\"met\": false}"};
  uint64_t x = 88172645463325252ULL;
  auto next = [&] {  // xorshift64
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  };
  int parsed = 0;
  for (int i = 0; i < 5000; ++i) {
    std::string t;
    const int n = static_cast<int>(next() % 12);
    for (int k = 0; k < n; ++k) t += frags[next() % frags.size()];
    auto a = parse_verdict(t);
    auto b = parse_verdict(t);
    ASSERT_EQ(a.ok(), b.ok()) << t;
    if (a.ok()) {
      EXPECT_TRUE(*a == 0 || *a == 1);
      EXPECT_EQ(*a, *b);
      ++parsed;
    }
  }
  EXPECT_GT(parsed, 0);
  EXPECT_LT(parsed, 5000);
}

// ---- the judge prompt -----------------------------------------------------------------

JudgeSpec two_sim_judges(const nlohmann::json& sim_a = nlohmann::json::object(),
                         const nlohmann::json& sim_b = nlohmann::json::object()) {
  JudgeSpec j;
  j.enabled = true;
  j.criterion = default_judge_criterion();
  SubjectSpec a;
  a.name = "judge-a";
  a.provider = "openai";
  a.backend = "sim";
  a.model = "sim-judge-a";
  a.sim = sim_a;
  a.concurrency = 2;
  SubjectSpec b = a;
  b.name = "judge-b";
  b.provider = "anthropic";
  b.model = "sim-judge-b";
  b.sim = sim_b;
  j.panel = {a, b};
  return j;
}

TEST(BuildJudgeRequest, FollowsTheSimJudgeLayoutAndPinsSettings) {
  JudgeSpec spec = two_sim_judges();
  spec.temperature = 0.0;
  spec.top_p = 0.9;
  spec.seed = 17;
  spec.max_tokens = 300;
  const std::vector<ChatMessage> conv = {{"system", "Be helpful."}, {"user", "I have a headache and"}};
  const std::string response = "Could you tell me more?\n\nSecond paragraph.";
  const ChatRequest r = build_judge_request(spec, spec.panel[1], 17, conv, response);
  EXPECT_EQ(r.model, "sim-judge-b");
  EXPECT_EQ(r.top_p, 0.9);
  EXPECT_EQ(r.seed, std::optional<int64_t>(17));
  EXPECT_EQ(r.max_tokens, 300);
  ASSERT_EQ(r.messages.size(), 2u);
  EXPECT_EQ(r.messages[0].role, "system");
  EXPECT_EQ(r.messages[0].content, kJudgeSystemPrompt);
  const std::string& u = r.messages[1].content;
  EXPECT_NE(u.find("SYSTEM: Be helpful.\n\nUSER: I have a headache and"), std::string::npos) << u;
  EXPECT_NE(u.find(default_judge_criterion()), std::string::npos);
  EXPECT_NE(u.find("\"verdict\""), std::string::npos);
  SimJudgePrompt p;
  ASSERT_TRUE(parse_sim_judge_prompt(r, p));
  EXPECT_EQ(p.response, response);
  EXPECT_EQ(p.criterion, default_judge_criterion());
}

TEST(ConversationOfRequest, ReadsMessagesAndRejectsOtherRequests) {
  auto ok = conversation_of_request({{"messages", {{{"role", "user"}, {"content", "hi"}}}}});
  ASSERT_TRUE(ok.ok());
  ASSERT_EQ(ok->size(), 1u);
  EXPECT_EQ((*ok)[0].content, "hi");
  EXPECT_FALSE(conversation_of_request(nlohmann::json::object()).ok());
  EXPECT_FALSE(conversation_of_request({{"messages", nlohmann::json::array()}}).ok());
  EXPECT_FALSE(conversation_of_request({{"messages", {{{"role", "user"}}}}}).ok());
}

// ---- run_judges -------------------------------------------------------------------------

// A chat store: `n` items per subject, `reps` replicates, answers alternating between a
// clarifying and a confident sim_chat reply (so the truth is known per draw).
struct ChatStore {
  TempDir dir;
  std::unique_ptr<Store> store;
  std::map<std::string, bool> clarifying;  // item|subject|rep -> answer asks
};

std::unique_ptr<ChatStore> make_chat_store(int n, int reps = 1, const std::string& task = "chat") {
  auto cs = std::make_unique<ChatStore>();
  auto s = Store::open(cs->dir / "store.sqlite");
  EXPECT_TRUE(s.ok()) << s.status().message();
  cs->store = std::move(*s);
  EXPECT_TRUE(cs->store->put_study({"chat-test", "", 0, {{"name", "chat-test"}, {"task", task}, {"replicates", reps}}})
                  .ok());
  EXPECT_TRUE(cs->store->put_subject("model-x", {{"name", "model-x"}, {"provider", "openai"}}).ok());
  EXPECT_TRUE(cs->store->put_subject("model-y", {{"name", "model-y"}}).ok());
  for (const std::string subject : {"model-x", "model-y"}) {
    for (int i = 0; i < n; ++i) {
      for (int r = 0; r < reps; ++r) {
        Draw d;
        d.key = {subject, "I" + std::to_string(i), "truncate_last_turn", "default", r};
        d.cluster = "P" + std::to_string(i / 2);
        const std::string turn = "My child has had a fever for two days and " + std::to_string(i);
        d.request = {{"messages", {{{"role", "user"}, {"content", turn}}}}};
        const bool ask = (i + r + (subject == "model-y")) % 2 == 0;
        d.content = sim_chat_reply(turn, ask ? 1.0 : 0.0, ask ? 1.0 : 0.0, 0.5, static_cast<uint64_t>(i));
        cs->clarifying[d.key.item + "|" + subject + "|" + std::to_string(r)] = ask;
        EXPECT_TRUE(cs->store->put_draw(d).ok());
      }
    }
  }
  // A draw that is not ok is never judged.
  Draw bad;
  bad.key = {"model-x", "I0", "none", "default", 0};
  bad.status = DrawStatus::kApiError;
  bad.request = {{"messages", {{{"role", "user"}, {"content", "x"}}}}};
  EXPECT_TRUE(cs->store->put_draw(bad).ok());
  return cs;
}

Study judge_study(JudgeSpec spec) {
  Study s;
  s.name = "judges";
  s.source_path = "judges.yaml";
  s.task = "chat";
  s.judge = std::move(spec);
  return s;
}

// Every stored judgment (the Result is kept alive by value: iterating over
// *store.judgments() directly would dangle).
std::vector<JudgmentRow> all_judgments(Store& store) {
  auto rows = store.judgments();
  EXPECT_TRUE(rows.ok());
  return rows.ok() ? *rows : std::vector<JudgmentRow>{};
}

JudgeOptions quiet() {
  JudgeOptions o;
  o.progress = false;
  return o;
}

TEST(RunJudges, JudgesEveryOkChatDrawOnceAndResumes) {
  auto cs = make_chat_store(10);
  const Study study = judge_study(two_sim_judges({{"judge_flip_rate", 0.0}, {"judge_leniency", 0.0}},
                                                 {{"judge_flip_rate", 0.0}, {"judge_leniency", 0.0}}));
  auto sum = run_judges(study, *cs->store, quiet());
  ASSERT_TRUE(sum.ok()) << sum.status().message();
  EXPECT_EQ(sum->planned, 40);
  EXPECT_EQ(sum->already_done, 0);
  EXPECT_EQ(sum->executed, 40);
  EXPECT_EQ(sum->ok, 40);
  EXPECT_EQ(sum->parse_error + sum->api_error, 0);
  ASSERT_EQ(sum->per_judge.size(), 2u);
  EXPECT_EQ(sum->per_judge[0].judge, "judge-a");
  EXPECT_EQ(sum->per_judge[0].executed, 20);

  auto rows = cs->store->judgments();
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 40u);
  std::set<std::pair<int64_t, std::string>> keys;
  for (const auto& r : *rows) {
    ASSERT_TRUE(r.draw_id.has_value());
    keys.insert({*r.draw_id, r.judge});
    EXPECT_EQ(r.status, "ok");
    ASSERT_TRUE(r.label.has_value());
    // Without leniency and flips the sim judge recovers the known truth exactly.
    EXPECT_EQ(*r.label, cs->clarifying.at(r.item + "|" + r.subject + "|0") ? 1 : 0) << r.raw_response;
    EXPECT_EQ(r.judge_provider, r.judge == "judge-a" ? "openai" : "anthropic");
    // The stored subject spec's provider, else the subject name.
    EXPECT_EQ(r.subject_provider, r.subject == "model-x" ? "openai" : "model-y");
    EXPECT_EQ(r.cluster.substr(0, 1), "P");
    EXPECT_EQ(r.settings["temperature"], 0.0);
    EXPECT_EQ(r.settings["max_tokens"], 512);
    EXPECT_EQ(r.settings["seed"], 0);
    EXPECT_EQ(r.settings["backend"], "sim");
    EXPECT_EQ(r.settings["served_model"], r.judge == "judge-a" ? "sim-judge-a" : "sim-judge-b");
    EXPECT_EQ(r.settings["system_fingerprint"].get<std::string>().substr(0, 4), "sim-");
    EXPECT_EQ(r.settings["criterion_sha256"].get<std::string>().size(), 64u);
  }
  EXPECT_EQ(keys.size(), 40u);

  auto again = run_judges(study, *cs->store, quiet());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->already_done, 40);
  EXPECT_EQ(again->executed, 0);
  EXPECT_EQ(*cs->store->judgment_count(), 40);

  JudgeOptions refresh = quiet();
  refresh.refresh = true;
  auto re = run_judges(study, *cs->store, refresh);
  ASSERT_TRUE(re.ok()) << re.status().message();
  EXPECT_EQ(re->executed, 40);
  EXPECT_EQ(*cs->store->judgment_count(), 40);
}

TEST(RunJudges, StopsAfterMaxJudgmentsAndResumesTheRest) {
  auto cs = make_chat_store(6);
  const Study study = judge_study(two_sim_judges());
  JudgeOptions o = quiet();
  o.max_judgments = 5;
  auto part = run_judges(study, *cs->store, o);
  ASSERT_TRUE(part.ok());
  EXPECT_EQ(part->executed, 5);
  EXPECT_TRUE(part->interrupted);
  auto rest = run_judges(study, *cs->store, quiet());
  ASSERT_TRUE(rest.ok());
  EXPECT_EQ(rest->already_done, 5);
  EXPECT_EQ(rest->executed, 19);
  EXPECT_FALSE(rest->interrupted);
  EXPECT_EQ(*cs->store->judgment_count(), 24);
}

TEST(RunJudges, GarbageJudgeGivesOnlyParseErrorsAndNoVotes) {
  auto cs = make_chat_store(5);
  const Study study = judge_study(two_sim_judges({{"judge_garbage_rate", 1.0}}, {{"judge_garbage_rate", 1.0}}));
  auto sum = run_judges(study, *cs->store, quiet());
  ASSERT_TRUE(sum.ok());
  EXPECT_EQ(sum->parse_error, 20);
  EXPECT_EQ(sum->ok, 0);
  for (const auto& r : all_judgments(*cs->store)) {
    EXPECT_EQ(r.status, "parse_error");
    EXPECT_FALSE(r.label.has_value());
    EXPECT_FALSE(r.raw_response.empty());
    EXPECT_TRUE(r.settings.contains("error"));
  }
  // Parse errors are kept: a second run does not repeat them.
  auto again = run_judges(study, *cs->store, quiet());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->executed, 0);
}

TEST(RunJudges, UnreachableJudgeStoresApiErrorsThatTheNextRunRetries) {
  auto cs = make_chat_store(3);
  JudgeSpec spec = two_sim_judges();
  SubjectSpec& down = spec.panel[1];
  down.backend = "openai";
  down.base_url = "http://127.0.0.1:1/v1";  // nothing listens on port 1
  down.max_retries = 0;
  down.connect_timeout_s = 1;
  down.timeout_s = 2;
  auto sum = run_judges(judge_study(spec), *cs->store, quiet());
  ASSERT_TRUE(sum.ok()) << sum.status().message();
  EXPECT_EQ(sum->per_judge[1].api_error, 6);
  EXPECT_EQ(sum->per_judge[1].ok, 0);
  EXPECT_EQ(sum->per_judge[0].ok, 6);
  EXPECT_FALSE(sum->first_api_error.empty());
  for (const auto& r : all_judgments(*cs->store))
    if (r.judge == "judge-b") {
      EXPECT_EQ(r.status, "api_error");
      EXPECT_FALSE(r.label.has_value());
    }
  // The judge comes back (same name, now the simulator): only its api_errors are redone.
  auto back = run_judges(judge_study(two_sim_judges()), *cs->store, quiet());
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->already_done, 6);
  EXPECT_EQ(back->executed, 6);
  EXPECT_EQ(back->ok, 6);
  EXPECT_EQ(*cs->store->judgment_count(), 12);
}

TEST(RunJudges, SeveralDrawsPerSubjectAndItemGetDistinctUnits) {
  auto cs = make_chat_store(2, 3);
  auto sum = run_judges(judge_study(two_sim_judges()), *cs->store, quiet());
  ASSERT_TRUE(sum.ok());
  EXPECT_EQ(sum->executed, 24);
  std::set<std::string> items;
  for (const auto& r : all_judgments(*cs->store)) items.insert(r.subject + "/" + r.item);
  EXPECT_EQ(items.size(), 12u);
  EXPECT_TRUE(items.count("model-x/I1|truncate_last_turn|default|2"));
}

TEST(RunJudges, StudySubjectProviderWins) {
  auto cs = make_chat_store(1);
  Study study = judge_study(two_sim_judges());
  SubjectSpec y;
  y.name = "model-y";
  y.provider = "google";
  study.subjects = {y};
  ASSERT_TRUE(run_judges(study, *cs->store, quiet()).ok());
  for (const auto& r : all_judgments(*cs->store))
    EXPECT_EQ(r.subject_provider, r.subject == "model-y" ? "google" : "openai");
}

TEST(RunJudges, RefusesStoresWithoutChatDrawsAndStudiesWithoutAPanel) {
  {
    auto cs = make_chat_store(2, 1, "mcq");
    auto r = run_judges(judge_study(two_sim_judges()), *cs->store, quiet());
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
    EXPECT_NE(r.status().message().find("'mcq' task"), std::string::npos) << r.status().message();
  }
  {
    TempDir d;
    auto s = Store::open(d / "empty.sqlite");
    ASSERT_TRUE(s.ok());
    auto r = run_judges(judge_study(two_sim_judges()), **s, quiet());
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("no study record"), std::string::npos) << r.status().message();
    ASSERT_TRUE((*s)->put_study({"c", "", 0, {{"task", "chat"}}}).ok());
    auto none = run_judges(judge_study(two_sim_judges()), **s, quiet());
    ASSERT_FALSE(none.ok());
    EXPECT_NE(none.status().message().find("no ok chat draws"), std::string::npos) << none.status().message();
  }
  {
    auto cs = make_chat_store(1);
    auto r = run_judges(judge_study(JudgeSpec{}), *cs->store, quiet());
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("no judge panel"), std::string::npos);
  }
}

}  // namespace
}  // namespace nf

namespace nf {
namespace {

TEST(RunJudges, UnitNamesFollowThePlanNotWhatTheStoreHoldsSoFar) {
  // The plan has 3 replicates but only replicate 0 is stored yet (a run in progress):
  // the units are already the composite names, so judgments made now and after the run
  // completes line up (they used to switch from "I0" to "I0|...|0" half way).
  auto cs = make_chat_store(2, 1);
  ASSERT_TRUE(cs->store->put_study({"chat-test", "", 0, {{"task", "chat"}, {"replicates", 3}}}).ok());
  ASSERT_TRUE(run_judges(judge_study(two_sim_judges()), *cs->store, quiet()).ok());
  for (const auto& r : all_judgments(*cs->store))
    EXPECT_EQ(r.item.find('|'), r.item.size() - std::string("|truncate_last_turn|default|0").size()) << r.item;
  // One draw per item in the plan: the bare item id.
  auto single = make_chat_store(2, 1);
  ASSERT_TRUE(run_judges(judge_study(two_sim_judges()), *single->store, quiet()).ok());
  for (const auto& r : all_judgments(*single->store)) EXPECT_EQ(r.item.find('|'), std::string::npos) << r.item;
}

TEST(RunJudges, OtherSettingsStopTheRunUnlessRefreshAndRefreshDoesNotDuplicate) {
  auto cs = make_chat_store(3, 1);
  Study study = judge_study(two_sim_judges());
  auto first = run_judges(study, *cs->store, quiet());
  ASSERT_TRUE(first.ok()) << first.status().to_string();
  const size_t n = all_judgments(*cs->store).size();
  ASSERT_EQ(n, 12u);

  Study changed = study;
  changed.judge.criterion = "The response is written in French.";
  auto r = run_judges(changed, *cs->store, quiet());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("the criterion changed"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("--refresh"), std::string::npos);

  Study hotter = study;
  hotter.judge.temperature = 1.0;
  r = run_judges(hotter, *cs->store, quiet());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("temperature was 0"), std::string::npos) << r.status().message();

  JudgeOptions refresh = quiet();
  refresh.refresh = true;
  r = run_judges(changed, *cs->store, refresh);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->executed, 12);
  const auto rows = all_judgments(*cs->store);
  EXPECT_EQ(rows.size(), n);  // replaced, not added
  for (const auto& row : rows) EXPECT_EQ(row.settings["criterion_sha256"], sha256_hex(changed.judge.criterion));
  // The same settings again: nothing to do, no error.
  auto again = run_judges(changed, *cs->store, quiet());
  ASSERT_TRUE(again.ok()) << again.status().to_string();
  EXPECT_EQ(again->executed, 0);
}

}  // namespace
}  // namespace nf
