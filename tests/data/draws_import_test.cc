// Long-format draw import: RFC 4180 CSV and JSONL, and one test per bad input (each
// checks that the message names file, line and column).
#include "data/draws_import.h"

#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

namespace nf {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;

class DrawsImportTest : public ::testing::Test {
 protected:
  std::string write(const std::string& ext, const std::string& text) {
    const std::string p = (fs::temp_directory_path() /
                           ("nf-draws-" + std::to_string(::getpid()) + "-" +
                            ::testing::UnitTest::GetInstance()->current_test_info()->name() + ext))
                              .string();
    std::ofstream(p, std::ios::binary) << text;
    files_.push_back(p);
    return p;
  }
  void TearDown() override {
    for (const auto& f : files_) fs::remove(f);
  }
  std::string error_of(const std::string& ext, const std::string& text) {
    const std::string p = write(ext, text);
    Result<std::vector<LongDrawRow>> r = read_long_draws(p);
    EXPECT_FALSE(r.ok()) << "expected an error for:\n" << text;
    return r.ok() ? "" : r.status().message();
  }
  std::vector<std::string> files_;
};

const char* kHeader = "subject,item,cluster,condition,config,replicate,outcome,value\n";

TEST_F(DrawsImportTest, CsvBasicRowsAndValueKinds) {
  const std::string p = write(".csv", std::string(kHeader) +
                                          "m1,q1,,none,default,0,correct,1\n"
                                          "m1,q1,c9,none,default,1,correct,false\n"
                                          "m1,q1,,none,default,0,answer,B\n"
                                          "m1,q1,,none,default,1,answer,C\n"
                                          "m1,q2,,none,default,0,answer,B\n"
                                          "m1,q2,,none,default,0,score,0.25\n");
  Result<std::vector<LongDrawRow>> r = read_long_draws(p);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->size(), 6u);
  const auto& v = *r;
  EXPECT_EQ(v[0].subject, "m1");
  EXPECT_EQ(v[0].cluster, "q1");  // empty cluster defaults to the item
  EXPECT_EQ(v[1].cluster, "c9");
  EXPECT_DOUBLE_EQ(v[0].value, 1.0);
  EXPECT_EQ(v[0].label, "");
  EXPECT_DOUBLE_EQ(v[1].value, 0.0);
  EXPECT_EQ(v[1].label, "false");
  EXPECT_EQ(v[1].replicate, 1);
  // Categories per outcome, first seen = 0, stable.
  EXPECT_DOUBLE_EQ(v[2].value, 0.0);
  EXPECT_EQ(v[2].label, "B");
  EXPECT_DOUBLE_EQ(v[3].value, 1.0);
  EXPECT_EQ(v[3].label, "C");
  EXPECT_DOUBLE_EQ(v[4].value, 0.0);
  EXPECT_DOUBLE_EQ(v[5].value, 0.25);
}

TEST_F(DrawsImportTest, CsvRfc4180QuotingAndColumnOrder) {
  const std::string p = write(".csv",
                              "value,outcome,replicate,config,condition,item,subject\r\n"
                              "\"a, \"\"quoted\"\"\nline\",answer,0,\"t=0,p=1\",none,\"q,1\",m\r\n"
                              "\r\n"
                              "7,answer,2,default,shuffle,q2,m\r\n");
  Result<std::vector<LongDrawRow>> r = read_long_draws(p);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].label, "a, \"quoted\"\nline");
  EXPECT_EQ((*r)[0].config, "t=0,p=1");
  EXPECT_EQ((*r)[0].item, "q,1");
  EXPECT_EQ((*r)[0].cluster, "q,1");  // no cluster column: the item
  EXPECT_DOUBLE_EQ((*r)[1].value, 7.0);
  EXPECT_EQ((*r)[1].condition, "shuffle");
}

TEST_F(DrawsImportTest, JsonlRows) {
  const std::string p = write(".jsonl",
                              R"({"subject":"m","item":12,"condition":"none","config":"default","replicate":0,"outcome":"correct","value":true})"
                              "\n\n"
                              R"({"subject":"m","item":12,"cluster":"f1","condition":"none","config":"default","replicate":1,"outcome":"answer","value":"D"})"
                              "\n");
  Result<std::vector<LongDrawRow>> r = read_long_draws(p);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].item, "12");
  EXPECT_DOUBLE_EQ((*r)[0].value, 1.0);
  EXPECT_EQ((*r)[1].cluster, "f1");
  EXPECT_EQ((*r)[1].label, "D");
  EXPECT_EQ((*r)[1].replicate, 1);
}

TEST_F(DrawsImportTest, CsvMissingColumnSuggests) {
  const std::string msg = error_of(".csv", "subject,item,condition,config,replicat,outcome,value\nm,q,n,d,0,o,1\n");
  EXPECT_THAT(msg, HasSubstr(":1: replicate: missing column (did you mean 'replicat'?)"));
}

TEST_F(DrawsImportTest, CsvEmptySubject) {
  const std::string p = write(".csv", std::string(kHeader) + "m,q,,n,d,0,o,1\n,q,,n,d,0,o,1\n");
  Result<std::vector<LongDrawRow>> r = read_long_draws(p);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), p + ":3: subject: empty");
}

TEST_F(DrawsImportTest, CsvBadReplicate) {
  EXPECT_THAT(error_of(".csv", std::string(kHeader) + "m,q,,n,d,-1,o,1\n"),
              HasSubstr(":2: replicate: expected a non-negative integer, got '-1'"));
  EXPECT_THAT(error_of(".csv", std::string(kHeader) + "m,q,,n,d,1.5,o,1\n"),
              HasSubstr(":2: replicate: expected a non-negative integer, got '1.5'"));
}

TEST_F(DrawsImportTest, CsvDuplicateRowNamesBothLines) {
  EXPECT_THAT(error_of(".csv", std::string(kHeader) + "m,q,,n,d,0,o,1\nm,q,,n,d,1,o,1\nm,q,,n,d,0,o,0\n"),
              HasSubstr(":4: outcome: duplicate row for (subject=m, item=q, condition=n, config=d, replicate=0, "
                        "outcome=o) (first on line 2)"));
}

TEST_F(DrawsImportTest, CsvMalformedQuoting) {
  EXPECT_THAT(error_of(".csv", std::string(kHeader) + "m,q,,n,d,0,o,\"open\n"),
              HasSubstr(":2: field 8: malformed CSV: unterminated quoted field"));
  EXPECT_THAT(error_of(".csv", std::string(kHeader) + "m,q,,n,d,0,o,\"x\"y\n"),
              HasSubstr(":2: field 8: malformed CSV: 'y' after a closing quote"));
  EXPECT_THAT(error_of(".csv", std::string(kHeader) + "m,q,,n,d,0,o,x\"y\n"),
              HasSubstr(":2: field 8: malformed CSV: quote inside an unquoted field"));
}

TEST_F(DrawsImportTest, CsvWrongFieldCount) {
  EXPECT_THAT(error_of(".csv", std::string(kHeader) + "m,q,,n,d,0,o\n"),
              HasSubstr(":2: expected 8 fields as in the header, found 7"));
}

TEST_F(DrawsImportTest, LineNumbersCountEmbeddedNewlines) {
  // The quoted field spans lines 2-3, so the bad row starts on line 4.
  EXPECT_THAT(error_of(".csv", std::string(kHeader) + "m,q,,n,d,0,o,\"a\nb\"\nm,q,,n,d,x,o,1\n"),
              HasSubstr(":4: replicate:"));
}

TEST_F(DrawsImportTest, JsonlErrors) {
  EXPECT_THAT(error_of(".jsonl", R"({"subject":"m","item":"q","condition":"n","config":"d","replicate":0,"value":1})"),
              HasSubstr(":1: outcome: missing"));
  EXPECT_THAT(error_of(".jsonl", "{\"subject\": \n"), HasSubstr(":1: malformed JSON"));
  EXPECT_THAT(
      error_of(".jsonl",
               R"({"subject":"m","item":"q","condition":"n","config":"d","replicate":0.5,"outcome":"o","value":1})"),
      HasSubstr(":1: replicate: expected a non-negative integer"));
  EXPECT_THAT(
      error_of(".jsonl",
               R"({"subject":"m","item":["q"],"condition":"n","config":"d","replicate":0,"outcome":"o","value":1})"),
      HasSubstr(":1: item: expected a string or a number, found array"));
}

TEST_F(DrawsImportTest, UnknownExtensionAndMissingFile) {
  EXPECT_THAT(error_of(".txt", "x"), HasSubstr("unknown file extension"));
  Result<std::vector<LongDrawRow>> r = read_long_draws("/nonexistent/draws.csv");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace nf
