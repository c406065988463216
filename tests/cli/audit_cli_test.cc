// End-to-end tests of the real binary: stdout, stderr, exit codes, files written.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include <nlohmann/json.hpp>

#include "common/store_poll.h"
#include "common/process.h"
#include "common/test_data.h"
#include "store/store.h"

namespace nf {
namespace {

using testing::CmdResult;
using testing::run_cli;
using testing::slurp;
using testing::TempDir;

using testing::data_env;
void write(const std::string& path, const std::string& text) { testing::write_text(path, text); }

nlohmann::json results(const std::string& dir) { return nlohmann::json::parse(slurp(dir + "/results.json")); }

std::string sample_dataset() { return std::string(NF_SOURCE_DIR) + "/data/sample-mcq.jsonl"; }

std::string study_yaml(const std::string& name, const std::string& subjects, int replicates,
                       const std::string& dataset = sample_dataset(),
                       const std::string& conditions = "[none, shuffle, remove_answer, remove_context]") {
  return "name: " + name + "\nseed: 7\ndataset:\n  format: medqa\n  path: " + dataset + "\n" + "subjects:\n" + subjects +
         "conditions: " + conditions + "\nconfigs:\n  temperature: [0, 0.7]\nreplicates: " +
         std::to_string(replicates) +
         "\nanalyses:\n  floor: {}\n  majority_floor: {vote_sizes: [3]}\n  mcq_robustness: {}\n"
         "bootstrap: {resamples: 200, seed: 1, level: 0.95}\n";
}

const char* kSimSubject = "  - name: sim\n    backend: sim\n    model: sim-mcq-1\n";

TEST(Cli, UnknownCommandSuggestsTheClosestAndExits2) {
  TempDir d;
  CmdResult r = run_cli("auditt", d.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("did you mean 'audit'"), std::string::npos) << r.err;
}

TEST(Cli, HelpTeachesTheQuickStart) {
  TempDir d;
  CmdResult r = run_cli("--help", d.path());
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("audit"), std::string::npos);
  EXPECT_NE(r.out.find("Exit codes"), std::string::npos);
}

TEST(Cli, SampleAuditWritesBothFilesAndTemperatureZeroFloorIsZero) {
  TempDir d;
  CmdResult r = run_cli("audit " + std::string(NF_SOURCE_DIR) + "/examples/sample-floor.yaml --out " + d / "out" +
                            " --store " + d / "s.sqlite",
                        d.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(d / "out/report.md"));
  const auto j = results(d / "out");
  int t0_rows = 0;
  int64_t hot_discordant = 0;
  for (const auto& row : j["analyses"]["floor"]["rows"]) {
    if (row["config"] == "temperature=0") {
      ++t0_rows;
      EXPECT_EQ(row["discordant"], 0) << row.dump();
    } else {
      hot_discordant += row["discordant"].get<int64_t>();
    }
  }
  EXPECT_GT(t0_rows, 0);
  EXPECT_GT(hot_discordant, 0) << "temperature 0.7 should disagree with itself somewhere";
  EXPECT_NE(r.err.find("draws/s"), std::string::npos) << "progress line with rate expected on stderr";
}

TEST(Cli, MedqaFloorStudyOnRealData) {
  TempDir d;
  CmdResult r = run_cli("audit " + std::string(NF_SOURCE_DIR) + "/examples/medqa-floor.yaml --quiet --out " +
                            d / "out" + " --store " + d / "m.sqlite",
                        d.path(), data_env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = results(d / "out");
  int64_t comparisons_t0 = 0;
  for (const auto& row : j["analyses"]["floor"]["rows"]) {
    if (row["config"] == "temperature=0") {
      EXPECT_EQ(row["discordant"], 0) << row.dump();
      if (row["outcome"] == "pooled") comparisons_t0 += row["comparisons"].get<int64_t>();
    }
  }
  // 100 items x 4 conditions x C(6,2) pairs, pooled over the one independent outcome
  // (choice; correct derives from it), less pairs lost to parse errors.
  EXPECT_GT(comparisons_t0, 0);
  EXPECT_LE(comparisons_t0, 100 * 4 * 15);
  std::map<std::string, int> metrics;
  for (const auto& row : j["analyses"]["mcq_robustness"]["rows"]) ++metrics[row["metric"]];
  EXPECT_EQ(metrics["shuffle_mcnemar"], 2);
  EXPECT_EQ(metrics["inappropriate_remove_context"], 2);
  auto store = Store::open_existing(d / "m.sqlite");
  ASSERT_TRUE(store.ok());
  EXPECT_EQ(*(*store)->draw_count(), 100 * 4 * 2 * 6);
}

TEST(Cli, OpenAiSubjectAgainstServeSimMatchesInProcessSim) {
  TempDir d;
  testing::Child server = testing::spawn({"serve-sim", "--port", "0"}, d / "serve.err");
  const std::string line = testing::read_line(server);
  const auto at = line.find("http://");
  ASSERT_NE(at, std::string::npos) << "serve-sim said: " << line << slurp(d / "serve.err");
  const std::string url = line.substr(at);
  // The same subject name in two studies: request seeds follow the whole draw key
  // (subject included; issue 13 item 0), so only equal keys must give equal draws.
  write(d / "sim.yaml", study_yaml("equiv", kSimSubject, 3));
  write(d / "http.yaml",
        study_yaml("equiv", "  - name: sim\n    backend: openai\n    base_url: ${SIM_URL}\n    model: sim-mcq-1\n", 3));
  std::map<std::string, std::map<std::string, double>> by_backend;
  for (const std::string which : {"sim", "http"}) {
    CmdResult r = run_cli("audit " + d / (which + ".yaml") + " --quiet --out " + d / ("out-" + which) + " --store " +
                              d / (which + ".sqlite"),
                          d.path(), "SIM_URL=" + url);
    ASSERT_EQ(r.exit_code, 0) << which << ": " << r.err;
    auto store = Store::open_existing(d / (which + ".sqlite"));
    ASSERT_TRUE(store.ok());
    auto rows = (*store)->outcome_rows();
    ASSERT_TRUE(rows.ok());
    for (const auto& o : *rows) {
      const std::string k =
          o.item + "|" + o.condition + "|" + o.config + "|" + std::to_string(o.replicate) + "|" + o.outcome;
      by_backend[which][k] = o.value;
    }
  }
  testing::kill_and_wait(server, SIGTERM);
  EXPECT_EQ(by_backend["sim"].size(), 24u * 4 * 2 * 3 * 2);
  EXPECT_EQ(by_backend["sim"], by_backend["http"]);
}

TEST(Cli, SigkillMidRunThenResumeHoldsEveryPlannedDrawOnce) {
  TempDir d;
  const int reps = 60;  // 24 items x 4 conditions x 2 configs x 60 = 11,520 draws
  write(d / "study.yaml", study_yaml("crash", kSimSubject, reps));
  const int64_t planned = 24 * 4 * 2 * reps;
  testing::Child run =
      testing::spawn({"run", d / "study.yaml", "--quiet", "--threads", "2", "--store", d / "c.sqlite"}, d / "run.err");
  // Wait until some draws are committed, then kill without warning.
  testing::wait_for_draws(d / "c.sqlite", 300, 2000);
  testing::kill_and_wait(run, SIGKILL);
  {
    auto s = Store::open_existing(d / "c.sqlite");
    ASSERT_TRUE(s.ok());
    const int64_t after_kill = *(*s)->draw_count();
    ASSERT_GT(after_kill, 0);
    ASSERT_LT(after_kill, planned) << "the run finished before the kill; make the study larger";
  }
  CmdResult r = run_cli("run " + d / "study.yaml" + " --quiet --store " + d / "c.sqlite", d.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("already in the store"), std::string::npos) << r.err;
  auto s = Store::open_existing(d / "c.sqlite");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*(*s)->draw_count(), planned);
  auto keys = (*s)->finished_keys();
  ASSERT_TRUE(keys.ok());
  EXPECT_EQ(static_cast<int64_t>(keys->size()), planned);
  // Every draw is complete: ok draws carry both outcomes.
  auto rows = (*s)->outcome_rows();
  ASSERT_TRUE(rows.ok());
  std::map<std::string, int> per_draw;
  for (const auto& o : *rows) ++per_draw[o.subject + o.item + o.condition + o.config + std::to_string(o.replicate)];
  for (const auto& [k, n] : per_draw) ASSERT_EQ(n, 2) << k;
}

TEST(Cli, ImportedFairMedAgentDrawsReproducePublishedFloors) {
  TempDir d;
  write(d / "model_a.csv", testing::fairmedagent_model_a_csv());
  CmdResult imp = run_cli("import draws " + d / "model_a.csv" + " --store " + d / "f.sqlite", d.path());
  ASSERT_EQ(imp.exit_code, 0) << imp.err;
  CmdResult an = run_cli("analyze --store " + d / "f.sqlite" + " --out " + d / "out" + " --vote-sizes 3,5 --resamples 500",
                         d.path());
  ASSERT_EQ(an.exit_code, 0) << an.err;
  const auto j = results(d / "out");
  std::map<std::string, std::pair<int64_t, int64_t>> floor;
  for (const auto& row : j["analyses"]["floor"]["rows"])
    floor[row["outcome"]] = {row["discordant"].get<int64_t>(), row["comparisons"].get<int64_t>()};
  EXPECT_EQ(floor["pooled"], (std::pair<int64_t, int64_t>{374, 4320}));
  EXPECT_EQ(floor["admit"].first, 102);
  EXPECT_EQ(floor["cs_caution"].first, 129);
  EXPECT_EQ(floor["high_acuity"].first, 55);
  EXPECT_EQ(floor["referral"].first, 54);
  EXPECT_EQ(floor["any_opioid"].first, 18);
  EXPECT_EQ(floor["escalate_icu"].first, 16);
  std::map<int, std::pair<int64_t, int64_t>> maj;
  for (const auto& row : j["analyses"]["majority_floor"]["rows"])
    if (row["outcome"] == "pooled")
      maj[row["vote_size"].get<int>()] = {row["discordant"].get<int64_t>(), row["comparisons"].get<int64_t>()};
  EXPECT_EQ(maj[3], (std::pair<int64_t, int64_t>{12660, 201600}));
  EXPECT_EQ(maj[5], (std::pair<int64_t, int64_t>{636, 12096}));
  // Importing the same draws again is refused, not duplicated.
  CmdResult again = run_cli("import draws " + d / "model_a.csv" + " --store " + d / "f.sqlite", d.path());
  EXPECT_EQ(again.exit_code, 2) << again.err;
}

TEST(Cli, UnreachableBackendExits3) {
  TempDir d;
  const std::string subjects = "  - name: down\n    backend: openai\n    base_url: http://127.0.0.1:9/v1\n    model: m\n";
  write(d / "study.yaml", study_yaml("down", subjects, 1, sample_dataset(), "[none]"));
  CmdResult r = run_cli("audit " + d / "study.yaml" + " --quiet --out " + d / "out" + " --store " + d / "x.sqlite",
                        d.path());
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("api_error"), std::string::npos) << r.err;
}

// Bad input: exit 2 and a message naming the file, line or field. One test per case.
class BadStudy : public ::testing::Test {
 protected:
  CmdResult audit_text(const std::string& yaml) {
    write(d_ / "study.yaml", yaml);
    return run_cli("audit " + d_ / "study.yaml" + " --quiet --out " + d_ / "out" + " --store " + d_ / "b.sqlite",
                   d_.path());
  }
  TempDir d_;
};

TEST_F(BadStudy, MalformedYaml) {
  CmdResult r = audit_text("name: x\nsubjects: [\n  - broken\n");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("study.yaml:"), std::string::npos) << r.err;
}

TEST_F(BadStudy, UnknownKeyWithSuggestion) {
  CmdResult r = audit_text(study_yaml("x", kSimSubject, 2) + "replicats: 3\n");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("replicats"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("did you mean 'replicates'"), std::string::npos) << r.err;
}

TEST_F(BadStudy, MissingDatasetFile) {
  CmdResult r = audit_text(study_yaml("x", kSimSubject, 2, d_ / "nope.jsonl"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("nope.jsonl"), std::string::npos) << r.err;
}

TEST_F(BadStudy, ItemWithoutAnswerIdx) {
  write(d_ / "items.jsonl",
        "{\"question\": \"Q1?\", \"options\": {\"A\": \"a\", \"B\": \"b\"}, \"answer_idx\": \"A\"}\n"
        "{\"question\": \"Q2?\", \"options\": {\"A\": \"a\", \"B\": \"b\"}}\n");
  CmdResult r = audit_text(study_yaml("x", kSimSubject, 2, d_ / "items.jsonl"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("items.jsonl:2"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("answer_idx"), std::string::npos) << r.err;
}

TEST_F(BadStudy, DuplicateItemIds) {
  write(d_ / "items.jsonl",
        "{\"id\": \"q1\", \"question\": \"Q1?\", \"options\": {\"A\": \"a\", \"B\": \"b\"}, \"answer_idx\": \"A\"}\n"
        "{\"id\": \"q1\", \"question\": \"Q2?\", \"options\": {\"A\": \"a\", \"B\": \"b\"}, \"answer_idx\": \"B\"}\n");
  std::string yaml = study_yaml("x", kSimSubject, 2, d_ / "items.jsonl");
  yaml.replace(yaml.find("  format: medqa\n"), 16, "  format: medqa\n  id_field: id\n");
  CmdResult r = audit_text(yaml);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("q1"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("items.jsonl:2"), std::string::npos) << r.err;
}

TEST_F(BadStudy, UnknownCondition) {
  CmdResult r = audit_text(study_yaml("x", kSimSubject, 2, sample_dataset(), "[none, shufle]"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("shufle"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("shuffle"), std::string::npos) << r.err;
}

TEST_F(BadStudy, ReplicatesBelowOne) {
  CmdResult r = audit_text(study_yaml("x", kSimSubject, -2));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("study.yaml:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("replicates"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("-2"), std::string::npos) << r.err;
}

TEST(Cli, AnalyzeMissingStoreExits2) {
  TempDir d;
  CmdResult r = run_cli("analyze --store " + d / "missing.sqlite" + " --out " + d / "out", d.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("missing.sqlite"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace nf
