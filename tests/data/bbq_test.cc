// The BBQ reader and bias score (issue 11 item 2; Parrish et al. 2022 §4), on the real files:
// UnifiedQA-11B's published answers scored by bbq_bias_score equal an independent pandas
// computation (tests/reference/bbq_bias_ref.py) field by field; bad rows are refused
// naming file, line and field.
#include "data/bbq.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "common/test_data.h"

namespace nf {
namespace {

TEST(Bbq, BiasScoreOfPublishedAnswersEqualsTheReference) {
  for (const auto& [cat, fmt] : std::vector<std::pair<std::string, std::string>>{{"Age", "race"}, {"Religion", "arc"}}) {
    SCOPED_TRACE(cat + " " + fmt);
    auto items = read_bbq_jsonl(testing::data_file("bbq/" + cat + ".jsonl"));
    ASSERT_TRUE(items.ok()) << items.status().message();
    testing::TempDir t;
    const std::string cmd = "/usr/bin/python3 " + std::string(NF_SOURCE_DIR) + "/tests/reference/bbq_bias_ref.py " +
                            testing::data_dir() + "/bbq " + cat + " " + fmt + " >" + (t / "ref.json");
    ASSERT_EQ(std::system(cmd.c_str()), 0);
    const auto ref = nlohmann::json::parse(testing::slurp(t / "ref.json"));
    std::map<std::string, std::string> answers;
    for (const auto& [id, l] : ref["answers"].items()) answers[id] = l.get<std::string>();
    int with_target = 0;
    for (const auto& it : *items) with_target += it.target_letter.empty() ? 0 : 1;
    EXPECT_EQ(with_target, static_cast<int>(items->size()));  // every item of these files names one target
    for (const char* cond : {"ambig", "disambig"}) {
      const BbqBias b = bbq_bias_score(*items, answers, cond);
      const auto& r = ref[cond];
      EXPECT_EQ(b.items, r["items"].get<int64_t>()) << cond;
      EXPECT_EQ(b.answered, r["answered"].get<int64_t>()) << cond;
      EXPECT_EQ(b.correct, r["correct"].get<int64_t>()) << cond;
      EXPECT_EQ(b.non_unknown, r["non_unknown"].get<int64_t>()) << cond;
      EXPECT_EQ(b.biased, r["biased"].get<int64_t>()) << cond;
      ASSERT_TRUE(b.score.has_value());
      EXPECT_NEAR(*b.score, r["score"].get<double>(), 1e-12) << cond;
    }
  }
}

TEST(Bbq, ItemsAreThreeOptionMcqsWithUnknownAndTarget) {
  auto items = read_bbq_jsonl(testing::data_file("bbq/Age.jsonl"), 2);
  ASSERT_TRUE(items.ok());
  ASSERT_EQ(items->size(), 2u);
  const auto& it = (*items)[0];
  EXPECT_EQ(it.mcq.id, "Age-0");
  EXPECT_EQ(it.mcq.options.size(), 3u);
  EXPECT_EQ(it.context_condition, "ambig");
  EXPECT_EQ(it.unknown_letter, "C");   // "Can't be determined"
  EXPECT_EQ(it.target_letter, "A");    // the grandfather: stereotyped group "old"
  EXPECT_EQ(it.mcq.answer, "C");
  EXPECT_NE(it.mcq.question.find("\n\nWho was not comfortable"), std::string::npos);
}

TEST(Bbq, BadRowsNameFileLineAndField) {
  testing::TempDir t;
  auto ok = testing::slurp(testing::data_file("bbq/Age.jsonl")).substr(0, 2000);
  ok = ok.substr(0, ok.find('\n') + 1);
  testing::write_text(t / "bad.jsonl", ok + R"({"category": "Age"})" "\n");
  auto r = read_bbq_jsonl(t / "bad.jsonl");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("bad.jsonl:2: context_condition: missing"), std::string::npos)
      << r.status().message();
  std::string bad_label = ok;
  bad_label.replace(bad_label.find("\"label\": 2"), 10, "\"label\": 7");
  testing::write_text(t / "label.jsonl", bad_label);
  auto l = read_bbq_jsonl(t / "label.jsonl");
  ASSERT_FALSE(l.ok());
  EXPECT_NE(l.status().message().find("label.jsonl:1: label"), std::string::npos) << l.status().message();
  EXPECT_EQ(read_bbq_jsonl(t / "missing.jsonl").status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace nf
