// Issue 13 item 3: the MCQ parse error rate per reply language (metrics/reply_language.h), in
// results.json (draws.by_language) and in report.md.
#include "metrics/reply_language.h"

#include <gtest/gtest.h>

#include "common/test_data.h"
#include "metrics/analyze.h"
#include "report/markdown.h"
#include "store/store.h"

namespace nf {
namespace {

TEST(ReplyLanguage, ScriptOfAReply) {
  EXPECT_EQ(reply_script("The answer is <answer>C</answer>"), "latin");
  EXPECT_EQ(reply_script("答案：Ｃ"), "zh");
  EXPECT_EQ(reply_script("我選擇 D"), "zh");
  EXPECT_EQ(reply_script("正解は B です。"), "ja");
  EXPECT_EQ(reply_script("정답은 A입니다."), "ko");
  EXPECT_EQ(reply_script(""), "other");
  EXPECT_EQ(reply_script("12345 ..."), "other");
  EXPECT_EQ(reply_script(std::string("\xE7\xAD", 2)), "other");  // cut UTF-8 is skipped
}

// A store with answered draws in three scripts; api_error draws never count.
void fill(Store& store) {
  ASSERT_TRUE(store.put_study({"lang", "", 1, {{"task", "mcq"}}}).ok());
  auto draw = [&](const std::string& item, DrawStatus st, const std::string& content) {
    Draw d;
    d.key = {"m", item, "none", "default", 0};
    d.cluster = item;
    d.status = st;
    d.request = {{"messages", nlohmann::json::array()}};
    d.content = content;
    if (st == DrawStatus::kOk) d.outcomes = {{"correct", 1.0, "1"}, {"choice", 0.0, "A"}};
    ASSERT_TRUE(store.put_draw(d).ok());
  };
  draw("q1", DrawStatus::kOk, "<answer>A</answer>");
  draw("q2", DrawStatus::kParseError, "I am not sure.");
  draw("q3", DrawStatus::kOk, "答案：Ａ");
  draw("q4", DrawStatus::kParseError, "我不知道");
  draw("q5", DrawStatus::kParseError, "모르겠습니다");
  draw("q6", DrawStatus::kApiError, "");
}

TEST(ReplyLanguage, ParseErrorRateByLanguageInResultsAndReport) {
  testing::TempDir d;
  auto store = Store::open(d / "s.sqlite");
  ASSERT_TRUE(store.ok());
  fill(**store);
  auto rows = parse_error_rate_by_language(**store);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 3u);  // ko, latin, zh; the api_error draw is not answered
  std::map<std::string, nlohmann::json> by;
  for (const auto& r : *rows) by[r["language"]] = r;
  EXPECT_EQ(by["latin"]["answered"], 2);
  EXPECT_DOUBLE_EQ(by["latin"]["parse_error_rate"].get<double>(), 0.5);
  EXPECT_EQ(by["zh"]["parse_error"], 1);
  EXPECT_DOUBLE_EQ(by["zh"]["parse_error_rate"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(by["ko"]["parse_error_rate"].get<double>(), 1.0);

  AnalyzeOptions o;
  o.analyses = {{"floor", nlohmann::json::object()}};
  auto results = analyze_store(**store, o);
  ASSERT_TRUE(results.ok()) << results.status().message();
  ASSERT_TRUE((*results)["draws"].contains("by_language"));
  EXPECT_EQ((*results)["draws"]["by_language"], *rows);
  const std::string md = render_markdown(*results);
  EXPECT_NE(md.find("Parse error rate by reply language"), std::string::npos);
  EXPECT_NE(md.find("| m | default | zh | 2 | 1 | 0.5"), std::string::npos) << md;
}

// The same through the binary: `noisefloor analyze` writes both files.
TEST(ReplyLanguage, AnalyzeCommandShowsIt) {
  testing::TempDir d;
  {
    auto store = Store::open(d / "s.sqlite");
    ASSERT_TRUE(store.ok());
    fill(**store);
  }
  auto r = testing::run_cli("analyze --store " + d / "s.sqlite" + " --out " + d / "out", d.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(testing::slurp(d / "out/results.json"));
  ASSERT_EQ(j["draws"]["by_language"].size(), 3u);
  EXPECT_NE(testing::slurp(d / "out/report.md").find("| m | default | ko | 1 | 1 | 1"), std::string::npos);
}

}  // namespace
}  // namespace nf
