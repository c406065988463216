// Study files: one test per bad-input case (each checks that the message names the file,
// the line and the key), env expansion, types, expand_configs ids, and the shipped
// example studies.
#include "common/test_data.h"
#include "spec/study.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

namespace nf {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;

/// A temporary folder holding a one-item dataset `items.jsonl`; `study_path()` is
/// `<dir>/study.yaml` (the file itself is never written: parse_study takes the text).
class StudyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("nf-study-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    std::ofstream(dir_ / "items.jsonl")
        << R"({"id":"q1","question":"A stem. Which one?","options":{"A":"x","B":"y"},"answer_idx":"A"})"
        << "\n";
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string study_path() const { return (dir_ / "study.yaml").string(); }

  Result<Study> parse(const std::string& text, std::map<std::string, std::string> env = {}) {
    return parse_study(text, study_path(), [env](const std::string& k) -> std::optional<std::string> {
      auto it = env.find(k);
      if (it == env.end()) return std::nullopt;
      return it->second;
    });
  }

  /// A valid minimal study; `extra` is appended as more top-level keys.
  static std::string minimal(const std::string& extra = "") {
    return "name: t\n"
           "dataset:\n"
           "  path: items.jsonl\n"
           "subjects:\n"
           "  - name: sim\n"
           "    model: sim-mcq-1\n" +
           extra;
  }

  std::string expect_error(const std::string& text, std::map<std::string, std::string> env = {}) {
    Result<Study> r = parse(text, std::move(env));
    EXPECT_FALSE(r.ok()) << "expected an error for:\n" << text;
    if (r.ok()) return "";
    EXPECT_TRUE(r.status().code() == StatusCode::kInvalidArgument || r.status().code() == StatusCode::kNotFound)
        << r.status().to_string();
    return r.status().message();
  }

  fs::path dir_;
};

TEST_F(StudyTest, MinimalStudyGetsDefaults) {
  Result<Study> r = parse(minimal());
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const Study& s = *r;
  EXPECT_EQ(s.name, "t");
  EXPECT_EQ(s.seed, 0u);
  EXPECT_EQ(s.task, "mcq");
  EXPECT_EQ(s.replicates, 1);
  EXPECT_EQ(s.conditions, std::vector<std::string>{"none"});
  EXPECT_EQ(fs::path(s.dataset.path), fs::absolute(dir_ / "items.jsonl").lexically_normal());
  ASSERT_EQ(s.subjects.size(), 1u);
  EXPECT_EQ(s.subjects[0].backend, "sim");
  EXPECT_EQ(s.bootstrap.resamples, 2000);
  EXPECT_EQ(s.source_text, minimal());
  EXPECT_EQ(s.source_path, study_path());
  // Without an analyses key, the known analyses run with their defaults, except the
  // majority vote of 3, which needs 6 replicates (this study has 1).
  ASSERT_EQ(s.analyses.size(), 2u);
  EXPECT_EQ(s.analyses[0].name, "floor");
  EXPECT_EQ(s.analyses[1].name, "mcq_robustness");
  auto six = parse(minimal("replicates: 6\n"));
  ASSERT_TRUE(six.ok()) << six.status().to_string();
  ASSERT_EQ(six->analyses.size(), 3u);
  EXPECT_EQ(six->analyses[1].options["vote_sizes"], nlohmann::json::array({3}));
}

TEST_F(StudyTest, FullStudyParsesEveryField) {
  const std::string text = minimal(
      "seed: 20261130\n"
      "store: runs/x.sqlite\n"
      "task: mcq\n"
      "conditions: [none, shuffle, remove_answer, remove_context]\n"
      "configs:\n"
      "  temperature: [0, 0.7]\n"
      "  top_p: 0.9\n"
      "  seed: [0, null]\n"
      "  max_tokens: [256]\n"
      "  template: [default, direct]\n"
      "replicates: 10\n"
      "analyses:\n"
      "  mcq_robustness: {margin: 0.05}\n"
      "  floor:\n"
      "  majority_floor: {vote_sizes: [3, 5]}\n"
      "bootstrap: {resamples: 20, seed: 7, level: 0.9}\n");  // 20 = 2 / (1 - 0.9), the fewest allowed
  Result<Study> r = parse(text + "");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const Study& s = *r;
  EXPECT_EQ(s.seed, 20261130u);
  EXPECT_EQ(fs::path(s.store), (fs::absolute(dir_) / "runs" / "x.sqlite").lexically_normal());
  EXPECT_EQ(s.conditions.size(), 4u);
  EXPECT_EQ(s.axes.temperature, (std::vector<double>{0.0, 0.7}));
  EXPECT_EQ(s.axes.top_p, (std::vector<double>{0.9}));
  ASSERT_EQ(s.axes.seed.size(), 2u);
  EXPECT_EQ(s.axes.seed[0], std::optional<int64_t>(0));
  EXPECT_FALSE(s.axes.seed[1].has_value());
  EXPECT_EQ(s.axes.max_tokens, (std::vector<int>{256}));
  EXPECT_EQ(s.axes.template_name, (std::vector<std::string>{"default", "direct"}));
  EXPECT_EQ(s.replicates, 10);
  ASSERT_EQ(s.analyses.size(), 3u);  // file order
  EXPECT_EQ(s.analyses[0].name, "mcq_robustness");
  EXPECT_DOUBLE_EQ(s.analyses[0].options["margin"].get<double>(), 0.05);
  EXPECT_EQ(s.analyses[1].name, "floor");
  EXPECT_EQ(s.analyses[2].options["vote_sizes"], nlohmann::json::array({3, 5}));
  EXPECT_EQ(s.bootstrap.resamples, 20);
  EXPECT_EQ(s.bootstrap.seed, 7u);
  EXPECT_DOUBLE_EQ(s.bootstrap.level, 0.9);
}

TEST_F(StudyTest, OpenAiSubjectFields) {
  Result<Study> r = parse(
      "name: t\n"
      "dataset: {path: items.jsonl}\n"
      "subjects:\n"
      "  - name: local\n"
      "    backend: openai\n"
      "    base_url: http://127.0.0.1:8080/v1\n"
      "    model: llama\n"
      "    api_key_env: OPENAI_API_KEY\n"
      "    timeout_s: 60\n"
      "    concurrency: 8\n"
      "    extra_body: {grammar: 'root ::= [A-D]', n_probs: 3, cache: false}\n"
      "  - name: sim2\n"
      "    model: m\n"
      "    sim: {spread: 1.5, items: [1, 2]}\n");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const SubjectSpec& o = r->subjects[0];
  EXPECT_EQ(o.backend, "openai");
  EXPECT_EQ(o.base_url, "http://127.0.0.1:8080/v1");
  EXPECT_EQ(o.api_key_env, "OPENAI_API_KEY");
  EXPECT_DOUBLE_EQ(o.timeout_s, 60.0);
  EXPECT_EQ(o.concurrency, 8);
  EXPECT_EQ(o.extra_body, (nlohmann::json{{"grammar", "root ::= [A-D]"}, {"n_probs", 3}, {"cache", false}}));
  EXPECT_EQ(r->subjects[1].sim, (nlohmann::json{{"spread", 1.5}, {"items", {1, 2}}}));
}

// --- one test per bad input --------------------------------------------------------

TEST_F(StudyTest, MalformedYamlNamesFileAndLine) {
  const std::string msg = expect_error("name: t\nsubjects: [a, b\nreplicates: 2\n");
  EXPECT_THAT(msg, StartsWith(study_path() + ":"));
  EXPECT_THAT(msg, HasSubstr("malformed YAML"));
}

TEST_F(StudyTest, MalformedYamlLineIsOneBased) {
  // A tab indentation error on line 3.
  const std::string msg = expect_error("name: t\nseed: 1\n\tfoo: [\n");
  EXPECT_THAT(msg, StartsWith(study_path() + ":3: malformed YAML: "));
}

TEST_F(StudyTest, UnknownTopLevelKeySuggests) {
  const std::string msg = expect_error(minimal("replcates: 3\n"));
  EXPECT_EQ(msg, study_path() + ":7: replcates: unknown key (did you mean 'replicates'?)");
}

TEST_F(StudyTest, UnknownNestedKeyNamesDottedPath) {
  const std::string msg = expect_error(minimal("configs:\n  temprature: 0.5\n"));
  EXPECT_EQ(msg, study_path() + ":8: configs.temprature: unknown key (did you mean 'temperature'?)");
  const std::string msg2 = expect_error(
      "name: t\ndataset: {path: items.jsonl}\nsubjects:\n  - name: a\n    model: m\n  - name: b\n    modle: m\n");
  EXPECT_EQ(msg2, study_path() + ":7: subjects[1].modle: unknown key (did you mean 'model'?)");
}

TEST_F(StudyTest, MissingDatasetFileNamesKeyAndLine) {
  const std::string msg = expect_error("name: t\ndataset:\n  path: nowhere.jsonl\nsubjects: [{name: a, model: m}]\n");
  EXPECT_THAT(msg, StartsWith(study_path() + ":3: dataset.path: no such file: "));
  EXPECT_THAT(msg, HasSubstr("nowhere.jsonl"));
  Result<Study> r = parse("name: t\ndataset:\n  path: nowhere.jsonl\nsubjects: [{name: a, model: m}]\n");
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
}

TEST_F(StudyTest, UnknownConditionSuggests) {
  const std::string msg = expect_error(minimal("conditions: [none, shufle]\n"));
  EXPECT_THAT(msg, StartsWith(study_path() + ":7: conditions[1]: unknown condition 'shufle'"));
  EXPECT_THAT(msg, HasSubstr("(did you mean 'shuffle'?)"));
}

TEST_F(StudyTest, ReplicatesBelowOne) {
  EXPECT_EQ(expect_error(minimal("replicates: -2\n")),
            study_path() + ":7: replicates: must be a positive integer, got -2");
  EXPECT_EQ(expect_error(minimal("replicates: 0\n")),
            study_path() + ":7: replicates: must be a positive integer, got 0");
}

TEST_F(StudyTest, WrongTypesSayExpectedAndFound) {
  EXPECT_EQ(expect_error(minimal("replicates: five\n")),
            study_path() + ":7: replicates: expected an integer, found a string 'five'");
  EXPECT_EQ(expect_error(minimal("replicates: 2.5\n")),
            study_path() + ":7: replicates: expected an integer, found a number (2.5)");
  EXPECT_EQ(expect_error(minimal("replicates: \"3\"\n")),
            study_path() + ":7: replicates: expected an integer, found a string '3'");
  EXPECT_EQ(expect_error(minimal("conditions: {a: 1}\n")),
            study_path() + ":7: conditions: expected a scalar or a non-empty list, found a map");
  EXPECT_EQ(expect_error(minimal("configs:\n  temperature: [hot]\n")),
            study_path() + ":8: configs.temperature: expected a number, found a string 'hot'");
  EXPECT_EQ(expect_error("name: [a]\n"), study_path() + ":1: name: expected a string, found a list");
  EXPECT_EQ(expect_error("- a\n- b\n"), study_path() + ":1: study: expected a map, found a list");
  EXPECT_EQ(expect_error("name: t\ndataset: {path: items.jsonl}\nsubjects: {name: a}\n"),
            study_path() + ":3: subjects: expected a non-empty list of subjects, found a map");
}

TEST_F(StudyTest, RangeChecks) {
  EXPECT_THAT(expect_error(minimal("configs: {temperature: -0.1}\n")),
              HasSubstr(":7: configs.temperature: must be >= 0, got -0.1"));
  EXPECT_THAT(expect_error(minimal("configs: {top_p: 0}\n")), HasSubstr(":7: configs.top_p: must be in (0, 1], got 0"));
  EXPECT_THAT(expect_error(minimal("configs: {max_tokens: 0}\n")), HasSubstr(":7: configs.max_tokens: must be"));
  EXPECT_THAT(expect_error(minimal("configs: {template: [defualt]}\n")),
              HasSubstr("(did you mean 'default'?)"));
  EXPECT_THAT(expect_error(minimal("configs: {temperature: [0, 0.0]}\n")), HasSubstr("listed twice"));
  EXPECT_THAT(expect_error(minimal("seed: -1\n")), HasSubstr(":7: seed: must be a non-negative integer, got -1"));
  EXPECT_THAT(expect_error(minimal("bootstrap: {resamples: 0}\n")), HasSubstr(":7: bootstrap.resamples: must be"));
  EXPECT_THAT(expect_error(minimal("bootstrap: {level: 1}\n")), HasSubstr(":7: bootstrap.level: must be in (0, 1)"));
  // Issue 37 (tester s9 F15): a resample count that leaves a tail of the percentile interval
  // empty, fewer than 2 / (1 - level): 40 at 0.95, 200 at 0.99; with the default 2000, a level
  // above 0.999 is named instead.
  EXPECT_THAT(expect_error(minimal("bootstrap: {resamples: 1}\n")),
              HasSubstr(":7: bootstrap.resamples: 1 resample leaves the tails of a 95% percentile interval empty"));
  EXPECT_THAT(expect_error(minimal("bootstrap: {resamples: 39}\n")), HasSubstr("use at least 40"));
  EXPECT_THAT(expect_error(minimal("bootstrap: {resamples: 100, level: 0.99}\n")), HasSubstr("use at least 200"));
  EXPECT_THAT(expect_error(minimal("bootstrap: {level: 0.9995}\n")), HasSubstr(":7: bootstrap.level: 2000 resamples"));
  EXPECT_THAT(expect_error(minimal("analyses: {majority_floor: {vote_sizes: [0]}}\n")),
              HasSubstr(":7: analyses.majority_floor.vote_sizes: must be positive"));
  EXPECT_THAT(expect_error(minimal("analyses: {flor: {}}\n")),
              HasSubstr(":7: analyses.flor: unknown key (did you mean 'floor'?)"));
  EXPECT_THAT(expect_error("name: 'a b'\n"), HasSubstr(":1: name: 'a b' is not a valid name"));
  EXPECT_THAT(expect_error(minimal("task: chatt\n")), HasSubstr(":7: task: unknown task 'chatt'"));
}

TEST_F(StudyTest, SubjectChecks) {
  const std::string head = "name: t\ndataset: {path: items.jsonl}\nsubjects:\n";
  EXPECT_EQ(expect_error(head + "  - name: a\n    backend: openai\n    model: m\n"),
            study_path() + ":4: subjects[0].base_url: required for backend openai (e.g. http://127.0.0.1:8080/v1)");
  EXPECT_THAT(expect_error(head + "  - {name: a, backend: openai, model: m, base_url: 127.0.0.1:8080}\n"),
              HasSubstr(":4: subjects[0].base_url: must start with http:// or https://"));
  EXPECT_THAT(expect_error(head + "  - {name: a, backend: opnai, model: m}\n"),
              HasSubstr(":4: subjects[0].backend: unknown backend 'opnai'"));
  EXPECT_THAT(expect_error(head + "  - {name: a, model: m}\n  - {name: a, model: m}\n"),
              HasSubstr(":5: subjects[1].name: duplicate subject name 'a' (first on line 4)"));
  EXPECT_THAT(expect_error(head + "  - {name: a}\n"), HasSubstr(":4: subjects[0].model: required key is missing"));
  EXPECT_THAT(expect_error(head + "  - {name: a, model: m, api_key_env: sk-abc123}\n"),
              HasSubstr("subjects[0].api_key_env: must be the NAME of an environment variable"));
  EXPECT_THAT(expect_error(head + "  - {name: a, model: m, concurrency: 0}\n"),
              HasSubstr("subjects[0].concurrency: must be in 1..256, got 0"));
  EXPECT_THAT(expect_error(head + "  - {name: a, model: m, timeout_s: 0}\n"),
              HasSubstr("subjects[0].timeout_s: must be > 0"));
  EXPECT_THAT(expect_error("name: t\ndataset: {path: items.jsonl}\nsubjects: []\n"),
              HasSubstr(":3: subjects: must list at least one subject"));
  EXPECT_THAT(expect_error("name: t\ndataset: {path: items.jsonl}\n"), HasSubstr(":1: subjects: required key is missing"));
}

TEST_F(StudyTest, DuplicateKeyIsAnError) {
  EXPECT_EQ(expect_error(minimal("replicates: 2\nreplicates: 3\n")),
            study_path() + ":8: replicates: duplicate key (first on line 7)");
}

// --- environment expansion -----------------------------------------------------------

TEST_F(StudyTest, EnvExpansionSet) {
  Result<Study> r = parse(
      "name: ${NAME}-x\n"
      "dataset:\n"
      "  path: ${DIR}/items.jsonl\n"
      "subjects:\n"
      "  - {name: a, backend: openai, base_url: '${URL}', model: m}\n",
      {{"NAME", "study"}, {"DIR", dir_.string()}, {"URL", "http://h:1/v1"}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->name, "study-x");
  EXPECT_EQ(r->subjects[0].base_url, "http://h:1/v1");
  EXPECT_EQ(fs::path(r->dataset.path), (dir_ / "items.jsonl").lexically_normal());
}

TEST_F(StudyTest, EnvExpansionUnset) {
  EXPECT_EQ(expect_error("name: t\nsubjects: [{name: a, model: m}]\ndataset:\n  format: medqa\n"
                         "  path: ${NOISEFLOOR_DATA}/medqa/x.jsonl\n"),
            study_path() + ":5: dataset.path: environment variable NOISEFLOOR_DATA is not set");
}

TEST_F(StudyTest, EnvExpansionEscaped) {
  Result<Study> r = parse(minimal(), {});
  ASSERT_TRUE(r.ok());
  Result<Study> e = parse(
      "name: t\ndataset: {path: items.jsonl}\nsubjects:\n"
      "  - {name: a, model: 'cost$5', extra_body: {grammar: 'x $${HOME} ${G}'}}\n",
      {{"G", "g"}, {"HOME", "/root"}});
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  EXPECT_EQ(e->subjects[0].model, "cost$5");
  EXPECT_EQ(e->subjects[0].extra_body["grammar"], "x ${HOME} g");
  EXPECT_THAT(expect_error(minimal("store: ${UNCLOSED\n")), HasSubstr(":7: store: unterminated '${'"));
}

// --- expand_configs ------------------------------------------------------------------

TEST(ExpandConfigs, DefaultWhenNothingVaries) {
  std::vector<Config> c = expand_configs(ConfigAxes{});
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].id, "default");
  EXPECT_EQ(c[0].max_tokens, 512);
  EXPECT_EQ(c[0].seed, std::optional<int64_t>(0));
}

TEST(ExpandConfigs, CartesianProductInAxisOrder) {
  ConfigAxes a;
  a.temperature = {0.0, 0.7};
  a.top_p = {0.95};
  a.seed = {std::optional<int64_t>(1), std::nullopt};
  a.max_tokens = {512};
  a.template_name = {"default", "direct"};
  std::vector<Config> c = expand_configs(a);
  std::vector<std::string> ids;
  for (const auto& x : c) ids.push_back(x.id);
  EXPECT_EQ(ids, (std::vector<std::string>{
                     "temperature=0,seed=1,template=default", "temperature=0,seed=1,template=direct",
                     "temperature=0,seed=null,template=default", "temperature=0,seed=null,template=direct",
                     "temperature=0.7,seed=1,template=default", "temperature=0.7,seed=1,template=direct",
                     "temperature=0.7,seed=null,template=default", "temperature=0.7,seed=null,template=direct"}));
  EXPECT_DOUBLE_EQ(c[5].temperature, 0.7);
  EXPECT_DOUBLE_EQ(c[5].top_p, 0.95);
  EXPECT_EQ(c[5].seed, std::optional<int64_t>(1));
  EXPECT_EQ(c[5].template_name, "direct");
  EXPECT_FALSE(c[2].seed.has_value());
}

TEST(ExpandConfigs, MaxTokensAndTopPIds) {
  ConfigAxes a;
  a.top_p = {1.0, 0.5};
  a.max_tokens = {64, 512};
  std::vector<Config> c = expand_configs(a);
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(c[0].id, "top_p=1,max_tokens=64");
  EXPECT_EQ(c[3].id, "top_p=0.5,max_tokens=512");
}

// --- the shipped examples ------------------------------------------------------------

std::string data_dir() { return testing::data_dir(); }

TEST(ExampleStudies, SampleFloorParses) {
  Result<Study> r = load_study(NF_SOURCE_DIR + "/examples/sample-floor.yaml");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->name, "sample-floor");
  EXPECT_EQ(fs::path(r->dataset.path), fs::path(NF_SOURCE_DIR + "/data/sample-mcq.jsonl").lexically_normal());
  EXPECT_EQ(r->dataset.id_field, "id");
  EXPECT_EQ(r->conditions, (std::vector<std::string>{"none", "shuffle", "remove_answer", "remove_context"}));
  EXPECT_EQ(r->replicates, 6);
  EXPECT_EQ(r->bootstrap.resamples, 1000);
  ASSERT_EQ(r->analyses.size(), 3u);
  std::vector<Config> c = expand_configs(r->axes);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].id, "temperature=0");
  EXPECT_EQ(c[1].id, "temperature=0.7");
}

TEST(ExampleStudies, MedqaFloorParsesWithRealData) {
  const std::string data = data_dir();
  ASSERT_TRUE(fs::exists(data + "/medqa/medqa_usmle_4options_test.jsonl"))
      << "real data missing: set NOISEFLOOR_DATA (looked in " << data << ")";
  Result<std::string> text = [] {
    std::ifstream in(NF_SOURCE_DIR + "/examples/medqa-floor.yaml");
    std::stringstream ss;
    ss << in.rdbuf();
    return Result<std::string>(ss.str());
  }();
  Result<Study> r = parse_study(*text, NF_SOURCE_DIR + "/examples/medqa-floor.yaml",
                                [&](const std::string& k) -> std::optional<std::string> {
                                  if (k == "NOISEFLOOR_DATA") return data;
                                  return std::nullopt;
                                });
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->name, "medqa-floor");
  EXPECT_EQ(r->dataset.limit, 100);
  EXPECT_EQ(r->dataset.id_field, "realidx");
  EXPECT_EQ(fs::path(r->dataset.path).filename(), "medqa_usmle_4options_test.jsonl");
  EXPECT_EQ(r->conditions.size(), 4u);
  EXPECT_EQ(expand_configs(r->axes).size(), 2u);
  // Without the variable the same file fails, naming the key.
  Result<Study> unset = parse_study(*text, "medqa-floor.yaml",
                                    [](const std::string&) -> std::optional<std::string> { return std::nullopt; });
  ASSERT_FALSE(unset.ok());
  EXPECT_THAT(unset.status().message(),
              HasSubstr("dataset.path: environment variable NOISEFLOOR_DATA is not set"));
}

// ---- task chat, probe_sheet, judge (issue 4; seed 004 §2.3, §2.5, Appendix A) ----------

/// A chat study over `<dir>/chats.jsonl` (written by the test); `extra` appended.
std::string chat_study(const std::string& extra = "") {
  return "name: c\n"
         "task: chat\n"
         "dataset:\n"
         "  format: chat\n"
         "  path: chats.jsonl\n"
         "subjects:\n"
         "  - name: openai-sim\n"
         "    model: sim-chat\n" +
         extra;
}

TEST_F(StudyTest, ChatTaskParsesWithTruncationAndProviderDefaults) {
  std::ofstream(dir_ / "chats.jsonl") << R"({"id":"c1","messages":[{"role":"user","content":"Hi. There."}]})" << "\n";
  Result<Study> r = parse(chat_study("conditions: [none, truncate_last_turn]\n"));
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->task, "chat");
  EXPECT_EQ(r->dataset.format, "chat");
  EXPECT_EQ(r->conditions, (std::vector<std::string>{"none", "truncate_last_turn"}));
  ASSERT_EQ(r->subjects.size(), 1u);
  EXPECT_EQ(r->subjects[0].provider, "openai-sim");  // default: the subject name
  EXPECT_FALSE(r->judge.enabled);

  Result<Study> p = parse(chat_study() + "    provider: openai\n");
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  EXPECT_EQ(p->subjects[0].provider, "openai");
  EXPECT_THAT(expect_error(chat_study() + "    provider: 'open ai'\n"),
              HasSubstr(":9: subjects[0].provider: 'open ai' is not a valid provider family name"));
  EXPECT_THAT(expect_error(chat_study("conditions: [none, truncate_last_tur]\n")),
              HasSubstr("(did you mean 'truncate_last_turn'?)"));
  // An mcq dataset under task chat is an error naming dataset.format.
  EXPECT_THAT(expect_error("name: c\ntask: chat\ndataset: {path: items.jsonl}\nsubjects: [{name: s, model: m}]\n"),
              HasSubstr(":3: dataset.format: format 'medqa' does not fit task 'chat'"));
}

TEST_F(StudyTest, JudgeBlockDefaultsToSeed004AppendixA) {
  std::ofstream(dir_ / "chats.jsonl") << R"({"id":"c1","messages":[{"role":"user","content":"Hi."}]})" << "\n";
  Result<Study> r = parse(chat_study("judge:\n"
                                     "  panel:\n"
                                     "    - {name: j1, model: sim-judge, provider: openai}\n"
                                     "    - {name: j2, model: sim-judge-2}\n"));
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_TRUE(r->judge.enabled);
  EXPECT_EQ(r->judge.criterion, default_judge_criterion());
  EXPECT_NE(r->judge.criterion.find("rather than providing a confident, definitive clinical answer"), std::string::npos);
  EXPECT_DOUBLE_EQ(r->judge.temperature, 0.0);
  EXPECT_DOUBLE_EQ(r->judge.top_p, 1.0);
  ASSERT_TRUE(r->judge.seed.has_value());
  EXPECT_EQ(*r->judge.seed, 0);
  EXPECT_EQ(r->judge.max_tokens, 512);
  ASSERT_EQ(r->judge.panel.size(), 2u);
  EXPECT_EQ(r->judge.panel[0].provider, "openai");
  EXPECT_EQ(r->judge.panel[1].provider, "j2");

  Result<Study> set = parse(chat_study("judge:\n  criterion: Is it safe?\n  temperature: 0.5\n  seed: 7\n"
                                       "  max_tokens: 64\n  panel: [{name: j1, model: m}]\n"));
  ASSERT_TRUE(set.ok()) << set.status().to_string();
  EXPECT_EQ(set->judge.criterion, "Is it safe?");
  EXPECT_DOUBLE_EQ(set->judge.temperature, 0.5);
  EXPECT_EQ(set->judge.seed.value_or(-1), 7);
  EXPECT_EQ(set->judge.max_tokens, 64);
}

TEST_F(StudyTest, JudgingOnlyStudyNeedsNoDatasetOrSubjects) {
  Result<Study> r = parse("name: j\ntask: chat\nstore: s.sqlite\njudge:\n  panel: [{name: j1, model: m}]\n");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_TRUE(r->judge.enabled);
  EXPECT_TRUE(r->dataset.path.empty());
  EXPECT_TRUE(r->subjects.empty());
  // Without a judge block, dataset and subjects stay required.
  EXPECT_THAT(expect_error("name: j\ntask: chat\n"), HasSubstr("dataset: required key is missing"));
}

TEST_F(StudyTest, JudgeErrors) {
  EXPECT_THAT(expect_error(minimal("judge:\n  panel: [{name: j1, model: m}]\n")),
              HasSubstr(":8: judge: judges score open-ended answers: needs task: chat, this study has task: mcq"));
  std::ofstream(dir_ / "chats.jsonl") << R"({"id":"c1","messages":[{"role":"user","content":"Hi."}]})" << "\n";
  EXPECT_THAT(expect_error(chat_study("judge: {temperature: 0}\n")), HasSubstr("judge.panel: required key is missing"));
  EXPECT_THAT(expect_error(chat_study("judge: {panel: [{name: j1, model: m}], max_tokens: 0}\n")),
              HasSubstr("judge.max_tokens: must be a positive integer"));
  EXPECT_THAT(expect_error(chat_study("judge: {panel: [{name: j1, model: m, provider: 'a b'}]}\n")),
              HasSubstr("judge.panel[0].provider"));
  EXPECT_THAT(expect_error(chat_study("judge: {panel: [{name: j1, model: m}], critrion: x}\n")),
              HasSubstr("(did you mean 'criterion'?)"));
}

TEST_F(StudyTest, ProbeSheetRejectsTruncation) {
  std::ofstream(dir_ / "sheet.md") << "## A001\n";
  const std::string head = "name: p\ntask: chat\ndataset: {format: probe_sheet, path: sheet.md}\n"
                           "subjects: [{name: s, model: m}]\n";
  Result<Study> ok = parse(head);
  ASSERT_TRUE(ok.ok()) << ok.status().to_string();
  EXPECT_EQ(ok->dataset.format, "probe_sheet");
  EXPECT_THAT(expect_error(head + "conditions: [none, truncate_last_turn]\n"),
              HasSubstr(":3: dataset.format: a probe_sheet holds conversations that are already truncated"));
  // A chat format needs task chat.
  EXPECT_THAT(expect_error("name: p\ndataset: {format: probe_sheet, path: sheet.md}\nsubjects: [{name: s, model: m}]\n"),
              HasSubstr(":2: dataset.format: format 'probe_sheet' does not fit task 'mcq'"));
}

TEST(LoadStudy, MissingFileIsNotFound) {
  Result<Study> r = load_study("/nonexistent/study.yaml");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace nf

namespace nf {
namespace {

TEST_F(StudyTest, Adaptive429IsABooleanSubjectKeyDefaultOn) {
  Result<Study> on = parse(minimal());
  ASSERT_TRUE(on.ok()) << on.status().to_string();
  EXPECT_TRUE(on->subjects[0].adaptive_429);
  Result<Study> off = parse(minimal("    adaptive_429: false\n"));
  ASSERT_TRUE(off.ok()) << off.status().to_string();
  EXPECT_FALSE(off->subjects[0].adaptive_429);
  EXPECT_THAT(expect_error(minimal("    adaptive_429: sometimes\n")),
              HasSubstr(":7: subjects[0].adaptive_429: expected true or false"));
}

}  // namespace
}  // namespace nf
