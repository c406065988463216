// `noisefloor import inspect` on the real Inspect AI logs of $NOISEFLOOR_DATA/harness-logs
// (SOURCES.md there), read in place. The expected numbers come from a direct count of the
// files by tests/reference/inspect_counts.py (python zipfile + json, run at test time),
// not from noisefloor's reader.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "common/test_data.h"
#include "store/store.h"

namespace nf {
namespace {

using testing::CmdResult;
using testing::run_cli;
using testing::slurp;
using testing::TempDir;


std::string popularity_logs() {
  std::string out;
  for (const char* id : {"jKN69eAYYpZFAZhRgMAztp", "CuCFPdqnwXupUkxp69nJ2a", "J5EskSJVsBD9iRd47twk8x"})
    out += " " + testing::data_file(std::string("harness-logs/2025-09-15T15-04-34-04-00_popularity_") + id + ".eval");
  return out;
}

/// stdout of a shell command.
std::string capture(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

std::string python() { return std::filesystem::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3"; }

TEST(ImportInspect, PopularityEvalSetFloorsAccuracyAndPairedComparisonEqualADirectCount) {
  TempDir t;
  CmdResult imp = run_cli("import inspect" + popularity_logs() + " --store " + (t / "s.sqlite"), t.path());
  ASSERT_EQ(imp.exit_code, 0) << imp.err;
  EXPECT_NE(imp.err.find("150 draws"), std::string::npos) << imp.err;
  CmdResult an = run_cli("analyze --store " + (t / "s.sqlite") + " --out " + (t / "out"), t.path());
  ASSERT_EQ(an.exit_code, 0) << an.err;
  const auto results = nlohmann::json::parse(slurp(t / "out/results.json"));
  const auto expected = nlohmann::json::parse(
      capture(python() + " " + NF_SOURCE_DIR + "/tests/reference/inspect_counts.py" + popularity_logs()));
  ASSERT_EQ(expected["models"].size(), 3u);

  // The issue's numbers for the GPT-5 run, then every model against the direct count.
  const auto& gpt5 = expected["models"]["openai/gpt-5"];
  EXPECT_EQ(gpt5["discordant"], 0);
  EXPECT_EQ(gpt5["comparisons"], 100);
  EXPECT_DOUBLE_EQ(gpt5["accuracy"].get<double>(), 0.60);
  std::map<std::string, nlohmann::json> floor_rows, subject_rows;
  for (const auto& r : results["analyses"]["floor"]["rows"])
    if (r["outcome"] == "match") floor_rows[r["subject"]] = r;
  for (const auto& r : results["analyses"]["paired_subjects"]["subjects"]) subject_rows[r["subject"]] = r;
  for (const auto& [model, e] : expected["models"].items()) {
    SCOPED_TRACE(model);
    ASSERT_TRUE(floor_rows.count(model));
    const auto& f = floor_rows[model];
    EXPECT_EQ(f["condition"], "popularity");
    EXPECT_EQ(f["config"], "default");
    EXPECT_EQ(f["discordant"], e["discordant"]);     // the floor over the 5 epochs
    EXPECT_EQ(f["comparisons"], e["comparisons"]);   // 10 samples x C(5,2)
    EXPECT_EQ(f["clusters"], e["items"]);
    ASSERT_TRUE(subject_rows.count(model));
    const auto& s = subject_rows[model];
    EXPECT_EQ(s["draws"], e["draws"]);                // accuracy over all 50 draws
    EXPECT_EQ(s["successes"], e["successes"]);
    EXPECT_NEAR(s["mean"].get<double>(), e["accuracy"].get<double>(), 1e-12);
  }
  EXPECT_EQ(floor_rows["openai/gpt-5"]["discordant"], 0);
  EXPECT_NEAR(subject_rows["openai/gpt-5"]["mean"].get<double>(), 0.60, 1e-12);
  // Paired comparison of the models on the same 10 samples.
  const auto& pairs = results["analyses"]["paired_subjects"]["rows"];
  ASSERT_EQ(pairs.size(), expected["pairs"].size());
  ASSERT_EQ(pairs.size(), 3u);
  for (size_t i = 0; i < pairs.size(); ++i) {
    const auto& e = expected["pairs"][i];
    SCOPED_TRACE(e["a"].get<std::string>() + " vs " + e["b"].get<std::string>());
    EXPECT_EQ(pairs[i]["a"], e["a"]);
    EXPECT_EQ(pairs[i]["b"], e["b"]);
    EXPECT_EQ(pairs[i]["items"], 10);
    EXPECT_EQ(pairs[i]["b_count"], e["b_count"]);
    EXPECT_EQ(pairs[i]["c_count"], e["c_count"]);
    EXPECT_NEAR(pairs[i]["p_value"].get<double>(), e["p_value"].get<double>(), 1e-12);
  }
  // The report names the analysis (report.md is written from results.json).
  EXPECT_TRUE(std::filesystem::exists(t / "out/report.md"));
}

TEST(ImportInspect, OlderFormatAndAgenticLogsImport) {
  TempDir t;
  CmdResult old = run_cli("import inspect " + testing::data_file("harness-logs/log_streaming.eval") + " --store " +
                              (t / "old.sqlite"),
                          t.path());
  ASSERT_EQ(old.exit_code, 0) << old.err;
  CmdResult agent =
      run_cli("import inspect " + testing::data_file("harness-logs/small.eval") + " --store " + (t / "agent.sqlite"),
              t.path());
  ASSERT_EQ(agent.exit_code, 0) << agent.err;
  {
    auto s = Store::open_existing(t / "old.sqlite");
    ASSERT_TRUE(s.ok());
    auto rows = (*s)->outcome_rows();
    ASSERT_TRUE(rows.ok());
    std::map<std::string, double> v;
    for (const auto& r : *rows) {
      EXPECT_EQ(r.subject, "azureai/Meta-Llama-3-1-405B-Instruct-jqf");
      EXPECT_EQ(r.condition, "popularity");
      EXPECT_EQ(r.outcome, "match");
      v[r.item + "/" + std::to_string(r.replicate)] = r.value;
    }
    // SOURCES.md: sample 1 scores I then C, sample 2 C, C.
    const std::map<std::string, double> expect{{"1/0", 0.0}, {"1/1", 1.0}, {"2/0", 1.0}, {"2/1", 1.0}};
    EXPECT_EQ(v, expect);
  }
  {
    auto s = Store::open_existing(t / "agent.sqlite");
    ASSERT_TRUE(s.ok());
    auto rows = (*s)->outcome_rows();
    ASSERT_TRUE(rows.ok());
    ASSERT_EQ(rows->size(), 6u);  // one sample x 6 epochs, numeric score 1 each
    for (const auto& r : *rows) {
      EXPECT_EQ(r.item, "default");
      EXPECT_EQ(r.outcome, "score_metr_task");
      EXPECT_EQ(r.value, 1.0);
      EXPECT_EQ(r.config, "reasoning_tokens=16000");  // the plan's generate config
      EXPECT_EQ(r.condition, "oxdna_simple");
    }
  }
  CmdResult an = run_cli("analyze --store " + (t / "agent.sqlite") + " --out " + (t / "a"), t.path());
  ASSERT_EQ(an.exit_code, 0) << an.err;
  const auto results = nlohmann::json::parse(slurp(t / "a/results.json"));
  EXPECT_EQ(results["analyses"]["floor"]["rows"][0]["comparisons"], 15);  // C(6,2)
  EXPECT_EQ(results["analyses"]["floor"]["rows"][0]["discordant"], 0);
}

TEST(ImportInspect, ShortenedJsonLogImportsItsFiveRecordsAndWarnsAboutFourEpochs) {
  TempDir t;
  CmdResult r = run_cli("import inspect " + testing::data_file("harness-logs/gpqa-diamond.json") + " --store " +
                            (t / "g.sqlite"),
                        t.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("warning"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("declares 4 epochs"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("holds 5 records"), std::string::npos) << r.err;
  auto s = Store::open_existing(t / "g.sqlite");
  ASSERT_TRUE(s.ok());
  auto rows = (*s)->outcome_rows();
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 5u);
  // Direct read of the same document: the epoch-1 score of each sample, C -> 1, I -> 0.
  const auto doc = nlohmann::json::parse(slurp(testing::data_file("harness-logs/gpqa-diamond.json")));
  std::map<std::string, double> expect, got;
  for (const auto& smp : doc["samples"])
    expect[smp["id"].get<std::string>()] = smp["scores"]["choice"]["value"] == "C" ? 1.0 : 0.0;
  for (const auto& o : *rows) {
    EXPECT_EQ(o.replicate, 0);
    EXPECT_EQ(o.outcome, "choice");
    EXPECT_EQ(o.subject, "hf/Qwen/Qwen2.5-7B-Instruct");
    got[o.item] = o.value;
  }
  EXPECT_EQ(got, expect);
}

// A version-1 JSON log written by hand (our own sample, the field names of Inspect's
// EvalLog): one `score` per sample, an errored sample, P and numeric-string scores, and
// a cluster named by a metadata field.
std::string v1_log() {
  return R"({"version": 1, "status": "error",
  "eval": {"task": "toy", "model": "local/toy-model", "config": {"epochs": 2},
           "model_generate_config": {"temperature": 0.7}},
  "plan": {"name": "plan", "steps": [], "config": {}},
  "results": {"scorer": {"name": "grader", "params": {}}, "metrics": {}},
  "samples": [
    {"id": 1, "epoch": 1, "input": "q1", "target": "a", "metadata": {"family": "f1"},
     "score": {"value": "C", "answer": "a"}},
    {"id": 1, "epoch": 2, "input": "q1", "target": "a", "metadata": {"family": "f1"},
     "score": {"value": "P", "answer": "a?"}},
    {"id": "two", "epoch": 1, "input": "q2", "target": "b", "metadata": {"family": "f1"},
     "score": {"value": "0.25"}},
    {"id": "two", "epoch": 2, "input": "q2", "target": "b", "metadata": {"family": "f1"},
     "error": {"message": "RateLimitError: 429", "traceback": "", "traceback_ansi": ""}}
  ]})";
}

TEST(ImportInspect, VersionOneJsonLogWithAnErroredSample) {
  TempDir t;
  testing::write_text(t / "v1.json", v1_log());
  CmdResult r = run_cli("import inspect " + (t / "v1.json") + " --cluster-field family --store " + (t / "s.sqlite"),
                        t.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("1 api_error"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("status 'error'"), std::string::npos) << r.err;
  auto s = Store::open_existing(t / "s.sqlite");
  ASSERT_TRUE(s.ok());
  auto rows = (*s)->outcome_rows();
  ASSERT_TRUE(rows.ok());
  std::map<std::string, double> v;
  for (const auto& o : *rows) {
    EXPECT_EQ(o.outcome, "grader");            // the v1 scorer's name
    EXPECT_EQ(o.cluster, "f1");
    EXPECT_EQ(o.config, "temperature=0.7");
    v[o.item + "/" + std::to_string(o.replicate)] = o.value;
  }
  const std::map<std::string, double> expect{{"1/0", 1.0}, {"1/1", 0.5}, {"two/0", 0.25}};
  EXPECT_EQ(v, expect);  // the errored sample is not an outcome
  auto d = (*s)->get_draw({"local/toy-model", "two", "toy", "temperature=0.7", 1});
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d->status, DrawStatus::kApiError);
  EXPECT_TRUE(d->outcomes.empty());
  EXPECT_NE(d->error.find("429"), std::string::npos);
}

/// v1_log() as run `eval_id` (eval.eval_id).
std::string v1_run(const std::string& eval_id) {
  std::string log = v1_log();
  log.replace(log.find("\"eval\": {"), 9, "\"eval\": {\"eval_id\": \"" + eval_id + "\", ");
  return log;
}

int64_t draw_count(const std::string& store) {
  auto s = Store::open_existing(store);
  if (!s.ok()) return -1;
  auto n = (*s)->draw_count();
  return n.ok() ? *n : -1;
}

TEST(ImportInspect, TwoRunsOfOneCellBecomeReplicatesAndALaterImportIntoTheCellIsRefused) {
  TempDir t;
  testing::write_text(t / "a.json", v1_run("run-a"));
  testing::write_text(t / "b.json", v1_run("run-b"));
  testing::write_text(t / "c.json", v1_run("run-c"));
  CmdResult r = run_cli("import inspect " + (t / "a.json") + " " + (t / "b.json") + " --store " + (t / "s.sqlite"),
                        t.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("b.json: another run of (local/toy-model, toy, temperature=0.7): its draws are replicates 2..3"),
            std::string::npos)
      << r.err;
  ASSERT_EQ(draw_count(t / "s.sqlite"), 8);  // 2 runs x 4 records (one an api_error)
  // The same run again, in a later command: said so, nothing written.
  CmdResult again = run_cli("import inspect " + (t / "a.json") + " --store " + (t / "s.sqlite"), t.path());
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_NE(again.err.find("a.json: " + (t / "s.sqlite") +
                           " already holds this run (eval_id run-a) of (local/toy-model, toy, temperature=0.7)"),
            std::string::npos)
      << again.err;
  EXPECT_EQ(again.err.find("put_draws"), std::string::npos) << again.err;
  // A new run of the stored cell: refused with what to do instead.
  CmdResult later = run_cli("import inspect " + (t / "c.json") + " --store " + (t / "s.sqlite"), t.path());
  EXPECT_EQ(later.exit_code, 2);
  EXPECT_NE(later.err.find("c.json: " + (t / "s.sqlite") +
                           " already holds 8 draws of (local/toy-model, toy, temperature=0.7) from another run "
                           "(a.json, b.json)"),
            std::string::npos)
      << later.err;
  EXPECT_NE(later.err.find("Import every run of the cell in one command into a new store"), std::string::npos)
      << later.err;
  EXPECT_EQ(draw_count(t / "s.sqlite"), 8);
  // ... which works.
  CmdResult all = run_cli("import inspect " + (t / "a.json") + " " + (t / "b.json") + " " + (t / "c.json") +
                              " --store " + (t / "new.sqlite"),
                          t.path());
  ASSERT_EQ(all.exit_code, 0) << all.err;
  EXPECT_NE(all.err.find("replicates 4..5"), std::string::npos) << all.err;
  EXPECT_EQ(draw_count(t / "new.sqlite"), 12);
}

// Tester s11 finding 3: a second log of (openai/gpt-5, popularity) whose every sample has
// another input and target imported as "another run ... replicates 5..9" of the same 10
// items. Now refused (exit 2, both files, sample, epoch and both hashes, nothing written);
// a run missing a sample imports with a warning; the three real logs say nothing new. The
// modified copies are written by python's zipfile, which also prints the sha256 of sample
// 1's input as its JSON (keys sorted, compact) before and after the change.
TEST(ImportInspect, ALogOfOtherSamplesIsRefusedAndALogMissingASampleIsWarned) {
  TempDir t;
  const std::string src =
      testing::data_file("harness-logs/2025-09-15T15-04-34-04-00_popularity_CuCFPdqnwXupUkxp69nJ2a.eval");
  testing::write_text(t / "mod.py", R"(import hashlib, json, sys, zipfile
src, out, mode = sys.argv[1:4]
h = lambda v: hashlib.sha256(json.dumps(v, sort_keys=True, separators=(',', ':'), ensure_ascii=False).encode()).hexdigest()
zin, zout = zipfile.ZipFile(src), zipfile.ZipFile(out, 'w', zipfile.ZIP_DEFLATED)
for n in zin.namelist():
    b = zin.read(n)
    if n in ('header.json', '_journal/start.json'):
        j = json.loads(b)
        j['eval']['eval_id'] = 'another-run-' + mode
        if mode == 'othermodel':
            j['eval']['model'] = 'openai/gpt-4.1'
        b = json.dumps(j)
    elif n.startswith('samples/'):
        j = json.loads(b)
        if mode == 'drop' and str(j['id']) == '10':
            continue
        if n == 'samples/1_epoch_1.json':
            print(h(j['input']))
        if mode in ('other', 'othermodel'):
            j['input'], j['target'] = 'A DIFFERENT QUESTION ' + str(j['id']), 'Z'
        if n == 'samples/1_epoch_1.json':
            print(h(j['input']))
        b = json.dumps(j)
    zout.writestr(n, b)
zout.close()
)");
  const std::string other = t / "other.eval", drop = t / "drop.eval";
  const std::string hashes = capture(python() + " " + (t / "mod.py") + " " + src + " " + other + " other");
  ASSERT_EQ(hashes.size(), 2 * 65u) << hashes;
  const std::string before = hashes.substr(0, 64), after = hashes.substr(65, 64);
  ASSERT_NE(before, after);
  CmdResult r = run_cli("import inspect " + src + " " + other + " --store " + (t / "s.sqlite"), t.path());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(other + ": samples/1_epoch_1.json (sample 1, epoch 1): sample 1: input sha256 " + after +
                       " differs from " + src + ": samples/1_epoch_1.json (sample 1, epoch 1) (input sha256 " + before +
                       "): a different dataset version under the same sample id"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("replicates 5..9"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(t / "s.sqlite"));
  // A second run of the same samples, one (sample 10, 5 epochs) missing: imported, with a warning.
  capture(python() + " " + (t / "mod.py") + " " + src + " " + drop + " drop");
  CmdResult d = run_cli("import inspect " + src + " " + drop + " --store " + (t / "d.sqlite"), t.path());
  ASSERT_EQ(d.exit_code, 0) << d.err;
  EXPECT_NE(d.err.find("import: warning: run " + drop + " holds 9 of the 10 samples the runs of (openai/gpt-5, "
                       "popularity, default) in this import hold (missing sample 10): 1 item has fewer replicates"),
            std::string::npos)
      << d.err;
  EXPECT_NE(d.err.find("95 draws (0 api_error, never scored) of 10 items"), std::string::npos) << d.err;
  // Another model's log of other samples imported later into a store holding the task:
  // compared with the stored samples, refused.
  const std::string model = t / "model.eval";
  capture(python() + " " + (t / "mod.py") + " " + src + " " + model + " othermodel");
  CmdResult later = run_cli("import inspect " + model + " --store " + (t / "d.sqlite"), t.path());
  EXPECT_EQ(later.exit_code, 2) << later.err;
  EXPECT_NE(later.err.find(model + ": samples/1_epoch_1.json (sample 1, epoch 1): sample 1: input sha256 " + after +
                           " differs from the item stored in " + (t / "d.sqlite") + " (input sha256 " + before +
                           ", from " + src + ": samples/1_epoch_1.json (sample 1, epoch 1))"),
            std::string::npos)
      << later.err;
  EXPECT_EQ(draw_count(t / "d.sqlite"), 95);
  // The three real logs (three models, the same 10 samples): nothing new said.
  CmdResult real = run_cli("import inspect" + popularity_logs() + " --store " + (t / "r.sqlite"), t.path());
  ASSERT_EQ(real.exit_code, 0) << real.err;
  EXPECT_EQ(real.err.find("warning"), std::string::npos) << real.err;
  EXPECT_NE(real.err.find("150 draws"), std::string::npos) << real.err;
}

// The tester's repro: the same log twice, or a copy, was 10 runs of 5 epochs (floor 24/450
// for Claude instead of 6/100). Now refused, naming both paths, before the store is made.
TEST(ImportInspect, TheSameLogTwiceOrACopyIsRefusedNamingBothPaths) {
  TempDir t;
  const std::string log =
      testing::data_file("harness-logs/2025-09-15T15-04-34-04-00_popularity_jKN69eAYYpZFAZhRgMAztp.eval");
  CmdResult r = run_cli("import inspect " + log + " " + log + " --store " + (t / "s.sqlite"), t.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(log + " and " + log + " hold the same run (eval_id fSkh5oCVXsM735YEddEDea)"),
            std::string::npos)
      << r.err;
  std::filesystem::copy_file(testing::data_file("harness-logs/log_streaming.eval"), t / "copy.eval");
  CmdResult c = run_cli("import inspect " + testing::data_file("harness-logs/log_streaming.eval") + " " +
                            (t / "copy.eval") + " --store " + (t / "s.sqlite"),
                        t.path());
  EXPECT_EQ(c.exit_code, 2);  // no eval_id in this older log: the bytes are the run
  EXPECT_NE(c.err.find("copy.eval hold the same run (sha256 "), std::string::npos) << c.err;
  EXPECT_FALSE(std::filesystem::exists(t / "s.sqlite"));
}

// The tester's repro: one epoch's score "C " (and "c", "NaN", "correct") became category 0,
// i.e. incorrect (Claude's floor 0.06 -> 0.10). Now exit 2 naming file, sample, epoch,
// scorer and both values (a label among scores); nothing is written. A scorer of labels
// only imports as categories (tests/data/harness_log_test.cc).
TEST(ImportInspect, AScoreInspectCannotConvertExitsTwoNamingFileSampleScorerAndValue) {
  TempDir t;
  const std::string src =
      testing::data_file("harness-logs/2025-09-15T15-04-34-04-00_popularity_jKN69eAYYpZFAZhRgMAztp.eval");
  const std::string script = R"(
import json, sys, zipfile
src, out, value = sys.argv[1], sys.argv[2], sys.argv[3]
z = zipfile.ZipFile(src); o = zipfile.ZipFile(out, 'w')
for n in z.namelist():
    b = z.read(n)
    if n == 'samples/2_epoch_3.json':
        d = json.loads(b); assert d['scores']['match']['value'] == 'C'; d['scores']['match']['value'] = value
        b = json.dumps(d).encode()
    o.writestr(n, b)
o.close()
)";
  testing::write_text(t / "edit.py", script);
  for (const char* value : {"C ", "c", "NaN", "correct"}) {
    SCOPED_TRACE(value);
    const std::string out = t / "sp.eval";
    ASSERT_EQ(std::system((python() + " " + (t / "edit.py") + " '" + src + "' '" + out + "' '" + value + "'").c_str()), 0);
    CmdResult r = run_cli("import inspect " + out + " --store " + (t / "sp.sqlite"), t.path());
    EXPECT_EQ(r.exit_code, 2) << r.err;
    // Issue 32 item 3: a label among the scorer's scores is refused as a mix, naming both.
    EXPECT_NE(r.err.find("scores.match: mixes scores and labels: " + out + ": samples/"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("(a score Inspect's value_to_float converts), but " + out +
                         ": samples/2_epoch_3.json (sample 2, epoch 3) has " + nlohmann::json(value).dump() +
                         " (a label)"),
              std::string::npos)
        << r.err;
    EXPECT_FALSE(std::filesystem::exists(t / "sp.sqlite"));
  }
}

TEST(ImportInspect, BadLogsExitTwoNamingFileAndField) {
  TempDir t;
  testing::write_text(t / "not-a-zip.eval", "hello");
  CmdResult a = run_cli("import inspect " + (t / "not-a-zip.eval") + " --store " + (t / "s.sqlite"), t.path());
  EXPECT_EQ(a.exit_code, 2);
  EXPECT_NE(a.err.find("not-a-zip.eval: not a readable .eval (zip) log"), std::string::npos) << a.err;
  std::string v3 = v1_log();
  v3.replace(v3.find("\"version\": 1"), 12, "\"version\": 3");
  testing::write_text(t / "v3.json", v3);
  CmdResult b = run_cli("import inspect " + (t / "v3.json") + " --store " + (t / "s.sqlite"), t.path());
  EXPECT_EQ(b.exit_code, 2);
  EXPECT_NE(b.err.find("v3.json: (document): version: 3 is not supported"), std::string::npos) << b.err;
  testing::write_text(t / "v1.json", v1_log());
  CmdResult c = run_cli("import inspect " + (t / "v1.json") + " --cluster-field nope --store " + (t / "s.sqlite"),
                        t.path());
  EXPECT_EQ(c.exit_code, 2);
  EXPECT_NE(c.err.find("v1.json: samples[0]: metadata.nope: missing"), std::string::npos) << c.err;
  std::string noepoch = v1_log();
  noepoch.replace(noepoch.find("\"epoch\": 2"), 10, "\"epoch\": 0");
  testing::write_text(t / "e.json", noepoch);
  CmdResult e = run_cli("import inspect " + (t / "e.json") + " --store " + (t / "s.sqlite"), t.path());
  EXPECT_EQ(e.exit_code, 2);
  EXPECT_NE(e.err.find("samples[1]: epoch: expected an integer >= 1"), std::string::npos) << e.err;
  EXPECT_FALSE(std::filesystem::exists(t / "s.sqlite")) << "nothing is written when a log is bad";
}

}  // namespace
}  // namespace nf
