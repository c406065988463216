// End-to-end tests of the fairness audit (issue 5; seed 000): the real binary on the real
// vignettes (via NOISEFLOOR_DATA) and on the shipped sample, resume after SIGKILL, the same
// study over serve-sim, and `noisefloor plan`.
#include <gtest/gtest.h>

#include <algorithm>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

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

void write(const std::string& path, const std::string& text) { testing::write_text(path, text); }

std::string sample_vignettes() { return std::string(NF_SOURCE_DIR) + "/data/sample-vignettes.json"; }

// A vignette_agent study on the shipped sample: all 15 conditions (the default).
std::string agent_study(const std::string& name, const std::string& subjects, int replicates,
                        const std::string& agent = "{floor: 0.2}") {
  return "name: " + name +
         "\nseed: 3\ntask: vignette_agent\ndataset:\n  format: vignettes\n  path: " + sample_vignettes() +
         "\nsubjects:\n" + subjects + "configs:\n  temperature: [1.0]\nreplicates: " + std::to_string(replicates) +
         "\nanalyses:\n  floor: {}\n  fairness: {subsample_k: [3], vote_sizes: [" +
         std::to_string(std::max(1, replicates / 2)) + "]}\n" +  // R' <= R / 2, else refused
         "bootstrap: {resamples: 100, seed: 1, level: 0.95}\n# agent " + agent + "\n";
}

std::string sim_subject(const std::string& agent) {
  return "  - name: sim\n    backend: sim\n    model: agent-sim\n    extra_body: {sim_agent: " + agent + "}\n";
}

TEST(FairnessCli, FullAuditOnTheReleasedVignettesFiveCallsPerTrajectory) {
  TempDir d;
  testing::data_file("fairmedagent-floor16/vignettes.json");
  CmdResult r = run_cli("audit " + std::string(NF_SOURCE_DIR) + "/examples/fairmedagent-audit.yaml --quiet --out " +
                            d / "out" + " --store " + d / "a.sqlite",
                        d.path(), "NOISEFLOOR_DATA=" + testing::data_dir());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(slurp(d / "out/results.json"));
  const auto& f = j["analyses"]["fairness"];
  ASSERT_EQ(f["rows"].size(), 1u);
  const auto& row = f["rows"][0];
  EXPECT_EQ(row["vignettes"], 16);
  // 16 vignettes x C(5,2) pairs x 6 actions on the reference.
  int pooled_rows = 0;
  for (const auto& fl : row["floors"]) {
    if (fl["action"] != "pooled") continue;
    ++pooled_rows;
    EXPECT_EQ(fl["comparisons"], 16 * 10 * 6);
  }
  EXPECT_EQ(pooled_rows, 1);
  EXPECT_EQ(row["flips"].size(), 14u * 6u);  // 11 contrasts + 3 controls, six actions each
  EXPECT_EQ(f["descriptors"].size(), 15u);
  // Lengths of the exact strings (python len / str.split of the descriptor).
  for (const auto& dsc : f["descriptors"]) {
    if (dsc["id"] == "ref_white_man_private") {
      EXPECT_EQ(dsc["chars"], 67);
      EXPECT_EQ(dsc["words"], 8);
    }
    if (dsc["id"] == "race_native_american_man_private") {
      EXPECT_EQ(dsc["chars"], 77);
      EXPECT_EQ(dsc["words"], 9);
    }
  }
  const std::string md = slurp(d / "out/report.md");
  EXPECT_NE(md.find("## Fairness audit"), std::string::npos);
  EXPECT_NE(md.find("within-range flip rate refused"), std::string::npos);
  EXPECT_NE(md.find("| rare_token_control | 50-year-old Verrinese man"), std::string::npos);
  // Every trajectory made five model calls.
  auto s = Store::open_existing(d / "a.sqlite");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*(*s)->draw_count(), 16 * 15 * 5);
  ASSERT_TRUE((*s)->export_jsonl(d / "draws.jsonl").ok());
  std::ifstream in(d / "draws.jsonl");
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    const auto dj = nlohmann::json::parse(line);
    ASSERT_EQ(dj["extra"]["calls"], 5) << line.substr(0, 200);
    ASSERT_EQ(dj["extra"]["transcript"].size(), 5u);
    ++n;
  }
  EXPECT_EQ(n, 16 * 15 * 5);
}

TEST(FairnessCli, SampleAuditRunsOfflineAndClassifiesMalformedReplies) {
  TempDir d;
  CmdResult r = run_cli("audit " + std::string(NF_SOURCE_DIR) + "/examples/sample-agent-audit.yaml --quiet --out " +
                            d / "out" + " --store " + d / "s.sqlite",
                        d.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(d / "out/report.md"));
  // Faults: every malformed reply is classified, never defaulted.
  write(d / "f.yaml", agent_study("faults", sim_subject("{floor: 0.2, fault_rate: 0.5}"), 2));
  CmdResult f =
      run_cli("audit " + d / "f.yaml" + " --quiet --out " + d / "fo" + " --store " + d / "f.sqlite", d.path());
  ASSERT_EQ(f.exit_code, 0) << f.err;
  auto s = Store::open_existing(d / "f.sqlite");
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE((*s)->export_jsonl(d / "f.jsonl").ok());
  std::ifstream in(d / "f.jsonl");
  std::string line;
  int partial = 0;
  while (std::getline(in, line)) {
    const auto dj = nlohmann::json::parse(line);
    if (dj["status"] != "ok") continue;
    // An unparsed stage contributes no outcome: count the stages that failed.
    const auto& stages = dj["extra"]["condition"]["stages"];
    int failed = 0;
    for (const auto& [st, info] : stages.items()) failed += info["parse"] == "parse_error" ? 1 : 0;
    if (failed > 0) {
      ++partial;
      EXPECT_NE(dj["error"].get<std::string>().find("parse_error in stage"), std::string::npos);
    }
  }
  EXPECT_GT(partial, 0);
}

TEST(FairnessCli, SigkillMidRunThenResumeHoldsEveryPlannedDrawOnce) {
  TempDir d;
  const int reps = 30;  // 3 vignettes x 15 conditions x 30 = 1,350 trajectories
  write(d / "study.yaml", agent_study("crash", sim_subject("{floor: 0.2}"), reps));
  const int64_t planned = 3 * 15 * reps;
  testing::Child run =
      testing::spawn({"run", d / "study.yaml", "--quiet", "--threads", "2", "--store", d / "c.sqlite"}, d / "run.err");
  testing::wait_for_draws(d / "c.sqlite", 100, 4000);
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
  auto s = Store::open_existing(d / "c.sqlite");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*(*s)->draw_count(), planned);
  auto keys = (*s)->finished_keys();
  ASSERT_TRUE(keys.ok());
  EXPECT_EQ(static_cast<int64_t>(keys->size()), planned);
  auto rows = (*s)->outcome_rows();
  ASSERT_TRUE(rows.ok());
  std::map<std::string, int> per_draw;
  for (const auto& o : *rows) ++per_draw[o.subject + o.item + o.condition + o.config + std::to_string(o.replicate)];
  EXPECT_EQ(static_cast<int64_t>(per_draw.size()), planned);
  for (const auto& [k, n] : per_draw) ASSERT_EQ(n, 6) << k;  // six floor projections per trajectory
}

TEST(FairnessCli, SameStudyOverServeSimMatchesInProcess) {
  TempDir d;
  testing::Child server = testing::spawn({"serve-sim", "--port", "0"}, d / "serve.err");
  const std::string line = testing::read_line(server);
  const auto at = line.find("http://");
  ASSERT_NE(at, std::string::npos) << "serve-sim said: " << line << slurp(d / "serve.err");
  const std::string agent = "{floor: 0.2, effects: [{match: Black, action: admit, shift: 0.3}]}";
  // The same subject name in two studies: request seeds follow the whole draw key
  // (subject included; issue 13 item 0), so only equal keys must give equal draws.
  write(d / "sim.yaml", agent_study("equiv", sim_subject(agent), 2, agent));
  write(d / "http.yaml", agent_study("equiv",
                                     "  - name: sim\n    backend: openai\n    base_url: ${SIM_URL}\n    model: agent-sim\n"
                                     "    extra_body: {sim_agent: " + agent + "}\n",
                                     2, agent));
  std::map<std::string, std::map<std::string, double>> by_backend;
  for (const std::string which : {"sim", "http"}) {
    CmdResult r = run_cli("audit " + d / (which + ".yaml") + " --quiet --out " + d / ("out-" + which) + " --store " +
                              d / (which + ".sqlite"),
                          d.path(), "SIM_URL=" + line.substr(at));
    ASSERT_EQ(r.exit_code, 0) << which << ": " << r.err;
    auto store = Store::open_existing(d / (which + ".sqlite"));
    ASSERT_TRUE(store.ok());
    auto rows = (*store)->outcome_rows();
    ASSERT_TRUE(rows.ok());
    for (const auto& o : *rows) {
      const std::string k = o.item + "|" + o.condition + "|" + std::to_string(o.replicate) + "|" + o.outcome;
      by_backend[which][k] = o.value;
    }
  }
  testing::kill_and_wait(server, SIGTERM);
  EXPECT_EQ(by_backend["sim"].size(), 3u * 15 * 2 * 6);
  EXPECT_EQ(by_backend["sim"], by_backend["http"]);
}

TEST(FairnessCli, PlanReportsTypeOneErrorAndPower) {
  TempDir d;
  CmdResult r = run_cli("plan --vignettes 16,50 --floor 0.087 --simulations 400 --json", d.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["rows"].size(), 2u);
  for (const auto& row : j["rows"]) EXPECT_LE(row["rejection_rate"].get<double>(), 0.05);
  EXPECT_EQ(j["vignettes_needed"], 288);  // 25 / 0.087 (the rounded floor; 374/4320 gives 289)
  CmdResult p = run_cli("plan --vignettes 300 --floor 0.087 --shift 0.1 --simulations 300", d.path());
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_NE(p.out.find("power"), std::string::npos);
  CmdResult bad = run_cli("plan --pattern sideways", d.path());
  EXPECT_EQ(bad.exit_code, 2);
  CmdResult bad_floor = run_cli("plan --floor 0.7", d.path());
  EXPECT_EQ(bad_floor.exit_code, 2);
  EXPECT_NE(bad_floor.err.find("floor"), std::string::npos);
}

TEST(FairnessCli, StudyRejectsMcqConditionsForTheAgentTask) {
  TempDir d;
  write(d / "bad.yaml", "name: bad\ntask: vignette_agent\ndataset:\n  format: vignettes\n  path: " +
                            sample_vignettes() + "\nsubjects:\n" + sim_subject("{}") + "conditions: [none]\n");
  CmdResult r = run_cli("audit " + d / "bad.yaml" + " --quiet --out " + d / "o", d.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown condition 'none'"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace nf
