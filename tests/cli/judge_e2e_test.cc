// `noisefloor judge` end to end through the real binary (issue 4 "must show"): the 50
// released probe items of seed 004 (read in place from NOISEFLOOR_DATA) imported with
// `import probe-sheet`, re-scored by a panel of two sim judges served by `noisefloor
// serve-sim`, analyzed; resumable; a judge behind HTTP 500 and a judge that returns
// garbage produce no vote.
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <map>
#include <thread>
#include <string>

#include <nlohmann/json.hpp>

#include "common/process.h"
#include "common/test_data.h"
#include "store/store.h"

namespace nf {
namespace {

using testing::CmdResult;
using testing::data_env;
using testing::data_file;
using testing::run_cli;
using testing::slurp;
using testing::TempDir;
using testing::write_text;

// Stops a spawned child when the test ends, also when an ASSERT returns early.
struct ChildGuard {
  testing::Child& child;
  ~ChildGuard() {
    if (child.pid > 0) testing::kill_and_wait(child, SIGTERM);
  }
};

using testing::start_sim;

// A judge entry of the study file.
std::string judge_yaml(const std::string& name, const std::string& provider, const std::string& backend,
                       const std::string& extra) {
  return "    - name: " + name + "\n      provider: " + provider + "\n      backend: " + backend +
         "\n      model: sim-" + name + "\n" + extra;
}

std::string study_yaml(const std::string& store, const std::string& judges) {
  return "name: probe-judges-test\ntask: chat\nstore: " + store + "\njudge:\n  panel:\n" + judges;
}

std::string http_judge(const std::string& name, const std::string& provider, const std::string& url) {
  return judge_yaml(name, provider, "openai",
                    "      base_url: " + url + "\n      max_retries: 0\n      concurrency: 4\n");
}

CmdResult import_sheet(const TempDir& d, const std::string& store) {
  const std::string sheet = data_file("missing-info-judges/annotation_sheet.md");
  return run_cli("import probe-sheet " + sheet + " --store " + store, d.path(), data_env());
}

std::map<std::string, int> status_counts(const std::string& store_path, int* votes) {
  std::map<std::string, int> out;
  *votes = 0;
  auto s = Store::open_existing(store_path);
  EXPECT_TRUE(s.ok());
  if (!s.ok()) return out;
  auto rows = (*s)->judgments();
  EXPECT_TRUE(rows.ok());
  if (!rows.ok()) return out;
  for (const auto& r : *rows) {
    ++out[r.judge + ":" + r.status];
    if (r.status == "ok" && r.label) ++*votes;
    if (r.status != "ok") {
      EXPECT_FALSE(r.label.has_value());
    }
  }
  return out;
}

TEST(JudgeE2e, TwoSimJudgesOverServeSimRescoreTheProbeSheetResumablyAndAnalyze) {
  TempDir d;
  testing::Child sim;
  ChildGuard sim_guard{sim};
  const std::string url = start_sim(sim, {}, d / "sim.err");
  ASSERT_FALSE(url.empty()) << slurp(d / "sim.err");
  const std::string store = d / "probe.sqlite";
  const CmdResult imp = import_sheet(d, store);
  ASSERT_EQ(imp.exit_code, 0) << imp.err;

  write_text(d / "judges.yaml", study_yaml(store, http_judge("judge-o", "openai", "${SIM_URL}") +
                                                      http_judge("judge-a", "anthropic", "${SIM_URL}")));
  const CmdResult first = run_cli("judge " + d / "judges.yaml" + " --no-progress", d.path(), "SIM_URL=" + url);
  EXPECT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.err.find("100 judgments planned, 0 already in the store, 100 run now"), std::string::npos)
      << first.err;
  EXPECT_NE(first.err.find("judge judge-o: 50 planned"), std::string::npos) << first.err;
  int votes = 0;
  auto counts = status_counts(store, &votes);
  EXPECT_EQ(counts["judge-o:ok"] + counts["judge-o:parse_error"], 50);
  EXPECT_EQ(counts["judge-a:ok"] + counts["judge-a:parse_error"], 50);
  EXPECT_EQ(counts["judge-o:api_error"] + counts["judge-a:api_error"], 0);
  EXPECT_GT(votes, 80);  // the sim's default garbage rate is 0: every judgment is a vote
  {
    auto s = Store::open_existing(store);
    ASSERT_TRUE(s.ok());
    auto rows = (*s)->judgments();
    ASSERT_TRUE(rows.ok());
    for (const auto& r : *rows) {
      EXPECT_TRUE(r.draw_id.has_value());
      EXPECT_EQ(r.item.substr(0, 1), "A");  // one draw per (subject, item): the annotation id
      EXPECT_NE(r.cluster, r.item);         // the prompt id from key.json
      EXPECT_EQ(r.settings["backend"], "openai");
      EXPECT_EQ(r.settings["temperature"], 0.0);
      EXPECT_FALSE(r.settings["system_fingerprint"].get<std::string>().empty());
    }
  }

  // Resumable: a second run judges nothing.
  const CmdResult second = run_cli("judge " + d / "judges.yaml" + " --no-progress", d.path(), "SIM_URL=" + url);
  EXPECT_EQ(second.exit_code, 0) << second.err;
  EXPECT_NE(second.err.find("100 already in the store, 0 run now"), std::string::npos) << second.err;

  const CmdResult an = run_cli("analyze --store " + store + " --out " + d / "out --resamples 200", d.path());
  ASSERT_EQ(an.exit_code, 0) << an.err;
  const auto results = nlohmann::json::parse(slurp(d / "out/results.json"));
  ASSERT_TRUE(results["analyses"].contains("judge_panel")) << results.dump().substr(0, 400);
  const auto& jp = results["analyses"]["judge_panel"];
  EXPECT_FALSE(jp.contains("skipped")) << jp.dump().substr(0, 400);
  ASSERT_EQ(jp["judges"].size(), 2u);
  EXPECT_EQ(jp["not_votes"], 100 - votes);
}

TEST(JudgeE2e, HttpFailuresAndGarbageAreNeverVotes) {
  TempDir d;
  testing::Child good, bad;
  ChildGuard good_guard{good}, bad_guard{bad};
  const std::string good_url = start_sim(good, {}, d / "good.err");
  const std::string bad_url = start_sim(bad, {"--fail-rate", "1", "--fail-kinds", "500"}, d / "bad.err");
  ASSERT_FALSE(good_url.empty()) << slurp(d / "good.err");
  ASSERT_FALSE(bad_url.empty()) << slurp(d / "bad.err");

  // Only a failing judge: every judgment is an api_error and the command exits 3.
  const std::string store = d / "probe.sqlite";
  ASSERT_EQ(import_sheet(d, store).exit_code, 0);
  write_text(d / "down.yaml", study_yaml(store, http_judge("judge-down", "xai", bad_url)));
  const CmdResult down = run_cli("judge " + d / "down.yaml" + " --no-progress", d.path());
  EXPECT_EQ(down.exit_code, 3) << down.err;
  EXPECT_NE(down.err.find("backend unavailable"), std::string::npos) << down.err;
  int votes = 0;
  auto counts = status_counts(store, &votes);
  EXPECT_EQ(counts["judge-down:api_error"], 50);
  EXPECT_EQ(votes, 0);

  // Beside a working judge and a garbage judge: the run completes (exit 0), the failing
  // judge's api_errors are retried and stay api_errors, the garbage judge gives only
  // parse errors, and judge_panel counts none of them as votes.
  write_text(d / "mixed.yaml",
             study_yaml(store, http_judge("judge-down", "xai", bad_url) + http_judge("judge-up", "openai", good_url) +
                                   judge_yaml("judge-garbage", "google", "sim",
                                              "      sim: {judge_garbage_rate: 1}\n")));
  const CmdResult mixed = run_cli("judge " + d / "mixed.yaml" + " --no-progress", d.path());
  EXPECT_EQ(mixed.exit_code, 0) << mixed.err;
  EXPECT_NE(mixed.err.find("judge judge-down: 50 planned, 0 already judged, 50 judged now: 0 votes"),
            std::string::npos) << mixed.err;
  EXPECT_NE(mixed.err.find("judge judge-garbage: 50 planned, 0 already judged, 50 judged now: 0 votes (0 met), "
                           "50 parse errors"),
            std::string::npos) << mixed.err;
  counts = status_counts(store, &votes);
  EXPECT_EQ(counts["judge-down:api_error"], 50);
  EXPECT_EQ(counts["judge-garbage:parse_error"], 50);
  EXPECT_EQ(counts["judge-up:ok"] + counts["judge-up:parse_error"], 50);
  EXPECT_EQ(votes, counts["judge-up:ok"]);
  EXPECT_GT(votes, 0);

  const CmdResult an = run_cli("analyze --store " + store + " --out " + d / "out --resamples 200", d.path());
  ASSERT_EQ(an.exit_code, 0) << an.err;
  const auto results = nlohmann::json::parse(slurp(d / "out/results.json"));
  const auto& jp = results["analyses"]["judge_panel"];
  EXPECT_EQ(jp["not_votes"], 100 + 50 - votes) << jp.dump().substr(0, 400);
  for (const auto& row : jp["rates"]) {
    if (row["judge"] != "judge-up") {
      EXPECT_EQ(row["n"], 0) << row.dump();
    }
  }
}

// SIGKILL while judging, then resume: no judgment is lost twice or duplicated, and the
// resumed run does exactly what is missing.
TEST(JudgeE2e, KilledJudgeRunResumesWithoutDuplicates) {
  TempDir d;
  testing::Child sim;
  ChildGuard sim_guard{sim};
  const std::string url = start_sim(sim, {"--latency-ms", "20"}, d / "sim.err");
  ASSERT_FALSE(url.empty()) << slurp(d / "sim.err");
  const std::string store = d / "probe.sqlite";
  ASSERT_EQ(import_sheet(d, store).exit_code, 0);
  write_text(d / "judges.yaml",
             study_yaml(store, judge_yaml("judge-slow", "openai", "openai",
                                          "      base_url: " + url + "\n      concurrency: 1\n")));
  testing::Child judge = testing::spawn({"judge", d / "judges.yaml", "--no-progress"}, d / "judge.err");
  ChildGuard judge_guard{judge};
  int64_t seen = 0;
  for (int i = 0; i < 2000 && seen < 5; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    auto s = Store::open_existing(store);
    if (!s.ok()) continue;
    auto n = (*s)->judgment_count();
    if (n.ok()) seen = *n;
  }
  testing::kill_and_wait(judge, SIGKILL);
  ASSERT_GE(seen, 5) << slurp(d / "judge.err");
  int64_t stored = 0;
  {
    auto s = Store::open_existing(store);
    ASSERT_TRUE(s.ok());
    stored = *(*s)->judgment_count();
  }
  ASSERT_LT(stored, 50) << "the run finished before the kill; nothing was tested";
  const CmdResult resumed = run_cli("judge " + d / "judges.yaml" + " --no-progress", d.path());
  EXPECT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.err.find(std::to_string(stored) + " already in the store, " + std::to_string(50 - stored) +
                             " run now"),
            std::string::npos)
      << resumed.err;
  int votes = 0;
  auto counts = status_counts(store, &votes);
  EXPECT_EQ(counts["judge-slow:ok"] + counts["judge-slow:parse_error"], 50);
}

}  // namespace
}  // namespace nf
