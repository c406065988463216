// util/json_depth.h: the nesting count (strings and escapes honoured, invalid text only
// counted), and that nlohmann itself would be safe at the limit (dump and compare of a
// value nested kMaxJsonDepth deep).
#include "util/json_depth.h"

#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace nf {
namespace {

std::string nested(size_t depth, char open = '[', char close = ']') {
  return std::string(depth, open) + std::string(depth, close);
}

TEST(JsonDepth, CountsArraysAndObjectsUpToTheLimit) {
  EXPECT_TRUE(check_json_depth(nested(3), "x", 3).ok());
  EXPECT_TRUE(check_json_depth(R"({"a":{"b":[1,{"c":2}]}})", "x", 4).ok());
  Status s = check_json_depth(R"({"a":{"b":[1,{"c":2}]}})", "f.jsonl:7", 3);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "f.jsonl:7: JSON nested deeper than 3 levels (arrays and objects inside each other)");
  // Siblings do not add up: depth is the deepest path, not the number of brackets.
  EXPECT_TRUE(check_json_depth("[[1],[2],[3],[4]]", "x", 2).ok());
}

TEST(JsonDepth, BracketsInsideStringsAndEscapedQuotesDoNotCount) {
  EXPECT_TRUE(check_json_depth(R"(["[[[[", "{{{{"])", "x", 1).ok());
  EXPECT_TRUE(check_json_depth(R"(["a\"[[[[", "\\", "]]"])", "x", 1).ok());
  // An escaped quote does not end the string; the bracket after the real end counts.
  EXPECT_FALSE(check_json_depth(R"(["a\"[", [1]])", "x", 1).ok());
}

TEST(JsonDepth, TheDefaultRefusesWhatWouldCrashAndAcceptsTheLimit) {
  EXPECT_FALSE(check_json_depth(nested(100000), "x").ok());
  const std::string at_limit = nested(kMaxJsonDepth);
  ASSERT_TRUE(check_json_depth(at_limit, "x").ok());
  EXPECT_FALSE(check_json_depth(nested(kMaxJsonDepth + 1), "x").ok());
  // What the readers do with an accepted value: parse, dump, compare, copy.
  const auto v = nlohmann::json::parse(at_limit);
  const auto copy = v;
  EXPECT_EQ(copy, v);
  EXPECT_EQ(v.dump(), at_limit);
}

}  // namespace
}  // namespace nf
