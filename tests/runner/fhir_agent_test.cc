// Task fhir_agent (task/fhir_agent_task.h) end to end in process: the registry's factory
// on the real MedAgentBench files, the simulated FHIR agent, the record server and the
// reference grader (task/fhir_grader.h).
#include <gtest/gtest.h>

#include <map>

#include "common/test_data.h"
#include "runner/runner.h"
#include "sim/sim.h"
#include "task/fhir_agent_task.h"

namespace nf {
namespace {

Study fhir_study(nlohmann::json options = nlohmann::json::object()) {
  Study st;
  st.task = "fhir_agent";
  st.dataset.format = "medagentbench";
  st.dataset.path = testing::data_dir() + "/medagentbench/test_data_v2.json";
  st.task_options = std::move(options);
  return st;
}

struct RunOut {
  TaskDrawResult res;
};

// Runs every item once with `reply` answering each model call.
std::vector<TaskDrawResult> run_all(const Task& task, const std::function<ChatResponse(const ChatRequest&)>& reply,
                                    double temperature = 0.0, int replicate = 0) {
  std::vector<TaskDrawResult> out;
  for (size_t i = 0; i < task.items().size(); ++i) {
    DrawContext ctx;
    ctx.key = {"s", task.items()[i].id, "none", "c", replicate};
    ctx.config.temperature = temperature;
    ctx.model = "sim-fhir";
    ctx.seed = 1000 + replicate;
    out.push_back(task.run(i, "none", ctx, reply));
  }
  return out;
}

ChatResponse ok_reply(std::string content) {
  ChatResponse r;
  r.kind = ResponseKind::kOk;
  r.content = std::move(content);
  return r;
}

TEST(FhirActionTest, ParsesTheThreeFormsAndNamesTheRest) {
  auto g = parse_fhir_action("  GET http://h/fhir/Patient?identifier=S1\n");
  EXPECT_EQ(g.kind, FhirAction::Kind::kGet);
  EXPECT_EQ(g.url, "http://h/fhir/Patient?identifier=S1");
  auto p = parse_fhir_action("```\nPOST http://h/fhir/ServiceRequest\n{\"resourceType\": \"ServiceRequest\"}\n```");
  EXPECT_EQ(p.kind, FhirAction::Kind::kPost);
  EXPECT_TRUE(p.body_is_json);
  EXPECT_EQ(p.body["resourceType"], "ServiceRequest");
  auto bad_body = parse_fhir_action("POST http://h/fhir/ServiceRequest\n{resourceType: x}");
  EXPECT_EQ(bad_body.kind, FhirAction::Kind::kPost);
  EXPECT_FALSE(bad_body.body_is_json);
  auto f = parse_fhir_action("FINISH([3.9, \"2023-11-09T03:05:00+00:00\"])");
  EXPECT_EQ(f.kind, FhirAction::Kind::kFinish);
  EXPECT_EQ(f.answer.size(), 2u);
  auto f2 = parse_fhir_action("FINISH(3.9 mmol/L)");
  EXPECT_EQ(f2.kind, FhirAction::Kind::kFinish);
  EXPECT_TRUE(f2.answer.is_null());
  EXPECT_EQ(parse_fhir_action("I think the potassium is fine.").kind, FhirAction::Kind::kInvalid);
  EXPECT_EQ(parse_fhir_action("").kind, FhirAction::Kind::kInvalid);
  EXPECT_EQ(parse_fhir_action("FINISH([1]").kind, FhirAction::Kind::kInvalid);
}

TEST(FhirActionTest, CanonicalTargetSortsQueryParameters) {
  const std::string b = "http://h/fhir/";
  EXPECT_EQ(canonical_fhir_target("http://h/fhir/Observation?patient=S1&code=K&_format=json", b), "Observation?code=K&patient=S1");
  EXPECT_EQ(canonical_fhir_target("http://h/fhir/Observation?code=K&patient=S1", b), "Observation?code=K&patient=S1");
  EXPECT_EQ(canonical_fhir_target("http://h/fhir/", b), "");
  EXPECT_EQ(canonical_fhir_target("http://h/fhir", b), "");
  EXPECT_EQ(canonical_fhir_target("http://other/fhir/Observation", b), "!http://other/fhir/Observation");
}

TEST(FhirAgentTaskTest, PerfectAgentPassesAll150WriteTasks) {
  auto task = make_task(fhir_study());
  ASSERT_TRUE(task.ok()) << task.status().message();
  ASSERT_EQ((*task)->items().size(), 150u);
  SimBackend sim(*SimParams::from_json(nlohmann::json::object()));
  auto results = run_all(**task, [&](const ChatRequest& r) { return sim.complete(r); });
  int pass = 0;
  for (size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    ASSERT_EQ(r.status, DrawStatus::kOk) << (*task)->items()[i].id << ": " << r.error;
    EXPECT_TRUE(r.detail["verdict"]["pass"].get<bool>()) << (*task)->items()[i].id << ": " << r.detail["verdict"]["reason"];
    pass += r.detail["verdict"]["pass"].get<bool>();
  }
  EXPECT_EQ(pass, 150);
}

TEST(FhirAgentTaskTest, WrongAgentsFailTheRightTasks) {
  auto task = make_task(fhir_study());
  ASSERT_TRUE(task.ok());
  // An agent that never orders passes exactly the tasks whose correct action is to order
  // nothing: task5 with no magnesium <= 1.9 in 24 h (28), task9 with K >= 3.5 (29),
  // task10 with a fresh HbA1C (13) -- provided it reports [] (accepted where the task
  // only asks to check).
  auto silent = run_all(**task, [](const ChatRequest&) { return ok_reply("FINISH([])"); });
  std::map<std::string, int> pass;
  for (size_t i = 0; i < silent.size(); ++i)
    pass[(*task)->items()[i].cluster] += silent[i].detail["verdict"]["pass"].get<bool>();
  EXPECT_EQ(pass["task3"], 0);
  EXPECT_EQ(pass["task8"], 0);
  EXPECT_EQ(pass["task5"], 28);
  EXPECT_EQ(pass["task9"], 29);
  EXPECT_EQ(pass["task10"], 13);
  // An agent that always misroutes its orders to the base URL fails every ordering task
  // (30 + 2 + 30 + 1 + 17 = 80) and passes the other 70.
  SimBackend sim(*SimParams::from_json(nlohmann::json::object()));
  auto misroute = run_all(**task, [&](const ChatRequest& r) {
    ChatRequest q = r;
    q.extra_body["sim_fhir_agent"] = {{"misrouting", 1.0}, {"scale_with_temperature", false}};
    return sim.complete(q);
  });
  int passed = 0, rejected = 0;
  for (const auto& r : misroute) {
    passed += r.detail["verdict"]["pass"].get<bool>();
    for (const auto& o : r.detail["orders"]) rejected += o["rejected"].get<bool>();
  }
  EXPECT_EQ(passed, 70);
  EXPECT_EQ(rejected, 30 + 2 + 30 + 2 * 1 + 17) << "every order to the base URL is one the record server rejects";
}

TEST(FhirAgentTaskTest, FeedbackModesDifferOnlyInWhatTheAgentIsShown) {
  for (const char* mode : {"benchmark", "record"}) {
    SCOPED_TRACE(mode);
    auto task = make_task(fhir_study({{"feedback", mode}, {"families", {"task8"}}, {"per_family", 1}}));
    ASSERT_TRUE(task.ok()) << task.status().message();
    SimBackend sim(*SimParams::from_json(nlohmann::json::object()));
    auto r = run_all(**task, [&](const ChatRequest& req) {
      ChatRequest q = req;
      q.extra_body["sim_fhir_agent"] = {{"misrouting", 1.0}, {"scale_with_temperature", false}};
      return sim.complete(q);
    })[0];
    ASSERT_EQ(r.status, DrawStatus::kOk);
    const auto& post = r.detail["trajectory"][0];
    EXPECT_EQ(post["action"]["method"], "POST");
    EXPECT_EQ(post["action"]["url"], "");
    EXPECT_EQ(post["server"]["status"], 400) << "what the record server would have answered";
    EXPECT_EQ(post["status"], std::string(mode) == "record" ? 400 : 200) << "what the agent was shown";
  }
}

TEST(FhirAgentTaskTest, InvalidReplyEndsTheRunAsParseErrorNamingTheTurn) {
  auto task = make_task(fhir_study({{"families", {"task9"}}, {"per_family", 1}, {"get_cut_chars", 100}}));
  ASSERT_TRUE(task.ok());
  int calls = 0;
  auto r = run_all(**task, [&](const ChatRequest&) {
    return ok_reply(calls++ == 0 ? "GET http://localhost:8080/fhir/Observation?patient=S3241217&code=K" : "Let me think.");
  })[0];
  EXPECT_EQ(r.status, DrawStatus::kParseError);
  EXPECT_EQ(r.detail["failing_turn"], 1);
  EXPECT_EQ(r.detail["end"], "parse_error");
  EXPECT_TRUE(r.outcomes.empty());
  EXPECT_TRUE(r.detail["trajectory"][0]["truncated"].get<bool>());
  EXPECT_EQ(r.detail["trajectory"][0]["response"].get<std::string>().size(), 100u);
  // The round limit: an agent that only GETs ends ok, unfinished, failing.
  auto limit = run_all(**task, [&](const ChatRequest&) { return ok_reply("GET http://localhost:8080/fhir/Patient?identifier=S3241217"); })[0];
  EXPECT_EQ(limit.status, DrawStatus::kOk);
  EXPECT_EQ(limit.detail["end"], "round_limit");
  EXPECT_EQ(limit.calls, 8);
  EXPECT_FALSE(limit.detail["verdict"]["pass"].get<bool>());
}

TEST(FhirAgentTaskTest, SimGarbageIsAParseErrorAndBadSimParamsAnApiError) {
  auto task = make_task(fhir_study({{"families", {"task3"}}, {"per_family", 2}}));
  ASSERT_TRUE(task.ok());
  SimBackend sim(*SimParams::from_json(nlohmann::json::object()));
  auto with = [&](nlohmann::json noise) {
    return run_all(**task, [&](const ChatRequest& r) {
      ChatRequest q = r;
      q.extra_body["sim_fhir_agent"] = noise;
      return sim.complete(q);
    }, 1.0);
  };
  for (const auto& r : with({{"garbage", 1.0}})) {
    EXPECT_EQ(r.status, DrawStatus::kParseError);
    EXPECT_EQ(r.detail["failing_turn"], 0);
  }
  for (const auto& r : with({{"omission", 2.0}})) {
    EXPECT_EQ(r.status, DrawStatus::kApiError);
    EXPECT_NE(r.error.find("sim_fhir_agent.omission"), std::string::npos) << r.error;
  }
}

TEST(FhirAgentTaskTest, BadOptionsAreNamed) {
  auto t = make_task(fhir_study({{"feedback", "loud"}}));
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("task_options.feedback"), std::string::npos);
  auto f = make_task(fhir_study({{"families", {"task1"}}}));
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("not a write family"), std::string::npos);
}

}  // namespace
}  // namespace nf

namespace nf {
namespace {

// Tester finding 22.12 (session 9): the fhir_agent task's option errors named no file or
// line ("task_options.families: 'task1' is not a write family"), and a per_family above
// what a family holds silently ran fewer tasks.
Study parsed_fhir_study(const std::string& options_yaml) {
  const std::string dataset = testing::data_dir() + "/medagentbench/test_data_v2.json";
  auto st = parse_study("name: f\ntask: fhir_agent\ndataset: {format: medagentbench, path: '" + dataset +
                            "'}\nsubjects: [{name: s, model: m}]\ntask_options:\n" + options_yaml,
                        "/tmp/nf-where/study.yaml");
  EXPECT_TRUE(st.ok()) << st.status().message();
  return st.ok() ? *st : Study();
}

TEST(FhirAgentOptions, ErrorsNameFileAndLineOfTheKey) {
  auto task = make_task(parsed_fhir_study("  feedback: record\n  families: [task3, task1]\n"));
  ASSERT_FALSE(task.ok());
  // Line 7: the `families` key (after name, task, dataset, subjects, task_options, feedback).
  EXPECT_NE(task.status().message().find("/tmp/nf-where/study.yaml:7: task_options.families: 'task1' is not a "
                                         "write family"),
            std::string::npos)
      << task.status().message();
}

TEST(FhirAgentOptions, PerFamilyAboveWhatAFamilyHoldsIsRefused) {
  // Every write family of test_data_v2.json holds 30 tasks (150 write tasks, 5 families).
  auto ok = make_task(parsed_fhir_study("  families: [task3]\n  per_family: 30\n"));
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ((*ok)->items().size(), 30u);
  auto task = make_task(parsed_fhir_study("  families: [task3]\n  per_family: 31\n"));
  ASSERT_FALSE(task.ok());
  EXPECT_NE(task.status().message().find("study.yaml:7: task_options.per_family: 31 tasks per family asked, but "
                                         "family task3 has 30"),
            std::string::npos)
      << task.status().message();
}

}  // namespace
}  // namespace nf
