// Readers for judge votes and human labels: the long formats and the released seed 004
// files (read in place from ../shared/data/missing-info-judges).
#include "data/judge_import.h"

#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/test_data.h"

namespace nf {
namespace {

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

TEST(ProviderMap, DefaultsAndOverrides) {
  ProviderMap m;
  EXPECT_EQ(*m.provider_of("gpt-5_5-high"), "openai");
  EXPECT_EQ(*m.provider_of("opus-4_8-high"), "anthropic");
  EXPECT_EQ(*m.provider_of("claude-3-haiku"), "anthropic");
  EXPECT_EQ(*m.provider_of("grok-4_3"), "xai");
  EXPECT_EQ(*m.provider_of("gemini-3_5-flash"), "google");
  EXPECT_EQ(m.provider_of("llama-3").status().code(), StatusCode::kNotFound);
  m.overrides["llama-3"] = "meta";
  m.overrides["gpt-oss"] = "local";
  EXPECT_EQ(*m.provider_of("llama-3"), "meta");
  EXPECT_EQ(*m.provider_of("gpt-oss"), "local");
}

TEST(ReleasedVotes, ReadsAll800VotesWithTwoMissing) {
  auto v = read_released_votes(testing::data_file("missing-info-judges/votes.jsonl"));
  ASSERT_TRUE(v.ok()) << v.status().message();
  EXPECT_EQ(v->size(), 800u);
  std::set<std::string> subjects, judges, clusters, items;
  int missing = 0;
  for (const auto& x : *v) {
    subjects.insert(x.subject + "/" + x.subject_provider);
    judges.insert(x.judge + "/" + x.judge_provider);
    clusters.insert(x.cluster);
    items.insert(x.item);
    if (!x.label) {
      ++missing;
      EXPECT_EQ(x.judge, "xai");
      EXPECT_EQ(x.item, "41");
    }
  }
  EXPECT_EQ(missing, 2);
  EXPECT_EQ(subjects, (std::set<std::string>{"gemini-3_5-flash/google", "gpt-5_5-high/openai", "grok-4_3/xai",
                                             "opus-4_8-high/anthropic"}));
  EXPECT_EQ(judges, (std::set<std::string>{"anthropic/anthropic", "google/google", "openai/openai", "xai/xai"}));
  EXPECT_EQ(items.size(), 50u);     // the probe items, rated per subject
  EXPECT_EQ(clusters.size(), 50u);  // one prompt per probe item
}

TEST(ReleasedVotes, ErrorsNameFileLineAndField) {
  testing::TempDir d;
  write(d / "v.jsonl",
        "{\"subject_model\": \"gpt-5\", \"item\": 0, \"prompt_id\": \"p\", \"votes\": {\"openai\": true}}\n"
        "{\"subject_model\": \"gpt-5\", \"item\": 1, \"prompt_id\": \"p\", \"votes\": {\"openai\": \"yes\"}}\n");
  auto v = read_released_votes(d / "v.jsonl");
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("v.jsonl:2: votes.openai"), std::string::npos) << v.status().message();
  write(d / "w.jsonl", "{\"subject_model\": \"mistral\", \"item\": 0, \"prompt_id\": \"p\", \"votes\": {}}\n");
  auto w = read_released_votes(d / "w.jsonl");
  EXPECT_EQ(w.status().code(), StatusCode::kNotFound);
  EXPECT_NE(w.status().message().find("w.jsonl:1: subject_model"), std::string::npos) << w.status().message();
}

TEST(MissingInfoDir, ReadsVotesLabelsAndAuditStrata) {
  auto d = read_missing_info_dir(testing::data_file("missing-info-judges"));
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d->votes.size(), 800u);
  EXPECT_EQ(d->raters, (std::vector<std::string>{"G", "O", "R1"}));
  EXPECT_EQ(d->labels.size(), 150u);
  EXPECT_EQ(d->items.size(), 50u);
  std::set<std::string> prompts;
  int r1_yes = 0;
  for (const auto& l : d->labels) {
    prompts.insert(d->items.at(l.item).first);
    if (l.rater == "R1") r1_yes += l.label;
  }
  EXPECT_EQ(prompts.size(), 33u);  // seed 004 §3.1: 33 unique perturbed prompts
  EXPECT_EQ(r1_yes, 27);           // R1 appropriate rate 0.54
  // Audit strata are item metadata: 24 of the 33 annotated prompts are cut mid-word.
  int midword = 0;
  for (const auto& p : prompts)
    for (const auto& [id, cm] : d->items)
      if (cm.first == p) {
        midword += cm.second.value("trunc_form", "") == "midword";
        break;
      }
  EXPECT_EQ(midword, 24);
  // The first annotation A001 is opus-4_8-high's answer to item 23.
  bool found = false;
  for (const auto& l : d->labels) found = found || (l.rater == "O" && l.subject == "opus-4_8-high" && l.item == "23");
  EXPECT_TRUE(found);
}

TEST(MissingInfoDir, MissingDirIsNotFound) {
  testing::TempDir d;
  EXPECT_EQ(read_missing_info_dir(d.path()).status().code(), StatusCode::kNotFound);
}

TEST(LongVotes, CsvWithMissingVoteAndQuoting) {
  testing::TempDir d;
  write(d / "v.csv",
        "judge,subject,subject_provider,item,cluster,judge_provider,label\n"
        "j1,\"model, a\",openai,i1,c1,openai,1\n"
        "j2,\"model, a\",openai,i1,c1,xai,\n"
        "j1,\"model, a\",openai,i2,,openai,false\n");
  auto v = read_votes(d / "v.csv");
  ASSERT_TRUE(v.ok()) << v.status().message();
  ASSERT_EQ(v->size(), 3u);
  EXPECT_EQ((*v)[0].subject, "model, a");
  EXPECT_EQ((*v)[0].label, 1);
  EXPECT_FALSE((*v)[1].label.has_value());
  EXPECT_EQ((*v)[2].label, 0);
  EXPECT_EQ((*v)[2].cluster, "i2");  // empty cluster = item
}

TEST(LongVotes, JsonlAndErrors) {
  testing::TempDir d;
  write(d / "v.jsonl",
        "{\"subject\": \"s\", \"subject_provider\": \"p\", \"item\": 3, \"cluster\": \"c\", \"judge\": \"j\", "
        "\"judge_provider\": \"p\", \"label\": null}\n");
  auto v = read_votes(d / "v.jsonl");
  ASSERT_TRUE(v.ok()) << v.status().message();
  EXPECT_EQ((*v)[0].item, "3");
  EXPECT_FALSE((*v)[0].label.has_value());

  write(d / "dup.csv",
        "subject,subject_provider,item,cluster,judge,judge_provider,label\ns,p,i,c,j,p,1\ns,p,i,c,j,p,0\n");
  auto dup = read_votes(d / "dup.csv");
  ASSERT_FALSE(dup.ok());
  EXPECT_NE(dup.status().message().find("dup.csv:3: judge: a second vote"), std::string::npos) << dup.status().message();

  write(d / "bad.csv", "subject,subject_provider,item,cluster,judge,judge_provider,label\ns,p,i,c,j,p,maybe\n");
  auto bad = read_votes(d / "bad.csv");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("bad.csv:2: label"), std::string::npos) << bad.status().message();

  write(d / "nocol.csv", "subject,item,cluster,judge,judge_provider,label\ns,i,c,j,p,1\n");
  auto nocol = read_votes(d / "nocol.csv");
  ASSERT_FALSE(nocol.ok());
  EXPECT_NE(nocol.status().message().find("nocol.csv:1: subject_provider: missing column"), std::string::npos)
      << nocol.status().message();
  EXPECT_FALSE(read_votes(d / "v.txt").ok());

  // Issue 15: a key given twice in one JSONL object was silently the last one.
  write(d / "twice.jsonl",
        "{\"subject\": \"s\", \"subject_provider\": \"p\", \"item\": 3, \"cluster\": \"c\", \"judge\": \"j\", "
        "\"judge_provider\": \"p\", \"label\": 1, \"label\": 0}\n");
  auto twice = read_votes(d / "twice.jsonl");
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().message().find("twice.jsonl:1: label: the key appears twice in one object"),
            std::string::npos)
      << twice.status().message();
  write(d / "l.jsonl", "{\"rater\": \"r\", \"subject\": \"s\", \"item\": \"i\", \"item\": \"k\", \"label\": 1}\n");
  auto labels = read_labels(d / "l.jsonl");
  ASSERT_FALSE(labels.ok());
  EXPECT_NE(labels.status().message().find("l.jsonl:1: item: the key appears twice"), std::string::npos)
      << labels.status().message();
}

TEST(LongLabels, ReadsAndRejectsEmptyLabel) {
  testing::TempDir d;
  write(d / "l.csv", "rater,subject,item,label\nO,s,1,1\nG,s,1,0\n");
  auto l = read_labels(d / "l.csv");
  ASSERT_TRUE(l.ok()) << l.status().message();
  ASSERT_EQ(l->size(), 2u);
  EXPECT_EQ((*l)[1].rater, "G");
  EXPECT_EQ((*l)[1].label, 0);
  write(d / "e.csv", "rater,subject,item,label\nO,s,1,\n");
  auto e = read_labels(d / "e.csv");
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("e.csv:2: label"), std::string::npos) << e.status().message();
}

// Issue 19: key values that differ only by surrounding whitespace ("i1", "i1 ") would be
// two items (judges, raters, ...): refused, naming both spellings and their first lines,
// in every key column, CSV and JSONL; a letter-case twin is a warning; "i 1" is not a twin.
TEST(LongVotes, KeyValuesDifferingOnlyByWhitespaceAreRefused) {
  testing::TempDir d;
  const std::vector<std::string> cols{"subject", "subject_provider", "item", "cluster", "judge", "judge_provider"};
  const std::vector<std::string> nouns{"subjects", "subject providers", "items", "clusters", "judges",
                                       "judge providers"};
  for (size_t c = 0; c < cols.size(); ++c) {
    SCOPED_TRACE(cols[c]);
    // Rows differ in the judge column (j0, j1, j2) unless that is the column under test,
    // so that they are no duplicate votes.
    auto csv_row = [&](const std::string& val, int n) {
      std::string out;
      for (size_t k = 0; k < cols.size(); ++k)
        out += "\"" + (k == c ? val : cols[k] == "judge" ? "j" + std::to_string(n) : cols[k] + "0") + "\",";
      return out + "1\n";
    };
    std::string header;
    for (const auto& col : cols) header += col + ",";
    write(d / "v.csv", header + "label\n" + csv_row("k1", 0) + csv_row("other", 1) + csv_row("k1 ", 2));
    auto v = read_votes(d / "v.csv");
    ASSERT_FALSE(v.ok());
    EXPECT_EQ(v.status().message(),
              d / "v.csv" + ":4: " + cols[c] + ": values that differ only by surrounding whitespace: 'k1' (first on "
                  "line 2) and 'k1 ' (first on line 4); they would be two " + nouns[c] + ": remove the spaces");
    auto json_row = [&](const std::string& val, int n) {
      std::string out = "{";
      for (size_t k = 0; k < cols.size(); ++k)
        out += "\"" + cols[k] + "\":\"" + (k == c ? val : cols[k] == "judge" ? "j" + std::to_string(n) : cols[k] + "0") +
               "\",";
      return out + "\"label\":1}\n";
    };
    write(d / "v.jsonl", json_row(" k1", 0) + json_row("k1", 1));
    v = read_votes(d / "v.jsonl");
    ASSERT_FALSE(v.ok());
    EXPECT_EQ(v.status().message(),
              d / "v.jsonl" + ":2: " + cols[c] + ": values that differ only by surrounding whitespace: ' k1' (first "
                  "on line 1) and 'k1' (first on line 2); they would be two " + nouns[c] + ": remove the spaces");
  }
  // An empty cluster is the item: cluster "i1 " twins item i1's default cluster.
  write(d / "c.csv", "subject,subject_provider,item,cluster,judge,judge_provider,label\ns,p,i1,,j,p,1\n"
                     "s,p,i2,i1 ,j,p,1\n");
  auto c = read_votes(d / "c.csv");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("c.csv:3: cluster: values that differ only by surrounding whitespace: 'i1' "
                                      "(first on line 2) and 'i1 ' (first on line 3)"),
            std::string::npos)
      << c.status().message();
  // Inner whitespace is a different value; case twins are kept with a warning.
  write(d / "ok.csv", "subject,subject_provider,item,cluster,judge,judge_provider,label\ns,p,i1,,j,p,1\n"
                      "s,p,i 1,,j,p,0\ns,p,i1,,Judge,p,1\ns,p,i1,,j ,p,1\n");
  std::vector<std::string> warnings;
  auto ok = read_votes(d / "ok.csv", &warnings);
  ASSERT_FALSE(ok.ok());  // line 5: "j " twins "j"
  EXPECT_NE(ok.status().message().find("ok.csv:5: judge: values that differ only by surrounding whitespace: 'j' "
                                       "(first on line 2) and 'j ' (first on line 5)"),
            std::string::npos)
      << ok.status().message();
  write(d / "ok.csv", "subject,subject_provider,item,cluster,judge,judge_provider,label\ns,p,i1,,j,p,1\n"
                      "s,p,i 1,,j,p,0\ns,p,i1,,J,p,1\n");
  ok = read_votes(d / "ok.csv", &warnings);
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  ASSERT_EQ(ok->size(), 3u);
  EXPECT_EQ((*ok)[1].item, "i 1");
  ASSERT_EQ(warnings.size(), 1u) << ::testing::PrintToString(warnings);
  EXPECT_EQ(warnings[0], d / "ok.csv" + ": judge: values that differ only by letter case: 'j' (first on line 2) and "
                                        "'J' (first on line 4); they are imported as two judges (fix the spelling "
                                        "if they are one)");
}

TEST(LongLabels, KeyValuesDifferingOnlyByWhitespaceAreRefused) {
  testing::TempDir d;
  write(d / "l.csv", "rater,subject,item,label\nO,s,1,1\nO ,s,2,0\n");
  auto l = read_labels(d / "l.csv");
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.status().message(), d / "l.csv" + ":3: rater: values that differ only by surrounding whitespace: 'O' "
                                                "(first on line 2) and 'O ' (first on line 3); they would be two "
                                                "raters: remove the spaces");
  write(d / "l.jsonl", "{\"rater\": \"O\", \"subject\": \"s\", \"item\": \"q1\", \"label\": 1}\n"
                       "{\"rater\": \"O\", \"subject\": \"s\", \"item\": \"q2\", \"label\": 1}\n"
                       "{\"rater\": \"O\", \"subject\": \"s\", \"item\": \"q1\\t\", \"label\": 1}\n");
  l = read_labels(d / "l.jsonl");
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.status().message(), d / "l.jsonl" + ":3: item: values that differ only by surrounding whitespace: 'q1' "
                                                  "(first on line 1) and 'q1\\t' (first on line 3); they would be "
                                                  "two items: remove the spaces");
  write(d / "s.csv", "rater,subject,item,label\nO,s,1,1\nO,\" s\",1,0\n");
  l = read_labels(d / "s.csv");
  ASSERT_FALSE(l.ok());
  EXPECT_NE(l.status().message().find("s.csv:3: subject: values that differ only by surrounding whitespace"),
            std::string::npos)
      << l.status().message();
  // "q 1" and "q1" are two items; a lone " O" is kept as written.
  write(d / "ok.csv", "rater,subject,item,label\n\" O\",s,q1,1\n\" O\",s,q 1,0\n");
  std::vector<std::string> warnings;
  l = read_labels(d / "ok.csv", &warnings);
  ASSERT_TRUE(l.ok()) << l.status().message();
  EXPECT_EQ((*l)[0].rater, " O");
  EXPECT_EQ((*l)[1].item, "q 1");
  EXPECT_TRUE(warnings.empty());
}

}  // namespace
}  // namespace nf
