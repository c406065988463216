// `noisefloor import lm-eval` on hand-made --log_samples files (tests/fixtures/lm-eval,
// written by make_fixtures.py there with lm-eval's field names; no public samples file with
// repeats exists). Expected values are read from the fixture lines directly in the test.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "common/test_data.h"
#include "store/store.h"

namespace nf {
namespace {

using testing::CmdResult;
using testing::run_cli;
using testing::TempDir;

const std::string kDir = std::string(NF_SOURCE_DIR) + "/tests/fixtures/lm-eval/example-org__tiny-model/";
const std::string kRun1 = kDir + "samples_toy_mc_2024-05-01T10-00-00.000001.jsonl";
const std::string kRun2 = kDir + "samples_toy_mc_2024-05-01T10-30-00.000001.jsonl";
const std::string kRepeats = kDir + "samples_toy_em_2024-05-01T11-00-00.000001.jsonl";

std::vector<nlohmann::json> lines(const std::string& path) {
  std::vector<nlohmann::json> out;
  std::ifstream in(path);
  std::string l;
  while (std::getline(in, l))
    if (!l.empty()) out.push_back(nlohmann::json::parse(l));
  return out;
}

std::map<std::string, double> values(const std::string& store, const std::string& condition) {
  std::map<std::string, double> v;
  auto s = Store::open_existing(store);
  EXPECT_TRUE(s.ok());
  if (!s.ok()) return v;
  auto rows = (*s)->outcome_rows();
  EXPECT_TRUE(rows.ok());
  for (const auto& o : *rows) {
    EXPECT_EQ(o.subject, "example-org/tiny-model");  // from the folder name, "__" -> "/"
    if (o.condition == condition) v[o.item + "/" + std::to_string(o.replicate) + "/" + o.outcome] = o.value;
  }
  return v;
}

TEST(ImportLmEval, TwoRunsOfOneTaskBecomeReplicatesWithTheFilesMetrics) {
  TempDir t;
  CmdResult r = run_cli("import lm-eval " + kRun1 + " " + kRun2 + " --store " + (t / "s.sqlite"), t.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("replicates 1..1"), std::string::npos) << r.err;
  std::map<std::string, double> expect;
  int rep = 0;
  for (const auto& file : {kRun1, kRun2}) {
    for (const auto& j : lines(file))
      for (const auto& m : j["metrics"])
        expect[j["doc_id"].dump() + "/" + std::to_string(rep) + "/" + m.get<std::string>() + ",none"] =
            j[m.get<std::string>()].get<double>();
    ++rep;
  }
  ASSERT_EQ(expect.size(), 16u);  // 4 docs x 2 runs x (acc, acc_norm)
  EXPECT_EQ(values(t / "s.sqlite", "toy_mc"), expect);
  CmdResult an = run_cli("analyze --store " + (t / "s.sqlite") + " --out " + (t / "out"), t.path());
  ASSERT_EQ(an.exit_code, 0) << an.err;
  const auto res = nlohmann::json::parse(testing::slurp(t / "out/results.json"));
  for (const auto& row : res["analyses"]["floor"]["rows"])
    if (row["outcome"] == "acc,none") {
      EXPECT_EQ(row["discordant"], 1);  // doc 2 flips between the runs
      EXPECT_EQ(row["comparisons"], 4);
    }
}

TEST(ImportLmEval, ClusterFromADocFieldAndAnExplicitSubject) {
  TempDir t;
  CmdResult r = run_cli("import lm-eval " + kRun1 + " --cluster-field topic --subject org/other --task mc --store " +
                            (t / "s.sqlite"),
                        t.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto s = Store::open_existing(t / "s.sqlite");
  ASSERT_TRUE(s.ok());
  auto rows = (*s)->outcome_rows();
  ASSERT_TRUE(rows.ok());
  std::map<std::string, std::string> cluster;
  for (const auto& o : *rows) {
    EXPECT_EQ(o.subject, "org/other");
    EXPECT_EQ(o.condition, "mc");
    cluster[o.item] = o.cluster;
  }
  std::map<std::string, std::string> expect;
  for (const auto& j : lines(kRun1)) expect[j["doc_id"].dump()] = j["doc"]["topic"];
  EXPECT_EQ(cluster, expect);
  CmdResult bad = run_cli("import lm-eval " + kRun1 + " --cluster-field nope --store " + (t / "b.sqlite"), t.path());
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find(":1: doc.nope: missing or empty"), std::string::npos) << bad.err;
}

TEST(ImportLmEval, RepeatsBecomeDrawsScoredByExactMatchAndTheCommandSaysSo) {
  TempDir t;
  CmdResult r = run_cli("import lm-eval " + kRepeats + " --store " + (t / "s.sqlite"), t.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("repeats: 3 generations per document"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("exact match"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("filter(s) none kept only one response"), std::string::npos) << r.err;
  // Expected: per generation k, trim(response_k) == trim(target), where the response is
  // filtered_resps[0][k] if the filter kept all K, else resps[0][k].
  auto trim = [](std::string s) {
    const auto a = s.find_first_not_of(" \t\r\n");
    const auto b = s.find_last_not_of(" \t\r\n");
    return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
  };
  std::map<std::string, double> expect;
  for (const auto& j : lines(kRepeats)) {
    const auto& gens = j["resps"][0];
    ASSERT_EQ(gens.size(), 3u);
    for (size_t k = 0; k < gens.size(); ++k) {
      const auto& fr = j["filtered_resps"][0];
      const std::string resp = fr.is_array() ? fr[k].get<std::string>() : gens[k].get<std::string>();
      expect[j["doc_id"].dump() + "/" + std::to_string(k) + "/draw_exact_match," + j["filter"].get<std::string>()] =
          trim(resp) == trim(j["target"].get<std::string>()) ? 1.0 : 0.0;
    }
  }
  ASSERT_EQ(expect.size(), 18u);  // 3 docs x 3 generations x 2 filters
  EXPECT_EQ(values(t / "s.sqlite", "toy_em"), expect);
}

// The same samples file twice (or a copy) was two runs; a run imported in a later command
// hit put_draws' internal message. Both now exit 2 with what happened.
TEST(ImportLmEval, TheSameFileTwiceAndALaterRunIntoAStoredTaskAreRefused) {
  TempDir t;
  CmdResult twice = run_cli("import lm-eval " + kRun1 + " " + kRun1 + " --store " + (t / "s.sqlite"), t.path());
  EXPECT_EQ(twice.exit_code, 2);
  EXPECT_NE(twice.err.find(kRun1 + " and " + kRun1 + " hold the same run (samples_toy_mc_2024-05-01T10-00-00.000001.jsonl "
                                                      "sha256 "),
            std::string::npos)
      << twice.err;
  EXPECT_FALSE(std::filesystem::exists(t / "s.sqlite"));
  CmdResult one = run_cli("import lm-eval " + kRun1 + " --store " + (t / "s.sqlite"), t.path());
  ASSERT_EQ(one.exit_code, 0) << one.err;
  CmdResult again = run_cli("import lm-eval " + kRun1 + " --store " + (t / "s.sqlite"), t.path());
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_NE(again.err.find("already holds this run (samples_toy_mc_2024-05-01T10-00-00.000001.jsonl sha256 "),
            std::string::npos)
      << again.err;
  CmdResult later = run_cli("import lm-eval " + kRun2 + " --store " + (t / "s.sqlite"), t.path());
  EXPECT_EQ(later.exit_code, 2);
  EXPECT_NE(later.err.find("already holds 4 draws of (example-org/tiny-model, toy_mc, default) from another run "
                           "(samples_toy_mc_2024-05-01T10-00-00.000001.jsonl)"),
            std::string::npos)
      << later.err;
  EXPECT_EQ(later.err.find("put_draws"), std::string::npos) << later.err;
}

/// `lines` as a samples file at `path` (folders made).
void write_lines(const std::string& path, const std::vector<nlohmann::json>& ls) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::string text;
  for (const auto& l : ls) text += l.dump() + "\n";
  testing::write_text(path, text);
}

// Tester s11 finding 3: two runs over different questions (every doc_hash differs) were
// 8 draws of 4 items, the floor computed across "replicates" that answered different
// documents. A replicate must be the same document: a different doc_hash or target_hash
// is refused (exit 2, both files:lines, the doc_id and both hashes), nothing written.
TEST(ImportLmEval, ARunOverOtherDocumentsIsRefusedNamingBothFilesLinesAndHashes) {
  TempDir t;
  const std::string f1 = t / "org__m/samples_h_2024-01-01T00-00-00.jsonl";
  const std::string f2 = t / "org__m/samples_h_2024-01-02T00-00-00.jsonl";
  const auto run1 = lines(kRun1);
  write_lines(f1, run1);
  auto other = lines(kRun2);
  for (auto& o : other) {
    o["doc"]["question"] = "A DIFFERENT QUESTION " + o["doc_id"].dump();
    o["doc_hash"] = "d1ff" + o["doc_id"].dump();
  }
  write_lines(f2, other);
  CmdResult r = run_cli("import lm-eval " + f1 + " " + f2 + " --store " + (t / "s.sqlite"), t.path());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(f2 + ":1: doc_id 0: doc_hash d1ff0 differs from " + f1 + ":1 (doc_hash " +
                       run1[0]["doc_hash"].get<std::string>() + "): a different dataset version"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("Write it to another store or import one version"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(t / "s.sqlite"));
  // The same questions with another target for document 2 (third line).
  auto target = lines(kRun2);
  target[2]["target_hash"] = "7a26e7";
  write_lines(f2, target);
  CmdResult tg = run_cli("import lm-eval " + f1 + " " + f2 + " --store " + (t / "s.sqlite"), t.path());
  EXPECT_EQ(tg.exit_code, 2) << tg.err;
  EXPECT_NE(tg.err.find(f2 + ":3: doc_id 2: target_hash 7a26e7 differs from " + f1 + ":3 (target_hash " +
                        run1[2]["target_hash"].get<std::string>() + ")"),
            std::string::npos)
      << tg.err;
  EXPECT_FALSE(std::filesystem::exists(t / "s.sqlite"));
  // Another model's run of the task over other documents: the store pairs the models on
  // the doc_id, so refused as well.
  const std::string f3 = t / "org__other/samples_h_2024-01-03T00-00-00.jsonl";
  write_lines(f3, other);
  CmdResult models = run_cli("import lm-eval " + f1 + " " + f3 + " --store " + (t / "s.sqlite"), t.path());
  EXPECT_EQ(models.exit_code, 2) << models.err;
  EXPECT_NE(models.err.find(f3 + ":1: doc_id 0: doc_hash d1ff0 differs from " + f1 + ":1"), std::string::npos)
      << models.err;
  // Lines without hashes: nothing to compare, nothing new said.
  for (auto* ls : {&other, &target})
    for (auto& o : *ls)
      for (const char* k : {"doc_hash", "prompt_hash", "target_hash"}) o.erase(k);
  write_lines(f1, target);
  write_lines(f2, other);
  CmdResult bare = run_cli("import lm-eval " + f1 + " " + f2 + " --store " + (t / "s.sqlite"), t.path());
  EXPECT_EQ(bare.exit_code, 0) << bare.err;
  EXPECT_EQ(bare.err.find("warning"), std::string::npos) << bare.err;
  EXPECT_NE(bare.err.find("8 draws"), std::string::npos) << bare.err;
}

// Tester s11 finding 3, a later command: another model's run of a stored task is compared
// with the documents stored (their identity is kept with the item's data); the same
// documents import, other ones are refused naming the store and the stored line.
TEST(ImportLmEval, AnotherModelsRunImportedLaterIsComparedWithTheStoredDocuments) {
  TempDir t;
  const std::string f1 = t / "org__m/samples_h_2024-01-01T00-00-00.jsonl";
  const std::string same = t / "org__n/samples_h_2024-01-02T00-00-00.jsonl";
  const std::string other = t / "org__o/samples_h_2024-01-03T00-00-00.jsonl";
  const auto run1 = lines(kRun1);
  write_lines(f1, run1);
  write_lines(same, lines(kRun2));
  auto changed = lines(kRun2);
  changed[1]["doc_hash"] = "d1ff1";
  write_lines(other, changed);
  CmdResult a = run_cli("import lm-eval " + f1 + " --store " + (t / "s.sqlite"), t.path());
  ASSERT_EQ(a.exit_code, 0) << a.err;
  CmdResult o = run_cli("import lm-eval " + other + " --store " + (t / "s.sqlite"), t.path());
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_NE(o.err.find(other + ":2: doc_id 1: doc_hash d1ff1 differs from the item stored in " + (t / "s.sqlite") +
                       " (doc_hash " + run1[1]["doc_hash"].get<std::string>() + ", from " + f1 + ":2)"),
            std::string::npos)
      << o.err;
  CmdResult n = run_cli("import lm-eval " + same + " --store " + (t / "s.sqlite"), t.path());
  ASSERT_EQ(n.exit_code, 0) << n.err;
  auto s = Store::open_existing(t / "s.sqlite");
  ASSERT_TRUE(s.ok());
  auto draws = (*s)->draw_count();
  ASSERT_TRUE(draws.ok());
  EXPECT_EQ(*draws, 8);  // 4 of model m, 4 of model n; nothing of model o
}

// Tester s11 finding 3: a run missing documents, or runs over different doc_id sets, and a
// changed prompt imported without a word. Now warnings on stderr; the draws still import.
TEST(ImportLmEval, MissingDocumentsAndAChangedPromptAreWarningsAndTheDrawsStillImport) {
  TempDir t;
  const std::string f1 = t / "org__m/samples_h_2024-01-01T00-00-00.jsonl";
  const std::string f2 = t / "org__m/samples_h_2024-01-02T00-00-00.jsonl";
  const auto run1 = lines(kRun1);
  write_lines(f1, run1);
  auto run2 = lines(kRun2);
  run2.pop_back();  // documents 0, 1, 2
  write_lines(f2, run2);
  CmdResult miss = run_cli("import lm-eval " + f1 + " " + f2 + " --store " + (t / "a.sqlite"), t.path());
  ASSERT_EQ(miss.exit_code, 0) << miss.err;
  EXPECT_NE(miss.err.find("import: warning: run " + f2 + " holds 3 of the 4 documents the runs of (org/m, h, default) "
                          "in this import hold (missing doc_id 3): 1 item has fewer replicates than the others"),
            std::string::npos)
      << miss.err;
  EXPECT_EQ(miss.err.find("run " + f1 + " holds"), std::string::npos) << miss.err;
  EXPECT_NE(miss.err.find("7 draws (0 api_error, never scored) of 4 items"), std::string::npos) << miss.err;
  // doc_id sets {0, 1, 2, 3} and {0, 1, 7, 3}: each run misses one of the 5 items.
  run2 = lines(kRun2);
  run2[2]["doc_id"] = 7;
  write_lines(f2, run2);
  CmdResult sets = run_cli("import lm-eval " + f1 + " " + f2 + " --store " + (t / "b.sqlite"), t.path());
  ASSERT_EQ(sets.exit_code, 0) << sets.err;
  EXPECT_NE(sets.err.find("run " + f1 + " holds 4 of the 5 documents the runs of (org/m, h, default) in this import "
                          "hold (missing doc_id 7): 1 item has fewer replicates"),
            std::string::npos)
      << sets.err;
  EXPECT_NE(sets.err.find("run " + f2 + " holds 4 of the 5 documents the runs of (org/m, h, default) in this import "
                          "hold (missing doc_id 2): 1 item has fewer replicates"),
            std::string::npos)
      << sets.err;
  EXPECT_NE(sets.err.find("8 draws (0 api_error, never scored) of 5 items"), std::string::npos) << sets.err;
  // The same documents under another prompt (few-shot examples changed): a warning with the count.
  run2 = lines(kRun2);
  for (size_t k = 1; k < run2.size(); ++k) run2[k]["prompt_hash"] = "5h0t" + run2[k]["doc_id"].dump();
  write_lines(f2, run2);
  CmdResult prompt = run_cli("import lm-eval " + f1 + " " + f2 + " --store " + (t / "c.sqlite"), t.path());
  ASSERT_EQ(prompt.exit_code, 0) << prompt.err;
  EXPECT_NE(prompt.err.find("import: warning: " + f2 + ": 3 of its 4 documents have a prompt_hash other than in an "
                            "earlier run of (org/m, h, default) (first: doc_id 1, " + f2 + ":2: 5h0t1, " + f1 +
                            ":2: " + run1[1]["prompt_hash"].get<std::string>() + ")"),
            std::string::npos)
      << prompt.err;
  EXPECT_NE(prompt.err.find("8 draws"), std::string::npos) << prompt.err;
  // The fixtures' two runs hold the same documents under the same prompt: nothing said.
  CmdResult same = run_cli("import lm-eval " + kRun1 + " " + kRun2 + " --store " + (t / "d.sqlite"), t.path());
  ASSERT_EQ(same.exit_code, 0) << same.err;
  EXPECT_EQ(same.err.find("warning"), std::string::npos) << same.err;
  EXPECT_NE(same.err.find("8 draws (0 api_error, never scored) of 4 items"), std::string::npos) << same.err;
}

// Python's json writes a float nan as a bare NaN: named, exit 2 (was nlohmann's "invalid literal").
TEST(ImportLmEval, ANaNMetricExitsTwoNamingFileLineAndMetric) {
  TempDir t;
  const std::string f = t / "samples_x_2024-01-01T00-00-00.000001.jsonl";
  testing::write_text(f, "{\"doc_id\": 0, \"target\": \"a\", \"metrics\": [\"bleu\"], \"bleu\": 0.5}\n"
                         "{\"doc_id\": 1, \"target\": \"a\", \"metrics\": [\"bleu\"], \"bleu\": NaN}\n");
  CmdResult r = run_cli("import lm-eval " + f + " --subject m --store " + (t / "s.sqlite"), t.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(f + ":2: bleu: NaN is not a number this import accepts"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("invalid literal"), std::string::npos) << r.err;
}

TEST(ImportLmEval, BadFilesExitTwoNamingFileLineAndField) {
  TempDir t;
  testing::write_text(t / "samples_x_2024-01-01T00-00-00.000001.jsonl",
                      "{\"doc_id\": 0, \"target\": \"a\", \"metrics\": [\"acc\"], \"acc\": 1}\n"
                      "{\"doc_id\": \"one\", \"target\": \"a\", \"metrics\": [\"acc\"], \"acc\": 1}\n");
  CmdResult a = run_cli("import lm-eval " + (t / "samples_x_2024-01-01T00-00-00.000001.jsonl") + " --subject m --store " +
                            (t / "s.sqlite"),
                        t.path());
  EXPECT_EQ(a.exit_code, 2);
  EXPECT_NE(a.err.find("samples_x_2024-01-01T00-00-00.000001.jsonl:2: doc_id: missing or not an integer"),
            std::string::npos)
      << a.err;
  testing::write_text(t / "samples_x_2024-01-01T00-00-00.000002.jsonl",
                      "{\"doc_id\": 0, \"target\": \"a\", \"metrics\": [\"acc\"], \"acc\": \"high\"}\n");
  CmdResult b = run_cli("import lm-eval " + (t / "samples_x_2024-01-01T00-00-00.000002.jsonl") + " --subject m --store " +
                            (t / "s.sqlite"),
                        t.path());
  EXPECT_EQ(b.exit_code, 2);
  EXPECT_NE(b.err.find(":1: acc: expected a number or a boolean, found a string"), std::string::npos) << b.err;
  testing::write_text(t / "results.jsonl", "{\"doc_id\": 0, \"acc\": 1}\n");
  CmdResult c = run_cli("import lm-eval " + (t / "results.jsonl") + " --subject m --store " + (t / "s.sqlite"), t.path());
  EXPECT_EQ(c.exit_code, 2);
  EXPECT_NE(c.err.find("name the task with --task"), std::string::npos) << c.err;
  CmdResult d = run_cli("import lm-eval " + (t / "results.jsonl") + " --subject m --task x --store " + (t / "s.sqlite"),
                        t.path());
  EXPECT_EQ(d.exit_code, 0) << d.err;  // a line without a `metrics` list: every number is a metric
}

}  // namespace
}  // namespace nf
