// A BBQ study (dataset format bbq, issue 11 item 2): items are three-option MCQs with their
// BBQ metadata stored; the bbq_bias analysis scores the study's own draws. The score
// function itself is checked against pandas in tests/data/bbq_test.cc; here the wiring:
// the analysis equals bbq_bias_score over the exported draws' choices.
#include <gtest/gtest.h>

#include <sstream>

#include "common/test_data.h"
#include "data/bbq.h"

namespace nf {
namespace {

TEST(BbqStudy, BiasAnalysisScoresTheDraws) {
  testing::TempDir t;
  testing::write_text(t / "bbq.yaml",
                      "name: bbq-sim\nseed: 3\ntask: mcq\ndataset:\n  format: bbq\n  path: ${NOISEFLOOR_DATA}/bbq/Age.jsonl\n"
                      "  limit: 60\nsubjects:\n  - name: s\n    backend: sim\n    model: m\nconditions: [none]\n"
                      "replicates: 1\nanalyses:\n  bbq_bias: {}\n");
  auto a = testing::run_cli("audit " + (t / "bbq.yaml") + " --quiet --out " + (t / "out") + " --store " +
                                (t / "s.sqlite"),
                            t.path(), testing::data_env());
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const auto rows = nlohmann::json::parse(testing::slurp(t / "out/results.json"))["analyses"]["bbq_bias"]["rows"];
  ASSERT_EQ(rows.size(), 2u);
  auto e = testing::run_cli("export --store " + (t / "s.sqlite") + " --format jsonl --out " + (t / "d.jsonl"), t.path());
  ASSERT_EQ(e.exit_code, 0) << e.err;
  std::map<std::string, std::string> answers;
  std::istringstream in(testing::slurp(t / "d.jsonl"));
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    const auto d = nlohmann::json::parse(line);
    for (const auto& o : d["outcomes"])
      if (o["name"] == "choice") answers[d["item"].get<std::string>()] = o["label"].get<std::string>();
  }
  ASSERT_EQ(answers.size(), 60u);
  auto items = read_bbq_jsonl(testing::data_file("bbq/Age.jsonl"), 60);
  ASSERT_TRUE(items.ok());
  for (const auto& r : rows) {
    const BbqBias b = bbq_bias_score(*items, answers, r["context_condition"].get<std::string>());
    EXPECT_EQ(r["items"], b.items);
    EXPECT_EQ(r["biased"], b.biased);
    EXPECT_EQ(r["non_unknown"], b.non_unknown);
    EXPECT_DOUBLE_EQ(r["score"].get<double>(), *b.score);
  }
}

}  // namespace
}  // namespace nf
