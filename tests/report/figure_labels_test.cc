// Figure labels keep the part that tells rows apart (tester s9 finding 21: the rerun legend read
// "sim-fhir-agent · temperature..." twice; four of eight majority-vote series were the same
// "sim · temperature=0.7 · remo..."; envelope rows lost their scoring path to truncation).
#include "report/figure_labels.h"

#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace nf {
namespace {

size_t code_points(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

void expect_distinct(const ShortLabels& l) {
  std::set<std::string> fulls(l.full.begin(), l.full.end()), shown(l.labels.begin(), l.labels.end());
  EXPECT_EQ(shown.size(), fulls.size()) << "two different rows share a label";
  for (const auto& s : l.labels) EXPECT_LE(code_points(s), kMaxLabelChars) << s;
}

TEST(FigureLabels, RerunArmsDifferOnlyInTemperature) {
  const auto l = short_labels({{{"subject", "sim-fhir-agent"}, {"config", "temperature=0.05"}},
                               {{"subject", "sim-fhir-agent"}, {"config", "temperature=0.7"}}});
  EXPECT_EQ(l.labels, (std::vector<std::string>{"temperature=0.05", "temperature=0.7"}));
  EXPECT_EQ(l.names, "temperature");
  EXPECT_EQ(l.common, "subject sim-fhir-agent");
  EXPECT_EQ(l.full[1], "sim-fhir-agent · temperature=0.7");
}

TEST(FigureLabels, MajorityVoteSeriesKeepTheirCondition) {
  std::vector<LabelParts> rows;
  for (const char* t : {"temperature=0", "temperature=0.7"})
    for (const char* c : {"none", "shuffle", "remove_answer", "remove_context"})
      rows.push_back({{"subject", "sim"}, {"config", t}, {"condition", c}, {"outcome", "pooled"}});
  const auto l = short_labels(rows);
  expect_distinct(l);
  EXPECT_EQ(l.labels[2], "temperature=0 · remove_answer");
  EXPECT_EQ(l.labels[7], "temperature=0.7 · remove_context");
  EXPECT_EQ(l.names, "temperature · condition");
  EXPECT_EQ(l.common, "subject sim; outcome pooled");
}

// Four-axis configurations: with "key=" every label would pass kMaxLabelChars, so the values
// alone are shown and `names` says which axis each is; the scoring path stays visible.
TEST(FigureLabels, LongConfigurationsShowValuesWithTheKeysNamedOnce) {
  std::vector<LabelParts> rows;
  for (const char* t : {"0", "0.7"})
    for (const char* shots : {"0", "3"})
      for (const char* tmpl : {"default", "direct"})
        for (const char* path : {"free_form", "logprob"})
          for (const char* subject : {"sim-a", "sim-b"})
            rows.push_back({{"config", std::string("temperature=") + t + ",fewshot=" + shots + ",template=" + tmpl +
                                           ",scoring_path=" + path},
                            {"subject", subject}});
  const auto l = short_labels(rows);
  expect_distinct(l);
  EXPECT_EQ(l.labels[0], "0 · 0 · default · free_form · sim-a");
  EXPECT_EQ(l.labels[3], "0 · 0 · default · logprob · sim-b");
  EXPECT_EQ(l.names, "temperature · fewshot · template · scoring_path · subject");
  EXPECT_EQ(l.common, "");
  // Fewer varying axes fit with their keys.
  const auto few = short_labels({{{"config", "temperature=0,fewshot=0,template=default,scoring_path=free_form"}},
                                 {{"config", "temperature=0,fewshot=0,template=default,scoring_path=logprob"}}});
  EXPECT_EQ(few.labels, (std::vector<std::string>{"scoring_path=free_form", "scoring_path=logprob"}));
  EXPECT_EQ(few.common, "temperature 0; fewshot 0; template default");
}

TEST(FigureLabels, DifferentShapesDropSharedPrefixAndSuffixWords) {
  const auto l = short_labels({{{"judge", "gpt"}, {"x", "a"}, {"y", "same"}}, {{"judge", "gpt"}, {"z", "b"}, {"y", "same"}}});
  EXPECT_EQ(l.labels, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(l.names, "");
  EXPECT_EQ(l.common, "gpt; same");
}

TEST(FigureLabels, OneRowOrIdenticalRowsKeepALabel) {
  const auto one = short_labels({{{"series", "pooled floor"}}});
  EXPECT_EQ(one.labels, (std::vector<std::string>{"pooled floor"}));
  EXPECT_EQ(one.common, "");
  const auto same = short_labels({{{"a", "x"}, {"b", "y"}}, {{"a", "x"}, {"b", "y"}}});
  EXPECT_EQ(same.labels, (std::vector<std::string>{"y", "y"}));
  EXPECT_EQ(same.common, "a x");
  EXPECT_TRUE(short_labels({}).labels.empty());
}

// A long label is cut in the middle (both ends kept) unless the cut would make two rows alike.
TEST(FigureLabels, MiddleTruncationKeepsBothEndsAndDistinctness) {
  const std::string long_a = "clinical_content_divergence_with_a_very_long_metric_name_number_one";
  EXPECT_EQ(middle_truncate(long_a, 11), "clini…r_one");
  EXPECT_EQ(code_points(middle_truncate(long_a)), kMaxLabelChars);
  EXPECT_EQ(middle_truncate("short"), "short");
  // UTF-8: never cut inside a code point.
  const std::string dots = "a · b · c · d · e · f · g · h · i · j · k · l · m · n · o · p · q · r";
  const std::string cut = middle_truncate(dots, 20);
  EXPECT_EQ(code_points(cut), 20u);
  EXPECT_NE(cut.find("\xC2\xB7"), std::string::npos);
  for (size_t i = 0; i < cut.size(); ++i) {
    if (static_cast<unsigned char>(cut[i]) == 0xC2) {
      EXPECT_EQ(static_cast<unsigned char>(cut[i + 1]), 0xB7);
    }
  }
  // Two rows that differ only in the middle: cutting would merge them, so they stay whole.
  const std::string head(30, 'h'), tail(30, 't');
  const auto l = short_labels({{{"m", head + "A" + tail}}, {{"m", head + "B" + tail}}});
  EXPECT_EQ(l.labels[0], head + "A" + tail);
  EXPECT_NE(l.labels[0], l.labels[1]);
}

}  // namespace
}  // namespace nf
