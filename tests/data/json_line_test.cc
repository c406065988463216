// parse_json_line (issue 15): what nlohmann's DOM parse changes silently is refused,
// naming file, line and key; everything else parses as json::parse does.
#include "data/json_line.h"

#include <string>

#include <gtest/gtest.h>

namespace nf {
namespace {

std::string error_of(const std::string& text) {
  nlohmann::json j;
  const Status s = parse_json_line("f.jsonl", 7, text, &j);
  EXPECT_FALSE(s.ok()) << text;
  return s.message();
}

TEST(JsonLine, ParsesAsTheDomParseDoes) {
  const std::string text = R"({"a":1,"b":[{"a":2},{"a":3}],"c":{"a":{"a":0.5}},"d":"x","e":null,"f":0e-400})";
  nlohmann::json j;
  ASSERT_TRUE(parse_json_line("f.jsonl", 1, text, &j).ok());
  EXPECT_EQ(j, nlohmann::json::parse(text));  // the same key in sibling and nested objects is fine
}

TEST(JsonLine, RefusesARepeatedKeyAtAnyDepth) {
  EXPECT_EQ(error_of(R"({"a":1,"a":2})"),
            "f.jsonl:7: a: the key appears twice in one object (a JSON reader keeps only one of them)");
  EXPECT_EQ(error_of(R"({"x":[{"n":1,"v":1,"n":2}]})").substr(0, 14), "f.jsonl:7: n: ");
  // Past 32 keys the check uses a hash set: a repeat of the first key, and of a later one.
  std::string big = "{";
  for (int i = 0; i < 40; ++i) big += "\"k" + std::to_string(i) + "\":" + std::to_string(i) + ",";
  EXPECT_EQ(error_of(big + R"("k0":1})").substr(0, 15), "f.jsonl:7: k0: ");
  EXPECT_EQ(error_of(big + R"("k39":1})").substr(0, 16), "f.jsonl:7: k39: ");
  nlohmann::json j;
  EXPECT_TRUE(parse_json_line("f.jsonl", 1, big + R"("k40":{"k0":1}})", &j).ok());
  EXPECT_EQ(j.size(), 41u);
}

TEST(JsonLine, RefusesANestingThatWouldOverflowTheStack) {
  // `import draws` / `import votes` JSONL: the depth limit of util/json_depth.h.
  EXPECT_EQ(error_of(R"({"outcomes":)" + std::string(100000, '[') + std::string(100000, ']') + "}"),
            "f.jsonl:7: JSON nested deeper than 512 levels (arrays and objects inside each other)");
}

TEST(JsonLine, RefusesAnUnderflowingNumberNamingItsKey) {
  EXPECT_EQ(error_of(R"({"v":1e-400})"),
            "f.jsonl:7: v: '1e-400' is out of range: not zero, but below the smallest normal double (2.2e-308), so "
            "it would be read as 0 or with lost precision (write 0 if it is zero)");
  EXPECT_EQ(error_of(R"({"o":[{"v":-2.5e-320}]})").substr(0, 26), "f.jsonl:7: v: '-2.5e-320' ");
  // Overflow and non-JSON numbers stay the parser's syntax errors.
  EXPECT_EQ(error_of(R"({"v":1e999})").substr(0, 30), "f.jsonl:7: malformed JSON: [js");
  EXPECT_EQ(error_of(R"({"v":NaN})").substr(0, 26), "f.jsonl:7: malformed JSON:");
}

TEST(JsonLine, NumberUnderflows) {
  EXPECT_TRUE(number_underflows("1e-400", 0.0));
  EXPECT_TRUE(number_underflows("0.001e-306", 1e-309));  // subnormal
  EXPECT_FALSE(number_underflows("0e-400", 0.0));
  EXPECT_FALSE(number_underflows("-0.000E+5", -0.0));
  EXPECT_FALSE(number_underflows("2.2250738585072014e-308", 2.2250738585072014e-308));
  EXPECT_FALSE(number_underflows("0.5", 0.5));
}

}  // namespace
}  // namespace nf
