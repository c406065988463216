// Tests of the MCQ conditions of seed 004 §2.4 (src/perturb/mcq_conditions.h).
#include "common/test_data.h"
#include "perturb/mcq_conditions.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <map>
#include <numeric>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "util/hash.h"
#include "util/rng.h"

namespace nf {
namespace {

McqItem make_item(const std::string& id = "q1") {
  McqItem item;
  item.id = id;
  item.cluster = id;
  item.question = "A 45-year-old man has a fever of 38.5°C. His glucose is 90 mg/dL. Which drug is best?";
  item.options = {{"A", "alpha"}, {"B", "bravo"}, {"C", "charlie"}, {"D", "delta"}};
  item.answer = "C";
  return item;
}

std::string data_dir() { return testing::data_dir(); }

TEST(McqConditions, NoneKeepsTheItem) {
  const McqItem item = make_item();
  auto r = apply_mcq_condition(item, "none", 1618);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->item_id, "q1");
  EXPECT_EQ(r->condition, "none");
  EXPECT_EQ(r->question, item.question);
  ASSERT_EQ(r->options.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(r->options[i].letter, item.options[i].letter);
    EXPECT_EQ(r->options[i].text, item.options[i].text);
    EXPECT_EQ(r->source_index[i], static_cast<int>(i));
    EXPECT_EQ(r->source_letter[i], item.options[i].letter);
  }
  EXPECT_EQ(r->answer, "C");
}

TEST(McqConditions, ShuffleMatchesFisherYatesOnTheItemStream) {
  // Independent re-statement of the contract: Fisher-Yates (i = n-1 .. 1, j uniform in
  // [0, i]) on Rng::stream(seed, {fnv1a64("shuffle"), fnv1a64(id)}).
  for (const std::string id : {"q1", "q2", "medqa-17", "x"}) {
    const McqItem item = make_item(id);
    std::vector<int> expect(4);
    std::iota(expect.begin(), expect.end(), 0);
    Rng rng = Rng::stream(1618, {fnv1a64("shuffle"), fnv1a64(id)});
    for (size_t i = expect.size() - 1; i >= 1; --i) {
      std::swap(expect[i], expect[static_cast<size_t>(rng.uniform_int(i + 1))]);
    }
    auto r = apply_mcq_condition(item, "shuffle", 1618);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->source_index, expect) << id;
    EXPECT_EQ(r->detail.at("permutation").get<std::vector<int>>(), expect);
    for (size_t k = 0; k < 4; ++k) {
      EXPECT_EQ(r->options[k].letter, std::string(1, static_cast<char>('A' + k)));
      EXPECT_EQ(r->options[k].text, item.options[static_cast<size_t>(expect[k])].text);
      EXPECT_EQ(r->source_letter[k], item.options[static_cast<size_t>(expect[k])].letter);
    }
    // The gold text follows its letter.
    const size_t shown = static_cast<size_t>(r->answer[0] - 'A');
    EXPECT_EQ(r->options[shown].text, "charlie");
  }
}

TEST(McqConditions, ShuffleDependsOnlyOnSeedAndItem) {
  const McqItem item = make_item("stable");
  auto a = apply_mcq_condition(item, "shuffle", 7);
  auto b = apply_mcq_condition(item, "shuffle", 7);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->source_index, b->source_index);
  // Over many items, a different study seed changes some permutations.
  int differ = 0;
  for (int i = 0; i < 50; ++i) {
    const McqItem it = make_item("item" + std::to_string(i));
    if (apply_mcq_condition(it, "shuffle", 7)->source_index != apply_mcq_condition(it, "shuffle", 8)->source_index)
      ++differ;
  }
  EXPECT_GT(differ, 25);
}

TEST(McqConditions, ShuffleIsUniformOverPermutations) {
  // 24 permutations of 4 options over 24,000 item ids: chi-square goodness of fit with
  // 23 df at a false-alarm rate of 1e-6 (critical value 70.5496 from
  // scipy.stats.chi2.ppf(1 - 1e-6, 23)). The streams are fixed, so the outcome is
  // deterministic; a biased shuffle (e.g. j uniform in [0, n)) fails it.
  std::map<std::vector<int>, int> counts;
  const int n = 24000;
  for (int i = 0; i < n; ++i) {
    auto r = apply_mcq_condition(make_item("u" + std::to_string(i)), "shuffle", 1618);
    ASSERT_TRUE(r.ok());
    ++counts[r->source_index];
  }
  ASSERT_EQ(counts.size(), 24u);
  const double expected = n / 24.0;
  double chi2 = 0.0;
  for (const auto& [perm, c] : counts) chi2 += (c - expected) * (c - expected) / expected;
  EXPECT_LT(chi2, 70.5496);
}

TEST(McqConditions, RemoveAnswerAppendsNoneCorrect) {
  const McqItem item = make_item();
  auto r = apply_mcq_condition(item, "remove_answer", 1618);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->options.size(), 4u);
  EXPECT_EQ(r->options[0].text, "alpha");
  EXPECT_EQ(r->options[1].text, "bravo");
  EXPECT_EQ(r->options[2].text, "delta");
  EXPECT_EQ(r->options[2].letter, "C");
  EXPECT_EQ(r->options[3].text, std::string(kNoneCorrectText));
  EXPECT_EQ(r->options[3].letter, "D");
  EXPECT_EQ(r->answer, "D");
  EXPECT_EQ(r->source_index, (std::vector<int>{0, 1, 3, -1}));
  EXPECT_EQ(r->source_letter, (std::vector<std::string>{"A", "B", "D", ""}));
  EXPECT_EQ(r->detail.at("removed"), "C");
  EXPECT_EQ(r->question, item.question);
}

TEST(McqConditions, RemoveContextKeepsQuestionSentence) {
  const McqItem item = make_item();
  auto r = apply_mcq_condition(item, "remove_context", 1618);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->question, "Which drug is best?");
  ASSERT_EQ(r->options.size(), 5u);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(r->options[i].text, item.options[i].text);
  EXPECT_EQ(r->options[4].text, std::string(kNotEnoughInfoText));
  EXPECT_EQ(r->options[4].letter, "E");
  EXPECT_EQ(r->answer, "E");
  EXPECT_EQ(r->source_index, (std::vector<int>{0, 1, 2, 3, -1}));
  EXPECT_EQ(r->detail.at("removed_chars").get<size_t>(), item.question.size() - r->question.size());
}

TEST(McqConditions, UnknownConditionSuggests) {
  auto r = apply_mcq_condition(make_item(), "shufle", 1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("did you mean 'shuffle'"), std::string::npos) << r.status().message();
  auto r2 = apply_mcq_condition(make_item(), "remove_contxt", 1);
  ASSERT_FALSE(r2.ok());
  EXPECT_NE(r2.status().message().find("remove_context"), std::string::npos);
}

TEST(McqConditions, RejectsAnswerNotAmongOptions) {
  McqItem item = make_item();
  item.answer = "E";
  auto r = apply_mcq_condition(item, "none", 1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  item.options.clear();
  item.answer = "A";
  EXPECT_FALSE(apply_mcq_condition(item, "shuffle", 1).ok());
}

TEST(QuestionSentence, SplitsOnlyAtSentenceBoundaries) {
  EXPECT_EQ(question_sentence("Temp is 38.5°C. Glucose 5.5 mg/dL. Which is it?"), "Which is it?");
  EXPECT_EQ(question_sentence("He has H. influenzae, e.g. in sputum. What next? Explain."), "What next?");
  EXPECT_EQ(question_sentence("Dr. Smith sees him. What is the diagnosis?\""), "What is the diagnosis?");
  EXPECT_EQ(question_sentence("Na 140 mEq/L\nK 4.1 mEq/L\nWhich of the following is most likely?"),
            "Which of the following is most likely?");
  EXPECT_EQ(question_sentence("No question here. The patient is most at risk for:"),
            "The patient is most at risk for:");
  EXPECT_EQ(question_sentence("She says, \xE2\x80\x9CI am tired.\xE2\x80\x9D What is the cause?"), "What is the cause?");
  EXPECT_EQ(question_sentence("She asks, \"Am I dying?\" and cries. Her pulse is 80/min."),
            "Her pulse is 80/min.");
  EXPECT_EQ(question_sentence("Single sentence?"), "Single sentence?");
  EXPECT_EQ(question_sentence(""), "");
  EXPECT_EQ(question_sentence("   \n "), "");
}

TEST(QuestionSentence, RealMedQaStems) {
  // Reads the MedQA test split in place (never copied). Fails if the data is missing.
  const std::string path = data_dir() + "/medqa/medqa_usmle_4options_test.jsonl";
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << "missing real data: " << path << " (set NOISEFLOOR_DATA)";
  std::string line;
  int checked = 0;
  int lines = 0;
  while (std::getline(in, line) && lines < 300) {
    ++lines;
    const auto j = nlohmann::json::parse(line);
    const std::string stem = j.at("question").get<std::string>();
    if (stem.find("? ") == std::string::npos && stem.find("?\"") == std::string::npos && stem.back() != '?') continue;
    const unsigned char first = static_cast<unsigned char>(stem[0]);
    if (first >= 0x80) continue;  // a few stems use look-alike non-ASCII letters
    const std::string q = question_sentence(stem);
    ASSERT_FALSE(q.empty()) << stem;
    EXPECT_EQ(q.back(), '?') << "line " << lines << ": " << q;
    EXPECT_TRUE(std::isupper(static_cast<unsigned char>(q[0]))) << "line " << lines << ": " << q;
    EXPECT_LT(q.size(), stem.size()) << "line " << lines;
    EXPECT_NE(stem.find(q), std::string::npos) << "line " << lines;
    EXPECT_EQ(q.find('\n'), std::string::npos) << "line " << lines;
    ++checked;
  }
  EXPECT_GT(checked, 250);
}

TEST(QuestionSentence, WholeMedQaSplit) {
  // All 1,273 stems: where the stem asks a question, the extracted sentence is one
  // question that starts with a capital. Known exception: a stem whose question is split
  // over numbered lines ("...states:\n1) ... and\n2) ...?"). Allow 3 such in the split.
  const std::string path = data_dir() + "/medqa/medqa_usmle_4options_test.jsonl";
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << "missing real data: " << path;
  std::string line;
  int asked = 0;
  int bad = 0;
  std::string bad_list;
  while (std::getline(in, line)) {
    const std::string stem = nlohmann::json::parse(line).at("question").get<std::string>();
    if (stem.find('?') == std::string::npos) continue;
    ++asked;
    const std::string q = question_sentence(stem);
    const unsigned char first = q.empty() ? 0 : static_cast<unsigned char>(q[0]);
    const bool capital = std::isupper(first) || first >= 0x80;
    if (q.empty() || q.back() != '?' || !capital || q.size() >= stem.size()) {
      ++bad;
      bad_list += q + "\n";
    }
  }
  EXPECT_GT(asked, 1200);
  EXPECT_LE(bad, 3) << bad_list;
}

TEST(QuestionSentence, KnownMedQaStemWithLabTable) {
  // Line 101 of the test split ends in a lab table with one value per line and decimals.
  const std::string path = data_dir() + "/medqa/medqa_usmle_4options_test.jsonl";
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << "missing real data: " << path;
  std::string line;
  for (int i = 0; i < 101; ++i) ASSERT_TRUE(static_cast<bool>(std::getline(in, line)));
  const std::string stem = nlohmann::json::parse(line).at("question").get<std::string>();
  ASSERT_NE(stem.find("mg/dL\n"), std::string::npos);  // the premise of this test
  EXPECT_EQ(question_sentence(stem), "Which of the following is the most likely cause of this patient's condition?");
}

}  // namespace
}  // namespace nf
