// Issue 13 item 1, the importers: columns are read by header name, so a misspelt or
// duplicated header is an error naming file, line and column, never a silent default
// (a votes file headed "lable" imported every vote as missing).
#include <gtest/gtest.h>

#include <fstream>

#include "common/test_data.h"
#include "data/draws_import.h"
#include "data/judge_import.h"

namespace nf {
namespace {

void write(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
}

TEST(RegressionImportColumns, VotesWithAMisspeltLabelColumnAreRefused) {
  testing::TempDir d;
  write(d / "v.csv", "subject,subject_provider,item,cluster,judge,judge_provider,lable\ngpt-x,openai,q1,,j,openai,1\n");
  auto r = read_votes(d / "v.csv");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("v.csv:1: label: missing column (did you mean 'lable'?); the header has: subject, subject_provider, item, cluster, judge, judge_provider, lable"), std::string::npos)
      << r.status().message();
  write(d / "l.jsonl", "{\"rater\":\"h1\",\"subject\":\"s\",\"item\":\"q\"}\n");
  auto l = read_labels(d / "l.jsonl");
  ASSERT_FALSE(l.ok());
  EXPECT_NE(l.status().message().find("label: missing column"), std::string::npos) << l.status().message();
}

TEST(RegressionImportColumns, ColumnOrderDoesNotMatterAndDuplicatesAreRefused) {
  testing::TempDir d;
  write(d / "v.csv", "label,judge_provider,judge,cluster,item,subject_provider,subject\n0,openai,j,,q1,openai,gpt-x\n");
  auto r = read_votes(d / "v.csv");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].subject, "gpt-x");
  EXPECT_EQ((*r)[0].label, std::optional<int>(0));
  write(d / "dup.csv", "rater,subject,item,label,label\nh1,s,q,1,0\n");
  auto dup = read_labels(d / "dup.csv");
  ASSERT_FALSE(dup.ok());
  EXPECT_NE(dup.status().message().find("dup.csv:1: label: duplicate column"), std::string::npos)
      << dup.status().message();
  write(d / "draws.csv", "subject,item,cluster,condition,config,replicate,outcome,value,value\ns,q,,none,c,0,correct,1,0\n");
  auto dd = read_long_draws(d / "draws.csv");
  ASSERT_FALSE(dd.ok());
  EXPECT_NE(dd.status().message().find("duplicate column"), std::string::npos) << dd.status().message();
  write(d / "miss.csv", "subject,item,cluster,condition,config,replicate,outcome,vlaue\ns,q,,none,c,0,correct,1\n");
  auto dm = read_long_draws(d / "miss.csv");
  ASSERT_FALSE(dm.ok());
  EXPECT_NE(dm.status().message().find("value: missing column"), std::string::npos) << dm.status().message();
}

// Issue 32 item 5: a CSV's missing column is the header's fault and is said at its line (it
// was said at line 2, the first row, and not at all for a file with no rows); a JSONL
// object's missing field stays at that object's line. The label messages name file, line
// and field and say what to do.
TEST(RegressionImportColumns, MissingColumnsAreSaidAtTheHeaderAndLabelMessagesSayWhatToDo) {
  testing::TempDir d;
  write(d / "h.csv", "rater,subject,item\n");  // a header and no rows
  auto h = read_labels(d / "h.csv");
  ASSERT_FALSE(h.ok());
  EXPECT_NE(h.status().message().find("h.csv:1: label: missing column; the header has: rater, subject, item; add the "
                                      "'label' column"),
            std::string::npos)
      << h.status().message();
  write(d / "j.jsonl", "{\"rater\":\"h1\",\"subject\":\"s\",\"item\":\"q\",\"label\":1}\n"
                       "{\"rater\":\"h1\",\"subject\":\"s\",\"itme\":\"q2\",\"label\":1}\n");
  auto j = read_labels(d / "j.jsonl");
  ASSERT_FALSE(j.ok());
  EXPECT_NE(j.status().message().find("j.jsonl:2: item: missing column (did you mean 'itme'?); this row's object has: "
                                      "itme, label, rater, subject; add the 'item' field"),
            std::string::npos)
      << j.status().message();
  write(d / "e.csv", "rater,subject,item,label\nh1,s,q,1\nh1,s,q2,\n");
  auto e = read_labels(d / "e.csv");
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("e.csv:3: label: empty: a human label is 1 (criterion met) or 0 (not met), also "
                                      "written true/false; fill it in, or leave the row out"),
            std::string::npos)
      << e.status().message();
  write(d / "b.csv", "rater,subject,item,label\nh1,s,q,yes\n");
  auto b = read_labels(d / "b.csv");
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("b.csv:2: label: expected 1 (criterion met) or 0 (not met), also written "
                                      "true/false; found \"yes\""),
            std::string::npos)
      << b.status().message();
  write(d / "dup.csv", "rater,subject,item,label\nh1,s,q,1\nh2,s,q,1\nh1,s,q,0\n");
  auto dup = read_labels(d / "dup.csv");
  ASSERT_FALSE(dup.ok());
  EXPECT_NE(dup.status().message().find("dup.csv:4: rater: a second label by rater 'h1' on subject 's', item 'q' (the "
                                        "first is on line 2): give each rater one label per subject and item"),
            std::string::npos)
      << dup.status().message();
  write(d / "vdup.csv", "subject,subject_provider,item,cluster,judge,judge_provider,label\n"
                        "s,p,q,,j,p,1\ns,p,q,,j,p,\n");
  auto vdup = read_votes(d / "vdup.csv");
  ASSERT_FALSE(vdup.ok());
  EXPECT_NE(vdup.status().message().find("vdup.csv:3: judge: a second vote by judge 'j' on subject 's', item 'q' (the "
                                         "first is on line 2)"),
            std::string::npos)
      << vdup.status().message();
}

}  // namespace
}  // namespace nf
