// serve-sim --study: the study's sim subjects by model name (runner/sim_models.h).
#include "runner/sim_models.h"

#include <gtest/gtest.h>

namespace nf {
namespace {

SubjectSpec subject(const std::string& name, const std::string& backend, const std::string& model,
                    nlohmann::json sim = nlohmann::json::object()) {
  SubjectSpec s;
  s.name = name;
  s.backend = backend;
  s.model = model;
  s.sim = std::move(sim);
  return s;
}

TEST(SimModels, SimSubjectsAndJudgesByModelNameWithTheirOwnParams) {
  Study study;
  study.subjects = {subject("a", "sim", "sim-a", {{"gold_logit", 1.0}}), subject("b", "sim", "sim-b", {{"seed", 3}}),
                    subject("http", "openai", "gpt-x"), subject("a-again", "sim", "sim-a", {{"gold_logit", 1.0}})};
  study.judge.enabled = true;
  study.judge.panel = {subject("j", "sim", "judge-1", {{"judge_leniency", 0.3}})};
  auto m = served_sim_models(study, "s.yaml");
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_EQ(m->size(), 3u);  // sim-a once (same params twice), sim-b, judge-1; not the openai subject
  EXPECT_DOUBLE_EQ(m->at("sim-a").gold_logit, 1.0);
  EXPECT_EQ(m->at("sim-b").seed, 3u);
  EXPECT_DOUBLE_EQ(m->at("judge-1").judge_leniency, 0.3);
}

TEST(SimModels, ConflictsAndEmptyStudiesAreErrors) {
  Study clash;
  clash.subjects = {subject("a", "sim", "m", {{"gold_logit", 1.0}}), subject("b", "sim", "m", {{"gold_logit", 2.0}})};
  auto c = served_sim_models(clash, "s.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(c.status().message().find("s.yaml: subjects 'a' and 'b' both have model 'm'"), std::string::npos)
      << c.status().message();

  Study none;
  none.subjects = {subject("http", "openai", "gpt-x")};
  auto n = served_sim_models(none, "s.yaml");
  ASSERT_FALSE(n.ok());
  EXPECT_NE(n.status().message().find("no subject or judge has backend: sim"), std::string::npos);

  Study bad;
  bad.subjects = {subject("a", "sim", "m", {{"sprad", 1.0}})};
  auto b = served_sim_models(bad, "s.yaml");
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("subject 'a': sim"), std::string::npos) << b.status().message();
  EXPECT_NE(b.status().message().find("sprad"), std::string::npos) << b.status().message();
}

}  // namespace
}  // namespace nf
