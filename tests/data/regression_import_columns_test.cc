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
  EXPECT_NE(r.status().message().find("v.csv:2: label: missing column (did you mean 'lable'?)"), std::string::npos)
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

}  // namespace
}  // namespace nf
