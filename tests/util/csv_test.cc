// The RFC 4180 CSV reader (util/csv.h): quoting, line numbers of multi-line records, BOM,
// CRLF, and the errors (file:line).
#include "util/csv.h"

#include <gtest/gtest.h>

namespace nf {
namespace {

TEST(Csv, QuotedFieldsBomCrlfAndLineNumbers) {
  const std::string text = "\xEF\xBB\xBFid,text\r\n1,\"a, \"\"b\"\"\"\r\n\r\n2,\"two\nlines\"\n3,plain\n";
  auto t = parse_csv("f.csv", text);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->header, (std::vector<std::string>{"id", "text"}));
  EXPECT_EQ(t->column("text"), 1u);
  EXPECT_EQ(t->column("nope"), std::string::npos);
  ASSERT_EQ(t->records.size(), 3u);
  EXPECT_EQ(t->records[0].first, 2u);
  EXPECT_EQ(t->records[0].second[1], "a, \"b\"");
  EXPECT_EQ(t->records[1].first, 4u);  // the blank line 3 is skipped
  EXPECT_EQ(t->records[1].second[1], "two\nlines");
  EXPECT_EQ(t->records[2].first, 6u);  // after a record spanning lines 4-5
}

TEST(Csv, ErrorsNameFileAndLine) {
  auto dup = parse_csv("f.csv", "a,b,a\n1,2,3\n");
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.status().message(), "f.csv:1: a: duplicate column in the header");
  auto count = parse_csv("f.csv", "a,b\n1,2\n3\n");
  ASSERT_FALSE(count.ok());
  EXPECT_EQ(count.status().message(), "f.csv:3: expected 2 fields as in the header, found 1");
  auto open = parse_csv("f.csv", "a,b\n1,\"2\n");
  ASSERT_FALSE(open.ok());
  EXPECT_EQ(open.status().message(), "f.csv:2: malformed CSV: unterminated quoted field");
  auto empty = parse_csv("f.csv", "");
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().message(), "f.csv: empty file (expected a header row)");
}

}  // namespace
}  // namespace nf
