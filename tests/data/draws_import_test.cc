// Long-format draw import: RFC 4180 CSV and JSONL, and one test per bad input (each
// checks that the message names file, line and column).
#include "data/draws_import.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

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
  std::string error_of(const std::string& ext, const std::string& text, const LongDrawChecks& checks = {}) {
    const std::string p = write(ext, text);
    Result<std::vector<LongDrawRow>> r = read_long_draws(p, checks);
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

// The converter reuses one row object and assigns only the fields that changed (issue 14):
// a defaulted column after an explicit one (and the reverse) still gets its own value, as
// does a label after a labelled row, whatever the previous row held.
TEST_F(DrawsImportTest, DefaultsAndLabelsDoNotLeakFromThePreviousRow) {
  const std::string p = write(".csv",
                              "subject,item,cluster,condition,config,replicate,outcome,value,label\n"
                              "m,q1,c1,x,cfg,0,o,1,L\n"
                              "m,q1,,,,1,o,0,\n"
                              "m,q2,,x,,0,o,1,\n"
                              "m,q2,c2,,cfg,1,o,0,M\n"
                              "m,q2,c2,,cfg,1,p,yes,\n"
                              "m,q2,c2,,cfg,2,o,1,\n");
  Result<std::vector<LongDrawRow>> r = read_long_draws(p);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->size(), 6u);
  const auto& v = *r;
  auto fields = [](const LongDrawRow& row) {
    return std::vector<std::string>{row.subject, row.item,    row.cluster, row.condition,
                                    row.config,  row.outcome, row.label};
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(fields(v[0]), (V{"m", "q1", "c1", "x", "cfg", "o", "L"}));
  EXPECT_EQ(fields(v[1]), (V{"m", "q1", "q1", "none", "default", "o", ""}));
  EXPECT_EQ(fields(v[2]), (V{"m", "q2", "q2", "x", "default", "o", ""}));
  EXPECT_EQ(fields(v[3]), (V{"m", "q2", "c2", "none", "cfg", "o", "M"}));
  EXPECT_EQ(fields(v[4]), (V{"m", "q2", "c2", "none", "cfg", "p", "yes"}));  // a category label
  EXPECT_EQ(fields(v[5]), (V{"m", "q2", "c2", "none", "cfg", "o", ""}));
  EXPECT_EQ(v[1].replicate, 1);
  EXPECT_DOUBLE_EQ(v[3].value, 0.0);
  EXPECT_DOUBLE_EQ(v[4].value, 0.0);  // first category of p
}

TEST_F(DrawsImportTest, CsvRfc4180QuotingAndColumnOrder) {
  const std::string p = write(".csv",
                              "value,outcome,replicate,config,condition,item,subject\r\n"
                              "\"a, \"\"quoted\"\"\nline\",answer,0,\"t=0,p=1\",none,\"q,1\",m\r\n"
                              "\r\n"
                              "7,score,2,default,shuffle,q2,m\r\n");
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

// Tester finding 22.11 (session 9): a subject name holding a line break (a quoted CSV
// field) was imported and broke every markdown table of the report.
TEST_F(DrawsImportTest, KeyValuesWithALineBreakAreRefused) {
  EXPECT_THAT(error_of(".csv", std::string(kHeader) + "m,q1,,n,d,0,o,1\n\"m\nx\",q1,,n,d,1,o,1\n"),
              HasSubstr(":3: subject: a control character (line break, ...) in 'm\\nx'"));
  EXPECT_THAT(error_of(".jsonl", R"({"subject":"m","item":"q\r1","condition":"n","config":"d","replicate":0,)"
                                 R"("outcome":"o","value":1})"
                                 "\n"),
              HasSubstr(":1: item: a control character (line break, ...) in 'q\\r1'"));
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

// Value checks (issue 14 follow-up): a value that would be imported as a silently wrong
// number is refused, naming file, line and column.
TEST_F(DrawsImportTest, NonFiniteValuesAreRefused) {
  for (const std::string v : {"nan", "NaN", "-nan", "inf", "-Inf", "+infinity", "nan(0x1)", "1e999", "-1e400"}) {
    const std::string p = write(".csv", std::string(kHeader) + "m,q,,n,d,0,o,1\nm,q,,n,d,1,o," + v + "\n");
    Result<std::vector<LongDrawRow>> r = read_long_draws(p);
    ASSERT_FALSE(r.ok()) << v;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(r.status().message(),
              p + ":3: value: '" + v +
                  "' is not a finite number (nan, inf and values beyond a double's range are refused; leave a missing "
                  "outcome out instead of writing a row for it)")
        << v;
  }
}

// A non-zero number too small for a normal double would read as 0 (1e-400) or with lost
// precision (1e-310, subnormal): refused as out of range, in CSV and JSONL alike. A zero
// written another way, and the smallest normal double, are numbers.
TEST_F(DrawsImportTest, UnderflowingValuesAreRefusedButZeroIsNot) {
  const std::string problem =
      "' is out of range: not zero, but below the smallest normal double (2.2e-308), so it would be read as 0 or "
      "with lost precision (write 0 if it is zero)";
  const std::string row = R"({"subject":"m","item":"q","condition":"n","config":"d","outcome":"o","replicate":0,)";
  for (const std::string v : {"1e-400", "-1E-400", "0.0001e-310", "1e-310", "4.9e-324"}) {
    const std::string p = write(".csv", std::string(kHeader) + "m,q,,n,d,0,o,1\nm,q,,n,d,1,o," + v + "\n");
    Result<std::vector<LongDrawRow>> r = read_long_draws(p);
    ASSERT_FALSE(r.ok()) << v;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(r.status().message(), p + ":3: value: '" + v + problem) << v;
    // JSONL: a JSON number (its text as written, before the parser rounds it) and a string.
    const std::string j = write(".jsonl", row + "\"value\":" + v + "}\n");
    r = read_long_draws(j);
    ASSERT_FALSE(r.ok()) << v;
    EXPECT_EQ(r.status().message(), j + ":1: value: '" + v + problem) << v;
    EXPECT_THAT(error_of(".jsonl", row + "\"value\":\"" + v + "\"}\n"), HasSubstr(":1: value: '" + v + problem));
  }
  // The export's one-draw-per-line form: the outcome's value.
  EXPECT_THAT(
      error_of(".jsonl", R"({"subject":"m","item":"q","replicate":0,"outcomes":[{"name":"o","value":1e-400}]})"),
      HasSubstr(":1: value: '1e-400" + problem));
  const std::string p = write(".csv", std::string(kHeader) + "m,q,,n,d,0,o,0e-400\nm,q,,n,d,1,o,-0.000E+5\n" +
                                          "m,q,,n,d,2,o,2.2250738585072014e-308\n");
  auto r = read_long_draws(p);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->size(), 3u);
  EXPECT_EQ((*r)[0].value, 0.0);
  EXPECT_EQ((*r)[1].value, 0.0);
  EXPECT_EQ((*r)[2].value, 2.2250738585072014e-308);
  const std::string j = write(".jsonl", row + "\"value\":0e-400}\n");
  r = read_long_draws(j);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].value, 0.0);
}

// Category labels are kept as written (numbers are trimmed): two spellings of one
// outcome's label that differ only by surrounding whitespace would silently be two
// categories, so they are refused naming both with their first lines; spellings that
// differ only by letter case are imported as written with a warning.
TEST_F(DrawsImportTest, LabelsDifferingOnlyByWhitespaceAreRefused) {
  const std::string p = write(".csv", std::string(kHeader) + "m,q1,,n,d,0,ans,B\nm,q2,,n,d,0,ans,A\n" +
                                          "m,q3,,n,d,0,other,B \nm,q4,,n,d,0,ans, B\n");
  Result<std::vector<LongDrawRow>> r = read_long_draws(p);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(),
            p + ":5: value: outcome 'ans' has labels that differ only by surrounding whitespace: 'B' (first on line 2) "
                "and ' B' (first on line 5); they would be two categories: remove the spaces");
  // Quoted CSV fields and a tab; JSONL strings.
  EXPECT_THAT(error_of(".csv", std::string(kHeader) + "m,q1,,n,d,0,ans,\"B\t\"\nm,q2,,n,d,0,ans,B\n"),
              HasSubstr(":3: value: outcome 'ans' has labels that differ only by surrounding whitespace: 'B\\t' "
                        "(first on line 2) and 'B' (first on line 3)"));
  const std::string row = R"({"subject":"m","item":"q","condition":"n","config":"d","outcome":"ans",)";
  EXPECT_THAT(error_of(".jsonl", row + R"("replicate":0,"value":"yes"})" + "\n" + row +
                                     R"("replicate":1,"value":"yes "})" + "\n"),
              HasSubstr(":2: value: outcome 'ans' has labels that differ only by surrounding whitespace: 'yes' "
                        "(first on line 1) and 'yes ' (first on line 2)"));
  // The label column of numeric rows (export writes value 1, label B) has the same check.
  EXPECT_THAT(error_of(".csv", "subject,item,condition,config,replicate,outcome,value,label\n"
                               "m,q1,n,d,0,choice,1,B\nm,q2,n,d,0,choice,1,B \n"),
              HasSubstr(":3: label: outcome 'choice' has labels that differ only by surrounding whitespace: 'B' "
                        "(first on line 2) and 'B ' (first on line 3)"));
  // One spelling throughout, whitespace included, is kept as written.
  const std::string one = write(".csv", std::string(kHeader) + "m,q1,,n,d,0,ans, B\nm,q2,,n,d,0,ans, B\n");
  r = read_long_draws(one);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[1].label, " B");
  EXPECT_EQ((*r)[1].value, 0.0);
}

// Outcome names too: "correct" and "correct " would be two outcomes.
TEST_F(DrawsImportTest, OutcomeNamesDifferingOnlyByWhitespaceAreRefused) {
  const std::string p = write(".csv", std::string(kHeader) + "m,q1,,n,d,0,correct,1\nm,q1,,n,d,0,other,1\n" +
                                          "m,q2,,n,d,0,\"correct \",0\n");
  Result<std::vector<LongDrawRow>> r = read_long_draws(p);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            p + ":4: outcome: outcome names that differ only by surrounding whitespace: 'correct' (first on line 2) "
                "and 'correct ' (first on line 4); they would be two outcomes: remove the spaces");
}

TEST_F(DrawsImportTest, LabelsDifferingOnlyByCaseWarn) {
  const std::string p = write(".csv", std::string(kHeader) + "m,q1,,n,d,0,ans,yes\nm,q2,,n,d,0,ans,no\n" +
                                          "m,q3,,n,d,0,ans,Yes\nm,q4,,n,d,0,ans,YES\nm,q5,,n,d,0,ans,yes\n");
  std::vector<std::string> warnings;
  Result<std::vector<LongDrawRow>> r = read_long_draws(p, {}, &warnings);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->size(), 5u);
  EXPECT_EQ((*r)[2].value, 2.0);  // imported as written: a category of its own
  EXPECT_EQ((*r)[4].value, 0.0);
  ASSERT_EQ(warnings.size(), 2u) << ::testing::PrintToString(warnings);
  EXPECT_EQ(warnings[0], p + ": value: outcome 'ans' has labels that differ only by letter case: 'yes' (first on line "
                             "2) and 'Yes' (first on line 4); they are imported as two categories (fix the spelling "
                             "if they are one)");
  EXPECT_THAT(warnings[1], HasSubstr("'yes' (first on line 2) and 'YES' (first on line 5)"));
}

// The twin checks keep at most 100 spellings per outcome; past that a warning says the
// rest are not checked (and a twin past the cap is not found).
TEST_F(DrawsImportTest, LabelSpellingChecksAreCapped) {
  std::string csv = kHeader;
  for (int i = 0; i < 100; ++i) csv += "m,q" + std::to_string(i) + ",,n,d,0,ans,L" + std::to_string(i) + "\n";
  csv += "m,x1,,n,d,0,ans,X\nm,x2,,n,d,0,ans,X \n";  // lines 102, 103
  std::vector<std::string> warnings;
  const std::string p = write(".csv", csv);
  Result<std::vector<LongDrawRow>> r = read_long_draws(p, {}, &warnings);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(warnings.size(), 1u) << ::testing::PrintToString(warnings);
  EXPECT_EQ(warnings[0], p + ":102: value: outcome 'ans' has more than 100 distinct labels; those past the 100th are "
                             "not checked for spellings that differ only by whitespace or letter case");
  // Below the cap the same twin is refused.
  csv = kHeader;
  for (int i = 0; i < 98; ++i) csv += "m,q" + std::to_string(i) + ",,n,d,0,ans,L" + std::to_string(i) + "\n";
  csv += "m,x1,,n,d,0,ans,X\nm,x2,,n,d,0,ans,X \n";
  EXPECT_THAT(error_of(".csv", csv),
              HasSubstr(":101: value: outcome 'ans' has labels that differ only by surrounding"));
}

// Key columns (issue 19): "q1" and "q1 " in the item column would silently be two items
// (a floor over twice the items), and so for subject, cluster, condition and config: two
// values of one key column that differ only by surrounding whitespace are refused, naming
// both spellings and the lines where each first appears, in CSV and JSONL alike.
TEST_F(DrawsImportTest, KeyValuesDifferingOnlyByWhitespaceAreRefused) {
  const std::vector<std::string> cols{"subject", "item", "cluster", "condition", "config"};
  for (size_t c = 0; c < cols.size(); ++c) {
    SCOPED_TRACE(cols[c]);
    // Row i's key: every column "<col>0" but column c, which is `v` (distinct replicates).
    auto csv_row = [&](const std::string& v, int rep) {
      std::string out;
      for (size_t k = 0; k < cols.size(); ++k) out += (k == c ? v : cols[k] + "0") + ",";
      return out + std::to_string(rep) + ",correct,1\n";
    };
    auto json_row = [&](const std::string& v, int rep) {
      std::string out = "{";
      for (size_t k = 0; k < cols.size(); ++k) out += "\"" + cols[k] + "\":\"" + (k == c ? v : cols[k] + "0") + "\",";
      return out + "\"replicate\":" + std::to_string(rep) + ",\"outcome\":\"correct\",\"value\":1}\n";
    };
    // Line 2 "k1", line 3 "other", line 4 "k1 " (CSV, after the header); a tab before "k1"
    // in JSONL, lines 1..3.
    const std::string p =
        write(".csv", std::string(kHeader) + csv_row("k1", 0) + csv_row("other", 1) + csv_row("k1 ", 2));
    Result<std::vector<LongDrawRow>> r = read_long_draws(p);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(r.status().message(),
              p + ":4: " + cols[c] + ": values that differ only by surrounding whitespace: 'k1' (first on line 2) and "
                  "'k1 ' (first on line 4); they would be two " + cols[c] + "s: remove the spaces");
    const std::string j = write(".jsonl", json_row("\\tk1", 0) + json_row("other", 1) + json_row("k1", 2));
    r = read_long_draws(j);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().message(),
              j + ":3: " + cols[c] + ": values that differ only by surrounding whitespace: '\\tk1' (first on line 1) "
                  "and 'k1' (first on line 3); they would be two " + cols[c] + "s: remove the spaces");
    // A value that is only whitespace is refused too.
    const std::string blank = error_of(".csv", std::string(kHeader) + csv_row("k1", 0) + csv_row("  ", 1));
    EXPECT_EQ(blank, files_.back() + ":3: " + cols[c] + ": only whitespace ('  '): write the name without spaces, "
                                                        "or leave the cell empty where the column has a default");
  }
  // Not adjacent: the twin is found after other values came between.
  EXPECT_THAT(error_of(".csv", std::string(kHeader) + "m,q1,,n,d,0,o,1\nm,q2,,n,d,0,o,1\nm,q1,,n,d,1,o,1\n"
                                                      "m,q3,,n,d,0,o,1\nm, q1,,n,d,0,o,1\n"),
              HasSubstr(":6: item: values that differ only by surrounding whitespace: 'q1' (first on line 2) and "
                        "' q1' (first on line 6)"));
  // A key's default counts as its value: an empty condition is "none", an empty cluster
  // the item (so cluster "q1 " of item q2 twins the default cluster of item q1).
  EXPECT_THAT(error_of(".csv", std::string(kHeader) + "m,q1,,,d,0,o,1\nm,q1,,none ,d,1,o,1\n"),
              HasSubstr(":3: condition: values that differ only by surrounding whitespace: 'none' (first on line 2) "
                        "and 'none ' (first on line 3)"));
  EXPECT_THAT(error_of(".csv", std::string(kHeader) + "m,q1,,n,d,0,o,1\nm,q2,q1 ,n,d,0,o,1\n"),
              HasSubstr(":3: cluster: values that differ only by surrounding whitespace: 'q1' (first on line 2) "
                        "and 'q1 ' (first on line 3)"));
  // ... in either order; a named cluster after defaulted ones takes them as they were.
  EXPECT_THAT(error_of(".csv", std::string(kHeader) + "m,q2,q1 ,n,d,0,o,1\nm,q1,,n,d,0,o,1\n"),
              HasSubstr(":3: cluster: values that differ only by surrounding whitespace: 'q1 ' (first on line 2) "
                        "and 'q1' (first on line 3)"));
  // Item "q1 " in cluster "q1": one value in each column, no twin (the item was never a
  // cluster value).
  std::vector<std::string> warnings;
  Result<std::vector<LongDrawRow>> ok =
      read_long_draws(write(".csv", std::string(kHeader) + "m,q0,,n,d,0,o,1\nm,q1 ,q1,n,d,0,o,1\n"), {}, &warnings);
  ASSERT_TRUE(ok.ok()) << ok.status().to_string();
  EXPECT_EQ((*ok)[1].cluster, "q1");
  // Without a cluster column a case twin of an item is one warning (the item's), not two.
  ok = read_long_draws(write(".csv", "subject,item,condition,config,replicate,outcome,value\nm,q1,n,d,0,o,1\n"
                                     "m,Q1,n,d,0,o,1\n"),
                       {}, &warnings);
  ASSERT_TRUE(ok.ok()) << ok.status().to_string();
  ASSERT_EQ(warnings.size(), 1u) << ::testing::PrintToString(warnings);
  EXPECT_THAT(warnings[0], HasSubstr(": item: values that differ only by letter case: 'q1' (first on line 2) and 'Q1'"));
  // The exported-draw JSONL form (outcomes array) is checked as well.
  EXPECT_THAT(error_of(".jsonl", R"({"subject":"m","item":"q1","replicate":0,"outcomes":[{"name":"o","value":1}]})"
                                 "\n"
                                 R"({"subject":"m ","item":"q1","replicate":0,"outcomes":[{"name":"o","value":1}]})"
                                 "\n"),
              HasSubstr(":2: subject: values that differ only by surrounding whitespace: 'm' (first on line 1) and "
                        "'m ' (first on line 2)"));
}

// Whitespace inside a value makes a different value ("q 1" is not "q1"); a value with
// surrounding whitespace and no twin is kept as written (as category labels are).
TEST_F(DrawsImportTest, KeyValuesWithInnerOrUntwinnedWhitespaceAreKept) {
  const std::string p = write(".csv", std::string(kHeader) + "m,q1,,n,d,0,o,1\nm,q 1,,n,d,0,o,0\nm,\" q2\",,n,d,0,o,1\n"
                                                             "m,\" q2\",,n,d,1,o,1\nm,q1,,n,d,1,o,0\n");
  std::vector<std::string> warnings;
  Result<std::vector<LongDrawRow>> r = read_long_draws(p, {}, &warnings);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->size(), 5u);
  EXPECT_EQ((*r)[1].item, "q 1");
  EXPECT_EQ((*r)[2].item, " q2");
  EXPECT_EQ((*r)[2].cluster, " q2");
  EXPECT_TRUE(warnings.empty()) << ::testing::PrintToString(warnings);
}

// Key values that differ only by letter case are imported as two values with a warning
// naming both (they may be distinct on purpose: ids are case-sensitive); at most 5 such
// warnings per column, then one line counting the rest.
TEST_F(DrawsImportTest, KeyValuesDifferingOnlyByCaseWarn) {
  const std::string p = write(".csv", std::string(kHeader) + "GPT-4o,q1,,n,d,0,o,1\nm,q1,,n,d,0,o,1\n" +
                                          "gpt-4o,q1,,n,d,0,o,0\nGPT-4o,q1,,n,d,1,o,1\n");
  std::vector<std::string> warnings;
  Result<std::vector<LongDrawRow>> r = read_long_draws(p, {}, &warnings);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[2].subject, "gpt-4o");
  ASSERT_EQ(warnings.size(), 1u) << ::testing::PrintToString(warnings);
  EXPECT_EQ(warnings[0], p + ": subject: values that differ only by letter case: 'GPT-4o' (first on line 2) and "
                             "'gpt-4o' (first on line 4); they are imported as two subjects (fix the spelling if "
                             "they are one)");
  // A whitespace twin of a case variant is still refused, naming the variant it twins.
  EXPECT_THAT(error_of(".csv", std::string(kHeader) + "m,Q1,,n,d,0,o,1\nm,q1,,n,d,0,o,1\nm,q1 ,,n,d,0,o,1\n"),
              HasSubstr(":4: item: values that differ only by surrounding whitespace: 'q1' (first on line 3) and "
                        "'q1 ' (first on line 4)"));
  // Seven case twins in one column: five warnings, then a count.
  std::string csv = kHeader;
  for (int i = 0; i < 7; ++i) csv += "m,item" + std::to_string(i) + ",c,n,d,0,o,1\nm,ITEM" + std::to_string(i) + ",c,n,d,0,o,1\n";
  warnings.clear();
  r = read_long_draws(write(".csv", csv), {}, &warnings);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(warnings.size(), 6u) << ::testing::PrintToString(warnings);
  EXPECT_THAT(warnings[4], HasSubstr(": item: values that differ only by letter case: 'item4' (first on line 10) and "
                                     "'ITEM4' (first on line 11)"));
  EXPECT_THAT(warnings[5], HasSubstr(": item: 2 more values differ from an earlier one only by letter case"));
}

TEST_F(DrawsImportTest, AFileWithoutRowsIsRefused) {
  const std::string h = write(".csv", kHeader);
  Result<std::vector<LongDrawRow>> r = read_long_draws(h);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(), h + ": no rows (the header is the only record): nothing to import");
  EXPECT_THAT(error_of(".csv", std::string(kHeader) + "\n\n"), HasSubstr(": no rows (the header is the only record)"));
  const std::string j = write(".jsonl", "\n  \n");
  r = read_long_draws(j);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), j + ": no rows (no JSON object in the file): nothing to import");
  // An exported draw without outcomes has no row either.
  EXPECT_THAT(error_of(".jsonl", R"({"subject":"m","item":"q","replicate":0,"outcomes":[]})"), HasSubstr(": no rows"));
}

// nlohmann's DOM keeps the last of two equal keys; the reader refuses them, at any depth.
TEST_F(DrawsImportTest, JsonlRepeatedKeysAreRefused) {
  const std::string row = R"({"subject":"m","item":"q","condition":"n","config":"d","outcome":"o","replicate":0,)";
  const std::string p = write(".jsonl", row + R"("value":1})" + "\n" + row + R"("value":1,"value":0})" + "\n");
  Result<std::vector<LongDrawRow>> r = read_long_draws(p);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(),
            p + ":2: value: the key appears twice in one object (a JSON reader keeps only one of them)");
  EXPECT_THAT(error_of(".jsonl", R"({"subject":"m","item":"q","replicate":0,"outcomes":[{"name":"o","value":1,)"
                                 R"("label":"A","label":"B"}]})"),
              HasSubstr(":1: label: the key appears twice in one object"));
  // The same key in two sibling objects is not a repeat.
  const std::string ok = write(".jsonl", R"({"subject":"m","item":"q","replicate":0,"outcomes":)"
                                         R"([{"name":"o","value":1},{"name":"p","value":0}]})"
                                         "\n");
  r = read_long_draws(ok);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->size(), 2u);
}

TEST_F(DrawsImportTest, AnOutcomeMixingNumbersAndLabelsIsRefusedNamingBothLines) {
  // A typo among 0/1 values: the first number is on line 2, the non-number on line 4.
  const std::string p =
      write(".csv", std::string(kHeader) + "m,q1,,n,d,0,correct,1\nm,q1,,n,d,0,answer,B\nm,q1,,n,d,1,correct,1O\n");
  Result<std::vector<LongDrawRow>> r = read_long_draws(p);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            p + ":4: value: outcome 'correct' mixes numbers and non-numeric values: '1' on line 2 is a number, '1O' "
                "on line 4 is not (first of each); an outcome's values are all numbers (true/false = 1/0) or all "
                "category labels: fix the typo, or give the labels an outcome name of their own");
  // Labels first, then a number (and true/false count as numbers).
  EXPECT_THAT(error_of(".csv", std::string(kHeader) + "m,q1,,n,d,0,o,abc\nm,q1,,n,d,1,o,abc\nm,q2,,n,d,0,o,true\n"),
              HasSubstr(":4: value: outcome 'o' mixes numbers and non-numeric values: 'true' on line 4 is a number, "
                        "'abc' on line 2 is not (first of each)"));
  // A long or multi-line value is shown escaped and cut.
  EXPECT_THAT(error_of(".csv", std::string(kHeader) + "m,q1,,n,d,0,o,0\nm,q1,,n,d,1,o,\"a\nb" +
                                   std::string(60, 'x') + "\"\n"),
              HasSubstr("'a\\nb" + std::string(36, 'x') + "...' on line 3 is not"));
}

TEST_F(DrawsImportTest, JsonlValueChecks) {
  const std::string row = R"({"subject":"m","item":"q","condition":"n","config":"d","outcome":"o",)";
  // A JSON number, then a JSON string that is not a number.
  EXPECT_THAT(error_of(".jsonl", row + R"("replicate":0,"value":1})" + "\n" + row + R"("replicate":1,"value":"abc"})"),
              HasSubstr(":2: value: outcome 'o' mixes numbers and non-numeric values: '1' on line 1 is a number, "
                        "'abc' on line 2 is not"));
  // A string that reads as a number is a number, as in CSV.
  const std::string ok = write(".jsonl", row + R"("replicate":0,"value":"0.5"})" + "\n" + row +
                                             R"("replicate":1,"value":1})" + "\n");
  auto r = read_long_draws(ok);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].value, 0.5);
  EXPECT_THAT(error_of(".jsonl", row + R"("replicate":0,"value":"NaN"})"),
              HasSubstr(":1: value: 'NaN' is not a finite number"));
  // A JSON number beyond a double's range is refused by the JSON parser (NaN and Infinity
  // are not JSON), also in the export's one-draw-per-line form.
  EXPECT_THAT(error_of(".jsonl", row + R"("replicate":0,"value":1e999})"),
              HasSubstr(":1: malformed JSON: [json.exception.out_of_range.406] number overflow parsing '1e999'"));
  EXPECT_THAT(error_of(".jsonl", R"({"subject":"m","item":"q","replicate":0,"outcomes":[{"name":"o","value":-1e999}]})"),
              HasSubstr(":1: malformed JSON: [json.exception.out_of_range.406] number overflow parsing '-1e999'"));
  EXPECT_THAT(error_of(".jsonl", row + R"("replicate":0,"value":NaN})"), HasSubstr(":1: malformed JSON"));
}

TEST_F(DrawsImportTest, DeclaredBinaryOutcomeRefusesOtherValues) {
  LongDrawChecks binary{{"correct"}};
  EXPECT_THAT(error_of(".csv",
                       std::string(kHeader) + "m,q1,,n,d,0,correct,1\nm,q1,,n,d,1,correct,false\n"
                                              "m,q1,,n,d,0,score,2\nm,q1,,n,d,2,correct,2\n",
                       binary),
              HasSubstr(":5: value: outcome 'correct' is declared binary (--binary): expected 0, 1, true or false, "
                        "got '2'"));
  EXPECT_THAT(error_of(".csv", std::string(kHeader) + "m,q1,,n,d,0,correct,yes\n", binary),
              HasSubstr(":2: value: outcome 'correct' is declared binary (--binary): expected 0, 1, true or false, "
                        "got 'yes'"));
  const std::string p = write(".csv", std::string(kHeader) + "m,q1,,n,d,0,correct,1\n");
  auto r = read_long_draws(p, LongDrawChecks{{"corect"}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            p + ": --binary: outcome 'corect' has no row in the file (outcomes: correct) (did you mean 'correct'?)");
  // 0, 1, true, false and 1.0 pass.
  const std::string good = write(".csv", std::string(kHeader) + "m,q1,,n,d,0,correct,1\nm,q1,,n,d,1,correct,0\n"
                                                                 "m,q1,,n,d,2,correct,TRUE\nm,q1,,n,d,3,correct,1.0\n");
  std::vector<std::string> warnings;
  auto g = read_long_draws(good, binary, &warnings);
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  EXPECT_EQ(g->size(), 4u);
  EXPECT_TRUE(warnings.empty());
}

TEST_F(DrawsImportTest, NearlyBinaryOutcomeWarnsNamingTheOtherValues) {
  // `correct`: 50 rows, 46 of them 0/1, then 2 (twice, once written 2.0), -1 and 1.5:
  // 4 of 50 rows, fewer than 10%, 3 distinct values -> one warning.
  std::string csv = "subject,item,cluster,condition,config,replicate,outcome,value,label\n";
  int line = 1;
  auto add = [&](const std::string& outcome, const std::string& value, const std::string& label = "") {
    ++line;
    csv += "m,q" + std::to_string(line) + ",,n,d,0," + outcome + "," + value + "," + label + "\n";
    return line;
  };
  for (int i = 0; i < 20; ++i) add("correct", std::to_string(i % 2));
  const int two = add("correct", "2");
  const int minus = add("correct", "-1");
  for (int i = 0; i < 26; ++i) add("correct", std::to_string(i % 2));
  add("correct", "2.0");  // the same number as 2: one distinct value, counted twice
  const int half = add("correct", "1.5");
  // Not warned: a partial-credit score (0.5 on 3 of 9 rows), an all-1 outcome, an
  // exported choice (numbers with labels; 2 on 1 of 20 rows) and a category outcome.
  for (int i = 0; i < 9; ++i) add("score", i % 3 == 0 ? "0.5" : std::to_string(i % 2));
  for (int i = 0; i < 5; ++i) add("parsed", "1");
  for (int i = 0; i < 20; ++i) add("choice", i == 0 ? "2" : "1", i == 0 ? "C" : "B");
  add("answer", "B");
  const std::string p = write(".csv", csv);
  std::vector<std::string> warnings;
  auto r = read_long_draws(p, {}, &warnings);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(warnings.size(), 1u) << ::testing::PrintToString(warnings);
  EXPECT_EQ(warnings[0], p + ": value: outcome 'correct' looks binary but 4 of its 50 values are not 0/1: 2 (2 rows, "
                             "first on line " + std::to_string(two) + "), -1 (1 row, first on line " +
                             std::to_string(minus) + "), 1.5 (1 row, first on line " + std::to_string(half) +
                             "); they are imported as written and enter its means (fix them, or import with "
                             "--binary correct to refuse them)");
  // The values are imported unchanged.
  EXPECT_EQ(std::count_if(r->begin(), r->end(), [](const LongDrawRow& x) { return x.value == 2.0; }), 3);
  // 30 more 0/1 rows and 3 more other values: 7 of 83 rows (< 10%), but 6 distinct other
  // values are a scale, not a few typos: no warning.
  for (int i = 0; i < 30; ++i) add("correct", std::to_string(i % 2));
  for (const std::string v : {"3", "4", "5"}) add("correct", v);
  warnings.clear();
  ASSERT_TRUE(read_long_draws(write(".csv", csv), {}, &warnings).ok());
  EXPECT_TRUE(warnings.empty()) << ::testing::PrintToString(warnings);
}

TEST_F(DrawsImportTest, UnknownExtensionAndMissingFile) {
  EXPECT_THAT(error_of(".txt", "x"), HasSubstr("unknown file extension"));
  Result<std::vector<LongDrawRow>> r = read_long_draws("/nonexistent/draws.csv");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
}

// The CSV reader reads 1 MiB blocks and parses a record cut by a block's end again once
// the next block is read (issue 14). The cut is moved through every byte of a quoted field
// holding "", a comma and a CRLF, and of the CRLFs that end records: the fields, their
// lines and a later error's line are those of an uncut file.
TEST_F(DrawsImportTest, RecordsCutByTheReadBlockParseAsWhole) {
  const size_t kBlock = size_t{1} << 20;
  const std::string header = "subject,item,cluster,condition,config,replicate,outcome,value,label\r\n";
  const std::string pre = "m,q1,,n,d,0,o,1,";
  const std::string special = "m,q2,,n,d,0,o,1,\"a\"\"b,c\r\nd\"\r\nm,q3,,n,d,0,o,0,x\r\nm,q4,,n,d,z,o,1,\r\n";
  for (size_t cut = 0; cut <= special.size(); ++cut) {
    const size_t pad = kBlock - cut - header.size() - pre.size() - 2;  // the block ends `cut` bytes into special
    const std::string p = write(".csv", header + pre + std::string(pad, 'p') + "\r\n" + special);
    std::vector<std::pair<LongDrawRow, size_t>> rows;
    const Status st = for_each_long_draw(p, [&](const LongDrawRow& r, size_t line) -> Status {
      rows.emplace_back(r, line);
      return Status::Ok();
    });
    ASSERT_EQ(rows.size(), 3u) << "cut " << cut;
    EXPECT_EQ(rows[0].first.label.size(), pad) << cut;
    EXPECT_EQ(rows[0].second, 2u) << cut;
    EXPECT_EQ(rows[1].first.item, "q2") << cut;
    EXPECT_EQ(rows[1].first.label, "a\"b,c\r\nd") << cut;
    EXPECT_EQ(rows[1].second, 3u) << cut;
    EXPECT_EQ(rows[2].first.label, "x") << cut;
    EXPECT_EQ(rows[2].first.value, 0.0) << cut;
    EXPECT_EQ(rows[2].second, 5u) << cut;
    EXPECT_THAT(st.message(), HasSubstr(p + ":6: replicate: expected a non-negative integer, got 'z'")) << cut;
    fs::remove(p);
  }
}

// A record longer than the read block (a 2.5 MB quoted label with "" in it, over three
// blocks) is read whole; the rows after it keep their lines.
TEST_F(DrawsImportTest, ARecordLongerThanTheReadBlock) {
  std::string big;
  for (int i = 0; i < 250000; ++i) big += "x\"\"yz,\n789";  // 10 bytes decoded, 12 written
  const std::string p = write(".csv", std::string(kHeader).substr(0, std::strlen(kHeader) - 1) + ",label\n" +
                                          "m,q1,,n,d,0,o,1,\"" + big + "\"\nm,q2,,n,d,0,o,1,\nm,q3,,n,d,0,o,x,y\n");
  std::vector<std::pair<LongDrawRow, size_t>> rows;
  const Status st = for_each_long_draw(p, [&](const LongDrawRow& r, size_t line) -> Status {
    rows.emplace_back(r, line);
    return Status::Ok();
  });
  ASSERT_EQ(rows.size(), 2u) << st.message();
  std::string decoded;
  for (int i = 0; i < 250000; ++i) decoded += "x\"yz,\n789";
  EXPECT_EQ(rows[0].first.label, decoded);
  EXPECT_EQ(rows[1].second, 250003u);  // q1 spans lines 2..250002
  // q3's value is a label among numbers: an error on its own line.
  EXPECT_THAT(st.message(), HasSubstr(p + ":250004: value:"));
}

// for_each_long_draw marks on each row the string fields that differ from the previous
// row (LongDrawRow::changed; the import copies only those): exactly those, and all of
// them on the first row, in CSV and JSONL. The expected bits are computed here by
// comparing each row with the one before.
TEST_F(DrawsImportTest, StreamingRowsMarkTheFieldsThatChanged) {
  const std::vector<std::vector<std::string>> rows = {
      // subject, item, cluster, condition, config, replicate, outcome, value, label
      {"m1", "q1", "c1", "none", "default", "0", "correct", "1", ""},
      {"m1", "q1", "c1", "none", "default", "0", "answer", "B", ""},
      {"m1", "q1", "c1", "none", "default", "1", "answer", "C", ""},
      {"m1", "q1", "c1", "none", "default", "1", "correct", "true", ""},
      {"m1", "q1", "c1", "none", "default", "2", "correct", "true", ""},
      {"m2", "q1", "c1", "none", "default", "2", "correct", "false", ""},
      {"m2", "q2", "c1", "none", "default", "2", "correct", "0", ""},
      {"m2", "q2", "c1", "swap", "default", "2", "correct", "0", ""},
      {"m2", "q2", "c1", "swap", "t=1", "2", "correct", "0", "x"},
      {"m2", "q3", "c2", "swap", "t=1", "2", "correct", "0", "x"},
      {"m2", "q3", "c2", "", "t=1", "3", "correct", "1", "x"},
      {"m2", "q3", "c2", "", "t=1", "3", "score", "0.5", "x"},
  };
  std::string csv = "subject,item,cluster,condition,config,replicate,outcome,value,label\n", jsonl;
  const char* names[] = {"subject", "item", "cluster", "condition", "config", "replicate", "outcome", "value", "label"};
  for (const auto& r : rows) {
    std::string line, obj;
    for (size_t c = 0; c < r.size(); ++c) {
      line += (c == 0 ? "" : ",") + r[c];
      std::string v = "\"" + r[c] + "\"";
      if (c == 5 || r[c] == "true" || r[c] == "false") v = r[c];
      if ((c == 2 || c == 8) && r[c].empty()) continue;  // optional: absent in JSONL
      obj += std::string(obj.empty() ? "{" : ",") + "\"" + names[c] + "\":" + v;
    }
    csv += line + "\n";
    jsonl += obj + "}\n";
  }
  for (const auto& [ext, text] : {std::pair<std::string, std::string>{".csv", csv}, {".jsonl", jsonl}}) {
    const std::string p = write(ext, text);
    std::vector<LongDrawRow> got;
    const Status st = for_each_long_draw(p, [&](const LongDrawRow& r, size_t) -> Status {
      got.push_back(r);
      return Status::Ok();
    });
    ASSERT_TRUE(st.ok()) << st.to_string();
    ASSERT_EQ(got.size(), rows.size()) << ext;
    EXPECT_EQ(got[0].changed, LongDrawRow::kChangedAll) << ext;
    for (size_t i = 1; i < got.size(); ++i) {
      const LongDrawRow &a = got[i - 1], &b = got[i];
      unsigned want = 0;
      if (a.subject != b.subject) want |= LongDrawRow::kChangedSubject;
      if (a.item != b.item) want |= LongDrawRow::kChangedItem;
      if (a.cluster != b.cluster) want |= LongDrawRow::kChangedCluster;
      if (a.condition != b.condition) want |= LongDrawRow::kChangedCondition;
      if (a.config != b.config) want |= LongDrawRow::kChangedConfig;
      if (a.outcome != b.outcome) want |= LongDrawRow::kChangedOutcome;
      if (a.label != b.label) want |= LongDrawRow::kChangedLabel;
      EXPECT_EQ(b.changed, want) << ext << " row " << i;
    }
    // Spot checks that the rows are what the file says (the bits above compare them).
    EXPECT_EQ(got[3].label, "true");
    EXPECT_EQ(got[10].condition, "none");
    EXPECT_EQ(got[8].config, "t=1");
  }
  // read_long_draws leaves the field at its default on every row.
  Result<std::vector<LongDrawRow>> all = read_long_draws(write(".csv", csv));
  ASSERT_TRUE(all.ok()) << all.status().to_string();
  for (const LongDrawRow& r : *all) EXPECT_EQ(r.changed, LongDrawRow::kChangedAll);
}


// ---- draw statuses (tester finding s11/12): a draw that is not ok is one row with empty
// outcome and value; it comes back with its status, so parse errors survive an import.

const char* kStatusHeader = "subject,item,condition,config,replicate,outcome,value,label,status\n";

TEST_F(DrawsImportTest, CsvStatusColumnCarriesEveryDrawStatus) {
  const std::string p = write(".csv", std::string(kStatusHeader) +
                                          "m,q1,none,default,0,correct,1,,ok\n"
                                          "m,q1,none,default,0,answer,1,B,\n"
                                          "m,q1,none,default,1,,,,parse_error\n"
                                          "m,q1,none,default,2,,,,refused\n"
                                          "m,q2,none,default,0,,,, api_error \n"
                                          "m,q2,none,default,1,correct,0,,ok\n");
  Result<std::vector<LongDrawRow>> r = read_long_draws(p);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->size(), 6u);
  const std::vector<DrawStatus> want{DrawStatus::kOk,      DrawStatus::kOk,       DrawStatus::kParseError,
                                     DrawStatus::kRefused, DrawStatus::kApiError, DrawStatus::kOk};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ((*r)[i].status, want[i]) << i;
  for (size_t i : {2u, 3u, 4u}) {
    EXPECT_EQ((*r)[i].outcome, "") << i;
    EXPECT_EQ((*r)[i].label, "") << i;
    EXPECT_EQ((*r)[i].value, 0.0) << i;
  }
  EXPECT_EQ((*r)[2].replicate, 1);
  EXPECT_EQ((*r)[4].item, "q2");
  EXPECT_EQ((*r)[5].outcome, "correct");
}

TEST_F(DrawsImportTest, JsonlRowsAndExportedDrawLinesCarryTheStatus) {
  const std::string p = write(
      ".jsonl",
      "{\"subject\":\"m\",\"item\":\"q1\",\"condition\":\"none\",\"config\":\"default\",\"replicate\":0,"
      "\"status\":\"parse_error\"}\n"
      "{\"subject\":\"m\",\"item\":\"q1\",\"condition\":\"none\",\"config\":\"default\",\"replicate\":1,"
      "\"outcome\":null,\"value\":null,\"status\":\"refused\"}\n"
      // as `export --format jsonl` writes a draw
      "{\"subject\":\"m\",\"item\":\"q2\",\"cluster\":\"q2\",\"condition\":\"none\",\"config\":\"default\","
      "\"replicate\":0,\"status\":\"api_error\",\"outcomes\":[]}\n"
      "{\"subject\":\"m\",\"item\":\"q2\",\"cluster\":\"q2\",\"condition\":\"none\",\"config\":\"default\","
      "\"replicate\":1,\"status\":\"ok\",\"outcomes\":[{\"name\":\"correct\",\"value\":1,\"label\":\"\"}]}\n");
  Result<std::vector<LongDrawRow>> r = read_long_draws(p);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->size(), 4u);
  EXPECT_EQ((*r)[0].status, DrawStatus::kParseError);
  EXPECT_EQ((*r)[1].status, DrawStatus::kRefused);
  EXPECT_EQ((*r)[2].status, DrawStatus::kApiError);
  EXPECT_EQ((*r)[2].outcome, "");
  EXPECT_EQ((*r)[3].status, DrawStatus::kOk);
  EXPECT_EQ((*r)[3].outcome, "correct");
}

TEST_F(DrawsImportTest, AnExportedOkDrawWithoutOutcomesIsSkippedWithAWarningNeverSilently) {
  const std::string line0 =
      "{\"subject\":\"m\",\"item\":\"q1\",\"condition\":\"none\",\"config\":\"default\",\"replicate\":0,"
      "\"status\":\"ok\",\"outcomes\":[]}\n";
  const std::string line1 =
      "{\"subject\":\"m\",\"item\":\"q1\",\"condition\":\"none\",\"config\":\"default\",\"replicate\":1,"
      "\"status\":\"parse_error\",\"outcomes\":[]}\n";
  const std::string p = write(".jsonl", line0 + line1 + line0);
  std::vector<std::string> warnings;
  Result<std::vector<LongDrawRow>> r = read_long_draws(p, {}, &warnings);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->size(), 1u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], StartsWith(p + ": 2 ok draw lines without outcomes (first on line 1) skipped"));
  // Only such lines: an error, not an empty import.
  EXPECT_THAT(error_of(".jsonl", line0), HasSubstr("1 ok draw line without outcomes (first on line 1) skipped"));
}

TEST_F(DrawsImportTest, StatusRowsAreRefusedWithFileLineAndColumn) {
  struct Case {
    std::string rows, want;
  };
  const std::vector<Case> cases{
      {"m,q1,none,default,0,correct,0,,parse_error\n",
       ":2: outcome: 'correct' on a row of status parse_error: a draw that is not ok has no outcomes (one row per "
       "draw, with empty outcome, value and label)"},
      {"m,q1,none,default,0,,0,,refused\n", ":2: value: '0' on a row of status refused: a draw that is not ok"},
      {"m,q1,none,default,0,,,B,api_error\n", ":2: label: 'B' on a row of status api_error"},
      {"m,q1,none,default,0,,1,,ok\n",
       ":2: outcome: empty (only a row of a parse_error, refused or api_error draw has no outcome: give it its "
       "status in the status column)"},
      {"m,q1,none,default,0,,,,invalid\n",
       ":2: status: 'invalid': expected ok, parse_error, refused or api_error (empty = ok)"},
      // adjacent rows of one draw
      {"m,q1,none,default,0,correct,1,,ok\nm,q1,none,default,0,,,,parse_error\n",
       ":3: status: 'parse_error', but line 2 gave the draw (subject=m, item=q1, condition=none, config=default, "
       "replicate=0) status 'ok': the rows of one draw agree on its status (a draw that is not ok has one row, "
       "with empty outcome and value)"},
      {"m,q1,none,default,0,,,,parse_error\nm,q1,none,default,0,,,,parse_error\n",
       ":3: status: a second row of the parse_error draw (subject=m, item=q1, condition=none, config=default, "
       "replicate=0) (first on line 2): a draw that is not ok has one row"},
      // rows of one draw apart (read_long_draws; the streaming import's store: tests/cli)
      {"m,q1,none,default,0,,,,refused\nm,q2,none,default,0,correct,1,,\nm,q1,none,default,0,correct,1,,ok\n",
       ":4: status: 'ok', but line 2 gave the draw (subject=m, item=q1, condition=none, config=default, "
       "replicate=0) status 'refused'"},
      {"m,q1,none,default,0,,,,api_error\nm,q2,none,default,0,correct,1,,\nm,q1,none,default,0,,,,api_error\n",
       ":4: status: a second row of the api_error draw (subject=m, item=q1, condition=none, config=default, "
       "replicate=0) (first on line 2)"},
  };
  for (const Case& c : cases) {
    const std::string p = write(".csv", std::string(kStatusHeader) + c.rows);
    Result<std::vector<LongDrawRow>> r = read_long_draws(p);
    ASSERT_FALSE(r.ok()) << c.rows;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(r.status().message(), StartsWith(p + c.want)) << c.rows;
  }
  // An exported draw line that is not ok but carries outcomes.
  EXPECT_THAT(error_of(".jsonl",
                       "{\"subject\":\"m\",\"item\":\"q1\",\"condition\":\"none\",\"config\":\"default\","
                       "\"replicate\":0,\"status\":\"parse_error\",\"outcomes\":[{\"name\":\"correct\",\"value\":0}]}\n"),
              HasSubstr(":1: outcome: 'correct' on a row of status parse_error"));
}

}  // namespace
}  // namespace nf
