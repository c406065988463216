// Inspect and lm-eval readers: Inspect's score mapping, config ids, and mutated logs (every
// corruption is an error naming the file, never a crash or a silently different number).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <cstdio>
#include <random>

#include "common/test_data.h"
#include "data/inspect_log.h"
#include "data/lm_eval_log.h"

namespace nf {
namespace {

TEST(InspectScores, MapAsInspectsValueToFloat) {
  auto one = [&](const nlohmann::json& v, const nlohmann::json& answer = nullptr) {
    auto o = inspect_score_outcomes("s", v, answer);
    EXPECT_TRUE(o.ok()) << v.dump() << ": " << o.status().message();
    EXPECT_EQ(o.ok() ? o->size() : 0u, 1u) << v.dump();
    return !o.ok() || o->empty() ? Outcome{} : (*o)[0];
  };
  EXPECT_EQ(one("C").value, 1.0);
  EXPECT_EQ(one("I").value, 0.0);
  EXPECT_EQ(one("P").value, 0.5);
  EXPECT_EQ(one("N").value, 0.0);
  EXPECT_EQ(one("C").label, "C");
  EXPECT_EQ(one("C", "Yes").label, "Yes");  // the answer is the label
  EXPECT_EQ(one("yes").value, 1.0);
  EXPECT_EQ(one("YES").value, 1.0);  // value.lower() in value_to_float
  EXPECT_EQ(one("False").value, 0.0);
  EXPECT_EQ(one("0.75").value, 0.75);
  EXPECT_EQ(one(" 0.75\n").value, 0.75);  // Python's float() strips whitespace
  EXPECT_EQ(one("-1.5e-3").value, -1.5e-3);
  EXPECT_EQ(one(".5").value, 0.5);
  EXPECT_EQ(one(0.3).value, 0.3);
  EXPECT_EQ(one(2).value, 2.0);
  EXPECT_EQ(one(true).value, 1.0);
  auto none = inspect_score_outcomes("s", nullptr, nullptr);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  auto dict = inspect_score_outcomes("s", {{"accuracy", "C"}, {"f1", 0.5}}, nullptr);
  ASSERT_TRUE(dict.ok());
  ASSERT_EQ(dict->size(), 2u);
  EXPECT_EQ((*dict)[0].name, "s.accuracy");
  EXPECT_EQ((*dict)[0].value, 1.0);
  EXPECT_EQ((*dict)[1].name, "s.f1");
  auto list = inspect_score_outcomes("s", {1, 0}, nullptr);
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[1].name, "s[1]");
}

// Strings value_to_float cannot convert (it logs a warning and returns 0.0) are labels,
// never a number: value NaN until read_inspect_log codes the scorer's labels as categories
// (or refuses a scorer that mixes them with scores). Case and whitespace as Inspect: "C" is
// compared exactly, yes/no/true/false after lower() but without strip(), numbers with
// Python's float() (which strips).
TEST(InspectScores, StringsInspectCannotConvertAreLabelsNeverNumbers) {
  for (const char* label : {"C ", "c", " C", "i", "p", "NaN", "nan", "inf", "-Infinity", "1e999", "correct", " yes",
                            "no ", "0x10", "1_000", "maybe", "1,5"}) {
    SCOPED_TRACE(label);
    auto o = inspect_score_outcomes("match", label, "B");
    ASSERT_TRUE(o.ok()) << o.status().message();
    ASSERT_EQ(o->size(), 1u);
    EXPECT_TRUE(std::isnan((*o)[0].value));
    EXPECT_EQ((*o)[0].label, label);  // the label is the value, not the answer
  }
  for (const char* empty : {"", "  "}) {
    auto o = inspect_score_outcomes("match", empty, "B");
    ASSERT_FALSE(o.ok());
    EXPECT_NE(o.status().message().find("match: value " + nlohmann::json(empty).dump() + " is empty"),
              std::string::npos)
        << o.status().message();
  }
  // Inside a dict: each key is its own outcome.
  auto d = inspect_score_outcomes("m", {{"acc", "C"}, {"grade", "c"}}, nullptr);
  ASSERT_TRUE(d.ok());
  ASSERT_EQ(d->size(), 2u);
  EXPECT_EQ((*d)[0].value, 1.0);
  EXPECT_EQ((*d)[1].name, "m.grade");
  EXPECT_TRUE(std::isnan((*d)[1].value));
}

TEST(InspectScores, ConfigIdOfGenerateSettings) {
  EXPECT_EQ(harness_config_id(nlohmann::json::object()), "default");
  EXPECT_EQ(harness_config_id(nullptr), "default");
  EXPECT_EQ(harness_config_id({{"temperature", 0.5}, {"max_tokens", 100}, {"reasoning_effort", "low"}}),
            "max_tokens=100,reasoning_effort=low,temperature=0.5");
}

TEST(InspectLog, MutatedLogsAreErrorsNeverCrashes) {
  const std::string src = testing::data_file("harness-logs/log_streaming.eval");
  const std::string bytes = testing::slurp(src);
  ASSERT_GT(bytes.size(), 1000u);
  testing::TempDir t;
  std::mt19937_64 rng(15);
  int ok = 0, errors = 0;
  for (int trial = 0; trial < 300; ++trial) {
    std::string m = bytes;
    if (trial % 3 == 0) {
      m.resize(rng() % m.size());  // truncated download
    } else {
      for (int k = 0; k < 1 + trial % 8; ++k) m[rng() % m.size()] = static_cast<char>(rng());
    }
    const std::string p = t / ("m" + std::to_string(trial) + ".eval");
    testing::write_text(p, m);
    auto log = read_inspect_log(p, {});
    if (log.ok()) {
      ++ok;
      // A mutation the zip CRCs did not catch still yields a well-formed log.
      for (const auto& d : log->draws) EXPECT_GE(d.replicate, 0);
    } else {
      ++errors;
      EXPECT_EQ(log.status().code(), StatusCode::kInvalidArgument) << log.status().message();
      EXPECT_NE(log.status().message().find(p), std::string::npos) << log.status().message();
    }
  }
  EXPECT_GT(errors, 100);
  EXPECT_EQ(ok + errors, 300);
}

TEST(InspectLog, MissingFileIsNotFound) {
  auto log = read_inspect_log("/nonexistent/x.eval", {});
  ASSERT_FALSE(log.ok());
  EXPECT_EQ(log.status().code(), StatusCode::kNotFound);
  auto bad_ext = read_inspect_log(testing::data_file("harness-logs/SOURCES.md"), {});
  ASSERT_FALSE(bad_ext.ok());
  EXPECT_NE(bad_ext.status().message().find("expected .eval or .json"), std::string::npos);
}

// A hand-written JSON log (Inspect's EvalLog field names) with two samples x 2 epochs, scored
// `v` (sample 1 epochs 1, 2, sample 2 epochs 1, 2).
std::string json_log4(const std::string& eval_id, const std::vector<nlohmann::json>& v) {
  return R"({"version": 2, "status": "success",
  "eval": {"task": "toy", "model": "local/m", )" +
         (eval_id.empty() ? std::string() : "\"eval_id\": \"" + eval_id + "\", ") + R"("config": {"epochs": 2}},
  "samples": [
    {"id": 1, "epoch": 1, "scores": {"match": {"value": )" + v.at(0).dump() + R"(}}},
    {"id": 1, "epoch": 2, "scores": {"match": {"value": )" + v.at(1).dump() + R"(}}},
    {"id": 2, "epoch": 1, "scores": {"match": {"value": )" + v.at(2).dump() + R"(}}},
    {"id": 2, "epoch": 2, "scores": {"match": {"value": )" + v.at(3).dump() + R"(}}}
  ]})";
}

std::string json_log(const std::string& eval_id, const std::string& value_2_2) {
  return json_log4(eval_id, {"C", "I", "C", value_2_2});
}

TEST(InspectLog, AScorerMixingScoresAndLabelsIsAnErrorNamingFileSampleEpochScorerAndBothValues) {
  testing::TempDir t;
  testing::write_text(t / "ok.json", json_log("e1", "P"));
  auto ok = read_inspect_log(t / "ok.json", {});
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  ASSERT_EQ(ok->draws.size(), 4u);
  EXPECT_EQ(ok->draws[3].outcomes.at(0).value, 0.5);
  EXPECT_FALSE(ok->score_kinds.at("match").labels);
  for (const char* bad : {"C ", "c", "NaN", "correct"}) {
    SCOPED_TRACE(bad);
    testing::write_text(t / "bad.json", json_log("e1", bad));
    auto log = read_inspect_log(t / "bad.json", {});
    ASSERT_FALSE(log.ok());
    EXPECT_EQ(log.status().code(), StatusCode::kInvalidArgument);
    const std::string f = t / "bad.json";
    EXPECT_NE(log.status().message().find("scores.match: mixes scores and labels: " + f +
                                          ": samples[0] (sample 1, epoch 1) has \"C\" (a score Inspect's "
                                          "value_to_float converts), but " + f + ": samples[3] (sample 2, epoch 2) has " +
                                          nlohmann::json(bad).dump() + " (a label)"),
              std::string::npos)
        << log.status().message();
  }
  // The first value a label, a score later: the same message, the other way round.
  testing::write_text(t / "rev.json", json_log4("e1", {"correct", "wrong", 1, "wrong"}));
  auto rev = read_inspect_log(t / "rev.json", {});
  ASSERT_FALSE(rev.ok());
  EXPECT_NE(rev.status().message().find("samples[0] (sample 1, epoch 1) has \"correct\" (a label), but " +
                                        (t / "rev.json") + ": samples[2] (sample 2, epoch 1) has 1 (a score"),
            std::string::npos)
      << rev.status().message();
}

// Issue 32 item 3: a scorer whose values are all labels imports as categories (first seen =
// 0), as `import draws` codes a label column; since b05f8b0 it was refused.
TEST(InspectLog, AScorerOfLabelsOnlyImportsAsCategories) {
  testing::TempDir t;
  testing::write_text(t / "a.json", json_log4("ea", {"correct", "wrong", "correct", "refused"}));
  auto a = read_inspect_log(t / "a.json", {});
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_EQ(a->draws.size(), 4u);
  EXPECT_TRUE(a->score_kinds.at("match").labels);
  const std::vector<std::pair<double, std::string>> want{{0, "correct"}, {1, "wrong"}, {0, "correct"}, {2, "refused"}};
  for (size_t k = 0; k < 4; ++k) {
    ASSERT_EQ(a->draws[k].outcomes.size(), 1u);
    EXPECT_EQ(a->draws[k].outcomes[0].value, want[k].first) << k;
    EXPECT_EQ(a->draws[k].outcomes[0].label, want[k].second) << k;
  }
  // Another log of the same command meets "refused" first: one code per label across both.
  testing::write_text(t / "b.json", json_log4("eb", {"refused", "fine", "wrong", "correct"}));
  auto b = read_inspect_log(t / "b.json", {});
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ(b->draws[0].outcomes[0].value, 0.0);  // coded alone, first seen
  std::vector<HarnessLog> logs{*a, *b};
  ASSERT_TRUE(code_label_scores(logs).ok());
  const std::map<std::string, double> code{{"correct", 0}, {"wrong", 1}, {"refused", 2}, {"fine", 3}};
  for (const auto& log : logs)
    for (const auto& d : log.draws) EXPECT_EQ(d.outcomes[0].value, code.at(d.outcomes[0].label)) << d.outcomes[0].label;
  // A log whose scorer gives scores beside them: refused, naming both files.
  testing::write_text(t / "c.json", json_log4("ec", {"C", "I", "C", "C"}));
  auto c = read_inspect_log(t / "c.json", {});
  ASSERT_TRUE(c.ok()) << c.status().message();
  std::vector<HarnessLog> mixed{*a, *c};
  const Status st = code_label_scores(mixed);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("scores.match: mixes scores and labels: " + (t / "a.json") +
                              ": samples[0] (sample 1, epoch 1) has \"correct\" (a label), but " + (t / "c.json") +
                              ": samples[0] (sample 1, epoch 1) has \"C\""),
            std::string::npos)
      << st.message();
}

/// The first line of `sha256sum FILE` (an independent SHA-256).
std::string sha256sum(const std::string& path) {
  std::string out;
  FILE* p = popen(("sha256sum '" + path + "'").c_str(), "r");
  if (p == nullptr) return out;
  char buf[256];
  if (fgets(buf, sizeof buf, p) != nullptr) out = buf;
  pclose(p);
  return out.substr(0, out.find(' '));
}

TEST(InspectLog, RunIdIsTheEvalIdElseTheFilesSha256) {
  auto pop = read_inspect_log(
      testing::data_file("harness-logs/2025-09-15T15-04-34-04-00_popularity_jKN69eAYYpZFAZhRgMAztp.eval"), {});
  ASSERT_TRUE(pop.ok()) << pop.status().message();
  EXPECT_EQ(pop->run_id, "eval_id fSkh5oCVXsM735YEddEDea");  // header.json eval.eval_id
  EXPECT_EQ(pop->draws.at(0).extra.at("run"), pop->run_id);
  const std::string old_path = testing::data_file("harness-logs/log_streaming.eval");
  auto old = read_inspect_log(old_path, {});  // inspect_ai 0.3.42: no eval_id
  ASSERT_TRUE(old.ok()) << old.status().message();
  const std::string sum = sha256sum(old_path);
  ASSERT_EQ(sum.size(), 64u);
  EXPECT_EQ(old->run_id, "sha256 " + sum);
}

TEST(HarnessLogs, TheSameRunTwiceIsRefusedNamingBothPaths) {
  testing::TempDir t;
  testing::write_text(t / "a.json", json_log("run-a", "C"));
  testing::write_text(t / "b.json", json_log("run-b", "C"));
  testing::write_text(t / "a-copy.json", json_log("run-a", "I"));  // rescored copy: same eval
  std::vector<HarnessLog> logs;
  for (const char* f : {"a.json", "b.json", "a-copy.json"}) {
    auto log = read_inspect_log(t / f, {});
    ASSERT_TRUE(log.ok()) << log.status().message();
    logs.push_back(std::move(*log));
  }
  EXPECT_TRUE(check_distinct_runs({logs[0], logs[1]}).ok());
  Status st = check_distinct_runs(logs);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find((t / "a.json") + " and " + (t / "a-copy.json") + " hold the same run (eval_id run-a)"),
            std::string::npos)
      << st.message();
  // Without an eval_id the bytes decide: identical files are one run, different ones two.
  testing::write_text(t / "x.json", json_log("", "C"));
  testing::write_text(t / "y.json", json_log("", "C"));
  testing::write_text(t / "z.json", json_log("", "I"));
  std::vector<HarnessLog> old;
  for (const char* f : {"x.json", "z.json", "y.json"}) old.push_back(*read_inspect_log(t / f, {}));
  EXPECT_TRUE(check_distinct_runs({old[0], old[1]}).ok());
  Status st2 = check_distinct_runs(old);
  ASSERT_FALSE(st2.ok());
  EXPECT_NE(st2.message().find((t / "x.json") + " and " + (t / "y.json")), std::string::npos) << st2.message();
}

/// An lm-eval line of document `doc` with the given doc_hash (and filter).
std::string lm_line(int doc, const std::string& doc_hash, const std::string& filter = "none") {
  return nlohmann::json{{"doc_id", doc},          {"target", "a"},        {"filter", filter},
                        {"metrics", {"acc"}},     {"acc", 1},             {"doc_hash", doc_hash},
                        {"target_hash", "t"},     {"prompt_hash", "p"}}
             .dump() +
         "\n";
}

/// An Inspect log of sample 1 in two epochs, each input one chat message with Inspect's
/// generated message id.
std::string chat_log(const std::string& eval_id, const std::vector<std::string>& msg_ids,
                     const std::vector<std::string>& contents, const std::vector<std::string>& targets) {
  nlohmann::json log = {{"version", 2},
                        {"status", "success"},
                        {"eval", {{"task", "toy"}, {"model", "local/m"}, {"eval_id", eval_id}, {"config", {{"epochs", 2}}}}},
                        {"samples", nlohmann::json::array()}};
  for (int e = 0; e < 2; ++e)
    log["samples"].push_back({{"id", 1},
                              {"epoch", e + 1},
                              {"input", {{{"id", msg_ids.at(e)}, {"role", "user"}, {"content", contents.at(e)}, {"source", "input"}}}},
                              {"target", targets.at(e)},
                              {"scores", {{"match", {{"value", "C"}}}}}});
  return log.dump();
}

// Tester s11 finding 3: a replicate must have answered the same input. Within one task an
// item's identity (lm-eval doc_hash, target_hash; Inspect input and target) must agree in
// every log and every record of a log, across models too; another task may reuse the id.
TEST(HarnessLogs, AnItemMustBeTheSameInputInEveryRecordOfItsTask) {
  testing::TempDir t;
  auto lm = [&](const std::string& name, const std::string& subject, const std::string& text) {
    testing::write_text(t / name, text);
    auto log = read_lm_eval_samples(t / name, {subject, "", "default", ""});
    EXPECT_TRUE(log.ok()) << log.status().message();
    return log.ok() ? *log : HarnessLog{};
  };
  const HarnessLog a = lm("samples_x_2024-01-01T00-00-00.jsonl", "m", lm_line(0, "h0") + lm_line(1, "h1"));
  const HarnessLog b = lm("samples_x_2024-01-02T00-00-00.jsonl", "n", lm_line(1, "h1") + lm_line(0, "OTHER"));
  const HarnessLog c = lm("samples_y_2024-01-02T00-00-00.jsonl", "m", lm_line(0, "OTHER"));
  EXPECT_EQ(a.item_identity.at("0").same, (std::map<std::string, std::string>{{"doc_hash", "h0"}, {"target_hash", "t"}}));
  EXPECT_EQ(a.item_identity.at("0").warn, (std::map<std::string, std::string>{{"prompt_hash", "p"}}));
  auto ab = check_same_items({a, b});
  ASSERT_FALSE(ab.ok());
  EXPECT_EQ(ab.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(ab.status().message().find(b.path + ":2: doc_id 0: doc_hash OTHER differs from " + a.path +
                                       ":1 (doc_hash h0): a different dataset version under the same document id"),
            std::string::npos)
      << ab.status().message();
  auto ac = check_same_items({a, c});  // task y's document 0 is another document
  ASSERT_TRUE(ac.ok()) << ac.status().message();
  EXPECT_TRUE(ac->empty());
  // Two filters' lines of one document that disagree: an error of the reader.
  testing::write_text(t / "samples_z_2024-01-01T00-00-00.jsonl", lm_line(0, "h0") + lm_line(0, "h9", "strict"));
  auto z = read_lm_eval_samples(t / "samples_z_2024-01-01T00-00-00.jsonl", {"m", "", "default", ""});
  ASSERT_FALSE(z.ok());
  EXPECT_NE(z.status().message().find(t / "samples_z_2024-01-01T00-00-00.jsonl:2: doc_id 0: doc_hash h9 differs"),
            std::string::npos)
      << z.status().message();

  // Inspect: the generated message ids differ between epochs and runs and are left out.
  testing::write_text(t / "r1.json", chat_log("r1", {"m1", "m2"}, {"q", "q"}, {"A", "A"}));
  testing::write_text(t / "r2.json", chat_log("r2", {"m3", "m4"}, {"q", "q"}, {"A", "A"}));
  testing::write_text(t / "r3.json", chat_log("r3", {"m5", "m6"}, {"q2", "q2"}, {"A", "A"}));
  std::vector<HarnessLog> ins;
  for (const char* f : {"r1.json", "r2.json", "r3.json"}) {
    auto log = read_inspect_log(t / f, {});
    ASSERT_TRUE(log.ok()) << log.status().message();
    ins.push_back(std::move(*log));
  }
  auto same = check_same_items({ins[0], ins[1]});
  ASSERT_TRUE(same.ok()) << same.status().message();
  EXPECT_TRUE(same->empty());
  auto differ = check_same_items(ins);
  ASSERT_FALSE(differ.ok());
  EXPECT_NE(differ.status().message().find((t / "r3.json") + ": samples[0] (sample 1, epoch 1): sample 1: input sha256 " +
                                           ins[2].item_identity.at("1").same.at("input sha256") + " differs from " +
                                           (t / "r1.json") + ": samples[0] (sample 1, epoch 1) (input sha256 " +
                                           ins[0].item_identity.at("1").same.at("input sha256") + ")"),
            std::string::npos)
      << differ.status().message();
  // Two epochs of one sample with another target: an error of the reader.
  testing::write_text(t / "r4.json", chat_log("r4", {"m1", "m2"}, {"q", "q"}, {"A", "B"}));
  auto r4 = read_inspect_log(t / "r4.json", {});
  ASSERT_FALSE(r4.ok());
  EXPECT_NE(r4.status().message().find((t / "r4.json") + ": samples[1] (sample 1, epoch 2): sample 1: target sha256 "),
            std::string::npos)
      << r4.status().message();
}

TEST(LmEvalLog, RunIdIsTheFileNameAndItsSha256) {
  testing::TempDir t;
  const std::string line = "{\"doc_id\": 0, \"target\": \"a\", \"metrics\": [\"acc\"], \"acc\": 1}\n";
  const std::string a = t / "samples_x_2024-01-01T00-00-00.000001.jsonl";
  std::filesystem::create_directories(t / "other");
  const std::string copy = t / "other/samples_x_2024-01-01T00-00-00.000001.jsonl";
  const std::string later = t / "samples_x_2024-01-01T00-00-00.000002.jsonl";  // a second run, same answers
  for (const auto& p : {a, copy, later}) testing::write_text(p, line);
  std::vector<HarnessLog> logs;
  for (const auto& p : {a, later, copy}) {
    auto log = read_lm_eval_samples(p, {"m", "", "default", ""});
    ASSERT_TRUE(log.ok()) << log.status().message();
    logs.push_back(std::move(*log));
  }
  EXPECT_EQ(logs[0].run_id, "samples_x_2024-01-01T00-00-00.000001.jsonl sha256 " + sha256sum(a));
  EXPECT_EQ(logs[0].draws.at(0).extra.at("run"), logs[0].run_id);
  EXPECT_TRUE(check_distinct_runs({logs[0], logs[1]}).ok());
  Status st = check_distinct_runs(logs);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find(a + " and " + copy + " hold the same run"), std::string::npos) << st.message();
}

// Python's json module writes a float nan as a bare NaN (and inf as Infinity); lm-eval's
// per-document NaN is a metric it could not compute. A metric so written is an error naming
// file, line and metric; the same literal in the doc or in loglikelihood resps is no metric.
TEST(LmEvalLog, NonFiniteMetricIsAnErrorNamingFileLineAndMetric) {
  testing::TempDir t;
  const std::string p = t / "samples_x_2024-01-01T00-00-00.000001.jsonl";
  const std::string ok_line =
      R"({"doc_id": 0, "doc": {"q": "a", "score": NaN, "w": [1, -Infinity]}, "target": "a", "resps": [[[-Infinity, false]]], "metrics": ["acc"], "acc": 1})";
  for (const char* lit : {"NaN", "Infinity", "-Infinity"}) {
    SCOPED_TRACE(lit);
    testing::write_text(p, ok_line + "\n" +
                               R"({"doc_id": 1, "target": "a", "metrics": ["acc", "bleu"], "acc": 0, "bleu": )" + lit +
                               "}\n");
    auto log = read_lm_eval_samples(p, {"m", "", "default", ""});
    ASSERT_FALSE(log.ok());
    EXPECT_EQ(log.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(log.status().message().find(p + ":2: bleu: " + lit + " is not a number this import accepts"),
              std::string::npos)
        << log.status().message();
    // A file without a `metrics` list: the NaN field is still a metric, not skipped.
    testing::write_text(p, std::string(R"({"doc_id": 0, "target": "a", "acc": 1, "f1": )") + lit + "}\n");
    auto bare = read_lm_eval_samples(p, {"m", "", "default", ""});
    ASSERT_FALSE(bare.ok());
    EXPECT_NE(bare.status().message().find(p + ":1: f1: " + lit + " is not a number"), std::string::npos)
        << bare.status().message();
  }
  testing::write_text(p, ok_line + "\n");
  auto ok = read_lm_eval_samples(p, {"m", "", "default", ""});
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  ASSERT_EQ(ok->draws.size(), 1u);
  EXPECT_EQ(ok->draws[0].outcomes.at(0).name, "acc,none");
  EXPECT_EQ(ok->draws[0].outcomes.at(0).value, 1.0);
  // NaN inside a string is text, and a malformed literal is still malformed JSON.
  testing::write_text(p, R"({"doc_id": 0, "target": "NaN", "metrics": ["acc"], "acc": 1})"
                         "\n");
  EXPECT_TRUE(read_lm_eval_samples(p, {"m", "", "default", ""}).ok());
  for (const char* broken : {R"({"doc_id": 0, "metrics": ["acc"], "acc": Nan})", R"({"doc_id": 0, "acc": Na)",
                             R"({"doc_id": 0, "acc": NaN)", R"({"doc_id": 0, "acc": -)", R"({"acc": NaNa})"}) {
    SCOPED_TRACE(broken);
    testing::write_text(p, std::string(broken) + "\n");
    auto bad = read_lm_eval_samples(p, {"m", "", "default", ""});
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.status().message().find(p + ":1: malformed JSON"), std::string::npos) << bad.status().message();
  }
}

TEST(LmEvalLog, ANestingThatWouldOverflowTheStackIsAnError) {
  testing::TempDir t;
  const std::string p = t / "samples_deep_2024-01-01T00-00-00.000001.jsonl";
  testing::write_text(p, R"({"doc_id": 0, "target": "a", "acc": 1, "doc": )" + std::string(100000, '[') +
                             std::string(100000, ']') + "}\n");
  auto log = read_lm_eval_samples(p, {"m", "", "default", ""});
  ASSERT_FALSE(log.ok());
  EXPECT_EQ(log.status().message(), p + ":1: JSON nested deeper than 512 levels (arrays and objects inside each other)");
}

TEST(LmEvalLog, MutatedLinesAreErrorsNeverCrashes) {
  const std::string src = std::string(NF_SOURCE_DIR) +
                          "/tests/fixtures/lm-eval/example-org__tiny-model/samples_toy_em_2024-05-01T11-00-00.000001.jsonl";
  const std::string bytes = testing::slurp(src);
  ASSERT_FALSE(bytes.empty());
  testing::TempDir t;
  std::mt19937_64 rng(16);
  int errors = 0;
  for (int trial = 0; trial < 300; ++trial) {
    std::string m = bytes;
    for (int k = 0; k < 1 + trial % 5; ++k) m[rng() % m.size()] = "{}[]\",:0a \n"[rng() % 11];
    const std::string p = t / "samples_toy_em_2024-05-01T11-00-00.000001.jsonl";
    testing::write_text(p, m);
    auto log = read_lm_eval_samples(p, {"m", "", "default", ""});
    if (!log.ok()) {
      ++errors;
      EXPECT_EQ(log.status().code(), StatusCode::kInvalidArgument);
      EXPECT_NE(log.status().message().find(p + ":"), std::string::npos) << log.status().message();
    }
  }
  EXPECT_GT(errors, 100);
}

}  // namespace
}  // namespace nf
