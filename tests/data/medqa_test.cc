// MedQA JSONL reader: the real test split read in place, the shipped sample, and one
// test per malformed row (each checks the message names file, line and field).
#include "common/test_data.h"
#include "data/medqa.h"

#include <cstdlib>
#include <filesystem>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

namespace nf {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string data_dir() { return testing::data_dir(); }

const char* kGood = R"({"question":"Stem. Which?","options":{"A":"a","B":"b","C":"c","D":"d"},"answer_idx":"C"})";

class MedqaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (fs::temp_directory_path() /
             ("nf-medqa-" + std::to_string(::getpid()) + "-" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".jsonl"))
                .string();
  }
  void TearDown() override { fs::remove(path_); }

  void write(const std::string& text) { std::ofstream(path_) << text; }

  /// Writes `text`, reads it and returns the error message (the read must fail).
  std::string error_of(const std::string& text, const std::string& id_field = "") {
    write(text);
    Result<std::vector<McqItem>> r = read_medqa_jsonl(path_, 0, id_field);
    EXPECT_FALSE(r.ok()) << "expected an error for:\n" << text;
    if (r.ok()) return "";
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    return r.status().message();
  }

  std::string path_;
};

TEST(MedqaReal, ReadsTheTestSplitInPlace) {
  const std::string path = data_dir() + "/medqa/medqa_usmle_4options_test.jsonl";
  ASSERT_TRUE(fs::exists(path)) << "real data missing: set NOISEFLOOR_DATA (looked for " << path << ")";
  Result<std::vector<McqItem>> r = read_medqa_jsonl(path, 0, "realidx");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->size(), 1273u);
  const McqItem& first = r->front();
  EXPECT_EQ(first.id, "0");
  EXPECT_EQ(first.cluster, "0");
  EXPECT_EQ(first.answer, "B");
  ASSERT_EQ(first.options.size(), 4u);
  EXPECT_EQ(first.options[0].letter, "A");
  EXPECT_EQ(first.options[1].text, "Tell the attending that he cannot fail to disclose this mistake");
  EXPECT_THAT(first.question, StartsWith("A junior orthopaedic surgery resident"));
  EXPECT_EQ(first.meta["meta_info"], "step1");
  EXPECT_EQ(first.meta["line"], 1);
  // Every item has four options and a gold letter among them.
  std::set<std::string> answers;
  for (const McqItem& it : *r) {
    EXPECT_EQ(it.options.size(), 4u) << it.id;
    answers.insert(it.answer);
  }
  EXPECT_EQ(answers, (std::set<std::string>{"A", "B", "C", "D"}));
}

TEST(MedqaReal, LimitKeepsTheFirstItems) {
  const std::string path = data_dir() + "/medqa/medqa_usmle_4options_test.jsonl";
  ASSERT_TRUE(fs::exists(path)) << "real data missing: set NOISEFLOOR_DATA (looked for " << path << ")";
  Result<std::vector<McqItem>> r = read_medqa_jsonl(path, 100);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->size(), 100u);
  EXPECT_EQ(r->front().id, "medqa-1");  // no id_field: the 1-based line number
  EXPECT_EQ(r->back().id, "medqa-100");
}

TEST(MedqaSample, ShippedSampleIsValid) {
  Result<std::vector<McqItem>> r = read_medqa_jsonl(NF_SOURCE_DIR + "/data/sample-mcq.jsonl", 0, "id");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->size(), 24u);
  std::map<std::string, int> per_letter;
  for (size_t i = 0; i < r->size(); ++i) {
    const McqItem& it = (*r)[i];
    char want[24];
    std::snprintf(want, sizeof want, "s%02zu", i + 1);
    EXPECT_EQ(it.id, want);
    EXPECT_EQ(it.options.size(), 4u);
    ++per_letter[it.answer];
    // A vignette then a question sentence: remove_context has something to remove.
    ASSERT_FALSE(it.question.empty());
    EXPECT_EQ(it.question.back(), '?') << it.id;
    EXPECT_NE(it.question.find(". "), std::string::npos) << it.id;
  }
  EXPECT_EQ(per_letter, (std::map<std::string, int>{{"A", 6}, {"B", 6}, {"C", 6}, {"D", 6}}));
}

TEST_F(MedqaTest, IdAndClusterFields) {
  write(R"({"qid":7,"grp":"g1","question":"Q?","options":{"A":"a","B":"b"},"answer_idx":"B"})"
        "\n\n"
        R"({"qid":"x","grp":"g1","question":"Q?","options":{"A":"a","B":"b"},"answer_idx":"A"})"
        "\r\n");
  Result<std::vector<McqItem>> r = read_medqa_jsonl(path_, 0, "qid", "grp");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->size(), 2u);  // the blank line is skipped
  EXPECT_EQ((*r)[0].id, "7");
  EXPECT_EQ((*r)[1].id, "x");
  EXPECT_EQ((*r)[1].cluster, "g1");
  EXPECT_EQ((*r)[1].meta["line"], 3);
}

TEST_F(MedqaTest, MalformedJson) {
  const std::string msg = error_of(std::string(kGood) + "\n{\"question\": \"x\",\n");
  EXPECT_THAT(msg, StartsWith(path_ + ":2: malformed JSON: "));
}

TEST_F(MedqaTest, ANestingThatWouldOverflowTheStackIsAnErrorNotACrash) {
  // 100,000 levels parse, but storing the item dumps it recursively: a segfault before.
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_EQ(error_of(std::string(kGood) + "\n" +
                     R"({"question":"q","options":{"A":"x","B":"y"},"answer_idx":"A","meta":)" + deep + "}\n"),
            path_ + ":2: JSON nested deeper than 512 levels (arrays and objects inside each other)");
}

TEST_F(MedqaTest, NotAnObject) {
  EXPECT_THAT(error_of("[1, 2]\n"), StartsWith(path_ + ":1: expected a JSON object, found an array"));
}

TEST_F(MedqaTest, MissingQuestion) {
  EXPECT_EQ(error_of(R"({"options":{"A":"a"},"answer_idx":"A"})"), path_ + ":1: question: missing");
}

TEST_F(MedqaTest, NonStringQuestion) {
  EXPECT_EQ(error_of(R"({"question":5,"options":{"A":"a"},"answer_idx":"A"})"),
            path_ + ":1: question: expected a string, found an integer");
}

TEST_F(MedqaTest, MissingOptions) {
  EXPECT_EQ(error_of(R"({"question":"q","answer_idx":"A"})"), path_ + ":1: options: missing");
}

TEST_F(MedqaTest, EmptyOptions) {
  EXPECT_EQ(error_of(R"({"question":"q","options":{},"answer_idx":"A"})"), path_ + ":1: options: empty");
}

TEST_F(MedqaTest, OptionsNotAnObject) {
  EXPECT_EQ(error_of(R"({"question":"q","options":["a","b"],"answer_idx":"A"})"),
            path_ + ":1: options: expected an object of letter -> text, found an array");
}

TEST_F(MedqaTest, OptionTextNotAString) {
  EXPECT_EQ(error_of(R"({"question":"q","options":{"A":"a","B":2},"answer_idx":"A"})"),
            path_ + ":1: options.B: expected a string, found an integer");
}

TEST_F(MedqaTest, OptionLettersWithGap) {
  EXPECT_THAT(error_of(R"({"question":"q","options":{"A":"a","C":"c"},"answer_idx":"A"})"),
              StartsWith(path_ + ":1: options: letters must be A, B, C..."));
}

TEST_F(MedqaTest, MissingAnswerIdx) {
  EXPECT_EQ(error_of(std::string(kGood) + "\n" + R"({"question":"q","options":{"A":"a"}})" + "\n"),
            path_ + ":2: answer_idx: missing");
}

TEST_F(MedqaTest, AnswerIdxNotAnOption) {
  EXPECT_EQ(error_of(R"({"question":"q","options":{"A":"a","B":"b"},"answer_idx":"E"})"),
            path_ + ":1: answer_idx: 'E' is not one of the options (A, B)");
}

TEST_F(MedqaTest, DuplicateIdsNameBothLines) {
  const std::string row = R"({"id":"s1","question":"q","options":{"A":"a"},"answer_idx":"A"})";
  EXPECT_EQ(error_of(row + "\n" + R"({"id":"s2","question":"q","options":{"A":"a"},"answer_idx":"A"})" + "\n" + row +
                         "\n",
                     "id"),
            path_ + ":3: id: duplicate item id 's1' (first on line 1, again on line 3)");
}

TEST_F(MedqaTest, MissingIdField) {
  EXPECT_EQ(error_of(kGood, "realidx"), path_ + ":1: realidx: missing");
}

TEST_F(MedqaTest, MissingFileIsNotFound) {
  Result<std::vector<McqItem>> r = read_medqa_jsonl(path_ + ".absent");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(r.status().message(), HasSubstr(".absent"));
}

}  // namespace
}  // namespace nf
