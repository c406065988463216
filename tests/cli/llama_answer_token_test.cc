// Against the real llama.cpp server shipped in ../shared/tools/llama-server (issue 11 "Must
// show"): a grammar-constrained MCQ study with logprobs; every ok draw's answer-position
// token is found (not the first generated token "<") and its own probability recorded;
// options absent from the top list stay unknown (null), never zero; the server's top list
// ignores the grammar and the draw says so. Skipped when the binary or model is missing.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/llama_server.h"
#include "common/test_data.h"

namespace nf {
namespace {

TEST(LlamaServer, AnswerPositionTokenIsFoundForEveryOkDraw) {
  if (const std::string why = testing::llama_server_missing(); !why.empty()) GTEST_SKIP() << why;
  testing::TempDir t;
  testing::LlamaServer server;
  if (const std::string err = testing::start_llama_server(&server, t / "server.log", 19000, 900, 2048); !err.empty())
    FAIL() << err;
  testing::write_text(t / "study.yaml", R"(name: llama-answer-token
seed: 7
task: mcq
dataset:
  format: medqa
  path: ${NOISEFLOOR_DATA}/medqa/medqa_usmle_4options_test.jsonl
  limit: 8
  id_field: realidx
subjects:
  - name: tiny
    backend: openai
    model: tiny
    base_url: ${LLAMA_URL}
    logprobs: 5
    extra_body: {grammar: "root ::= \"<answer>\" [A-D] \"</answer>\""}
conditions: [none]
configs:
  temperature: [0, 0.8]
  seed: [1]
replicates: 2
analyses:
  floor: {}
  option_probs: {}
)");
  auto a = testing::run_cli("audit " + (t / "study.yaml") + " --quiet --out " + (t / "out") + " --store " +
                                (t / "s.sqlite"),
                            t.path(), testing::data_env() + " LLAMA_URL=" + server.url());
  server.stop();
  ASSERT_EQ(a.exit_code, 0) << a.err;
  auto e = testing::run_cli("export --store " + (t / "s.sqlite") + " --format jsonl --out " + (t / "d.jsonl"), t.path());
  ASSERT_EQ(e.exit_code, 0) << e.err;
  int ok = 0;
  std::istringstream in(testing::slurp(t / "d.jsonl"));
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    const auto d = nlohmann::json::parse(line);
    if (d.value("status", "") != "ok") continue;
    ++ok;
    const auto& x = d["extra"];
    ASSERT_TRUE(x.contains("answer_token")) << line;
    const auto& at = x["answer_token"];
    ASSERT_FALSE(at["position"].is_null()) << at.dump();
    EXPECT_GT(at["position"].get<int>(), 0) << "the first token is '<', not the letter";
    EXPECT_EQ(at["token"].get<std::string>().size(), 1u);
    EXPECT_GT(at["prob"].get<double>(), 0.0);
    EXPECT_TRUE(at.value("top_logprobs_ignore_constraint", false)) << at.dump();
    EXPECT_TRUE(at["listed"].is_array()) << at.dump();  // which letters the top list itself carried
    for (const auto& [letter, p] : x["option_probs"].items())
      EXPECT_TRUE(p.is_null() || p.get<double>() > 0.0) << letter << " " << p;  // unknown, never 0
  }
  EXPECT_EQ(ok, 32);

  // Tester s10 finding 7: the pre-grammar top list of this model carries (almost) no option
  // letter, so most draws know only the sampled option. Such a draw has no argmax (it was
  // "argmax = answer 1.000" by construction), a gold known only as the answer is counted
  // apart, and the section warns that the lists ignore the grammar. `option_probs` is
  // accepted in the study file's analyses.
  const auto results = nlohmann::json::parse(testing::slurp(t / "out/results.json"));
  const auto& op = results["analyses"]["option_probs"];
  ASSERT_TRUE(op.contains("rows")) << op.dump(2);
  int64_t draws = 0, undefined = 0, defined = 0, one_known = 0;
  for (const auto& r : op["rows"]) {
    draws += r["draws"].get<int64_t>();
    undefined += r["argmax_undefined"].get<int64_t>();
    defined += r["argmax_defined"].get<int64_t>();
    EXPECT_EQ(r["constraint_ignored"], r["draws"]) << r.dump();
    EXPECT_EQ(r["listed_recorded"], r["draws"]) << r.dump();
    if (r["argmax_defined"] == 0) {
      EXPECT_TRUE(r["argmax_match_share"].is_null()) << r.dump();
    }
    EXPECT_EQ(r["gold_known"].get<int64_t>(),
              r["gold_listed"].get<int64_t>() + r["gold_sampled_only"].get<int64_t>()) << r.dump();
  }
  EXPECT_EQ(draws, ok);
  EXPECT_EQ(undefined + defined, draws);
  // Independently of the analysis: draws of the export with fewer than two known options.
  std::istringstream again(testing::slurp(t / "d.jsonl"));
  for (std::string line; std::getline(again, line);) {
    if (line.empty()) continue;
    const auto d = nlohmann::json::parse(line);
    if (d.value("status", "") != "ok") continue;
    int known = 0;
    for (const auto& [letter, p] : d["extra"]["option_probs"].items()) known += p.is_null() ? 0 : 1;
    one_known += known < 2 ? 1 : 0;
  }
  EXPECT_EQ(undefined, one_known);
  const std::string warnings = op["warnings"].dump();
  EXPECT_NE(warnings.find(fmt::format("{} of {} draws carry top_logprobs_ignore_constraint", ok, ok)),
            std::string::npos)
      << warnings;
  const std::string md = testing::slurp(t / "out/report.md");
  EXPECT_NE(md.find("> **Warning:** subject 'tiny': 32 of 32 draws carry top_logprobs_ignore_constraint"),
            std::string::npos);
  EXPECT_NE(testing::slurp(t / "out/report.html").find("top_logprobs_ignore_constraint"), std::string::npos);
}

}  // namespace
}  // namespace nf
