// The runner's side of issue 6: study keys for HTTP subjects reach the backends, logprobs
// are requested, provenance is recorded without credentials, and a refreshed draw
// replaces the stored one.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>

#include "backend/openai.h"
#include "common/test_data.h"
#include "runner/runner.h"
#include "spec/study.h"
#include "store/store.h"

namespace nf {
namespace {

std::string study_text(const std::string& subject) {
  return "name: t\nseed: 1\ndataset:\n  format: medqa\n  path: " + std::string(NF_SOURCE_DIR) +
         "/data/sample-mcq.jsonl\nsubjects:\n" + subject + "replicates: 2\n";
}

TEST(RunnerBackends, HttpSubjectKeysParseAndAreValidated) {
  auto s = parse_study(study_text("  - name: h\n    backend: openai\n    model: m\n"
                                  "    base_url: https://user:pw@example.com/v1\n    rpm: 600\n    tpm: 90000\n"
                                  "    max_retries: 2\n    retry_after_cap_s: 30\n    connect_timeout_s: 3\n"
                                  "    logprobs: 5\n"),
                       "t.yaml");
  ASSERT_TRUE(s.ok()) << s.status().message();
  const SubjectSpec& sub = s->subjects[0];
  EXPECT_EQ(sub.rpm, 600);
  EXPECT_EQ(sub.tpm, 90000);
  EXPECT_EQ(sub.max_retries, 2);
  EXPECT_EQ(sub.retry_after_cap_s, 30);
  EXPECT_EQ(sub.connect_timeout_s, 3);
  EXPECT_EQ(sub.logprobs, 5);
  auto bad = parse_study(study_text("  - name: h\n    backend: openai\n    model: m\n    base_url: http://x/v1\n"
                                    "    max_retries: -1\n"),
                         "t.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("max_retries"), std::string::npos) << bad.status().message();
  auto typo = parse_study(study_text("  - name: h\n    backend: openai\n    model: m\n    base_url: http://x/v1\n"
                                     "    max_retrys: 1\n"),
                          "t.yaml");
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.status().message().find("max_retries"), std::string::npos) << typo.status().message();
  auto anth = parse_study(study_text("  - name: c\n    backend: anthropic\n    model: claude\n"), "t.yaml");
  ASSERT_TRUE(anth.ok()) << anth.status().message();
  EXPECT_EQ(anth->subjects[0].base_url, "https://api.anthropic.com/v1");
}

TEST(RunnerBackends, BackendsAreBuiltWithTheirKindAndStrippedIdentity) {
  SubjectSpec s;
  s.name = "h";
  s.backend = "openai";
  s.base_url = "https://user:pw@example.com/v1/";
  auto b = make_backend(s);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ((*b)->kind(), "openai");
  EXPECT_EQ((*b)->identity(), "openai:https://example.com/v1");
  s.backend = "anthropic";
  auto a = make_backend(s);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ((*a)->kind(), "anthropic");
  s.api_key_env = "NF_SURELY_UNSET_VARIABLE_12345";
  auto missing = make_backend(s);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("NF_SURELY_UNSET_VARIABLE_12345"), std::string::npos);
}

TEST(RunnerBackends, LogprobsAreRequestedOnlyForOpenAiSubjects) {
  SubjectSpec s;
  s.backend = "openai";
  s.extra_body = {{"guided_choice", {"A", "B"}}};
  EXPECT_EQ(effective_extra_body(s), s.extra_body);
  s.logprobs = 3;
  const auto body = effective_extra_body(s);
  EXPECT_EQ(body["logprobs"], true);
  EXPECT_EQ(body["top_logprobs"], 3);
  EXPECT_EQ(body["guided_choice"], s.extra_body["guided_choice"]);
  s.backend = "anthropic";
  EXPECT_FALSE(effective_extra_body(s).contains("logprobs"));
}

TEST(RunnerBackends, ProvenanceCardHasHashesAndNoCredentials) {
  const std::string text = study_text("  - name: h\n    backend: openai\n    model: m\n"
                                      "    base_url: https://user:hunter2@example.com/v1\n");
  auto s = parse_study(text, std::string(NF_SOURCE_DIR) + "/examples/t.yaml");
  ASSERT_TRUE(s.ok()) << s.status().message();
  s->source_text = text;
  const auto card = provenance_card(*s);
  EXPECT_EQ(card["tool_version"], NOISEFLOOR_VERSION);
  EXPECT_EQ(card["study_sha256"].get<std::string>().size(), 64u);
  ASSERT_EQ(card["datasets"].size(), 1u);
  EXPECT_EQ(card["datasets"][0]["sha256"].get<std::string>().size(), 64u);
  EXPECT_EQ(card["backends"][0]["url"], "https://example.com/v1");
  EXPECT_TRUE(card["study_git_commit"].is_null() || card["study_git_commit"].get<std::string>().size() == 40u);
  EXPECT_EQ(card.dump().find("hunter2"), std::string::npos);
  EXPECT_EQ(study_to_json(*s).dump().find("hunter2"), std::string::npos);
}

TEST(RunnerBackends, ReplaceDrawSwapsTheDrawAndItsOutcomesAtomically) {
  testing::TempDir d;
  auto store = Store::open(d.path() + "/s.sqlite");
  ASSERT_TRUE(store.ok());
  Draw draw;
  draw.key = {"s", "i1", "none", "default", 0};
  draw.cluster = "i1";
  draw.status = DrawStatus::kOk;
  draw.outcomes = {{"correct", 1.0, ""}};
  ASSERT_TRUE((*store)->put_item("i1", "i1", nlohmann::json::object()).ok());
  ASSERT_TRUE((*store)->put_draw(draw).ok());
  EXPECT_EQ((*store)->put_draw(draw).code(), StatusCode::kAlreadyExists);
  draw.outcomes = {{"correct", 0.0, ""}};
  ASSERT_TRUE((*store)->replace_draw(draw).ok());
  EXPECT_EQ(*(*store)->count_key(draw.key), 1);
  auto rows = (*store)->outcome_rows();
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].value, 0.0);
  // A bad replacement writes nothing and keeps the old draw.
  Draw bad = draw;
  bad.outcomes = {{"correct", std::nan(""), ""}};
  EXPECT_FALSE((*store)->replace_draw(bad).ok());
  EXPECT_EQ(*(*store)->count_key(draw.key), 1);
  EXPECT_EQ((*(*store)->outcome_rows())[0].value, 0.0);
}

}  // namespace
}  // namespace nf
