// The logprob scoring path of the MCQ task (issue 11; seed 003 §3): a greedy ok draw with
// logprobs also gets `correct_logprob` from the option with the highest probability at
// the answer position, which may differ from the free-form answer; sampled draws and
// draws whose top list holds no option get none.
#include "task/mcq_task.h"

#include <gtest/gtest.h>

#include <cmath>

namespace nf {
namespace {

McqItem item() {
  McqItem it;
  it.id = "q1";
  it.question = "Which is red?";
  it.options = {{"A", "sky"}, {"B", "blood"}, {"C", "grass"}};
  it.answer = "B";
  return it;
}

ChatResponse reply(const std::string& content, const nlohmann::json& top) {
  ChatResponse r;
  r.kind = ResponseKind::kOk;
  r.content = content;
  nlohmann::json tops = nlohmann::json::array();
  for (const auto& [t, p] : top.items()) tops.push_back({{"token", t}, {"logprob", std::log(p.get<double>())}});
  r.logprobs = {{"content",
                 {{{"token", "<answer>"}, {"logprob", 0.0}, {"top_logprobs", nlohmann::json::array()}},
                  {{"token", content.substr(8, 1)}, {"logprob", std::log(0.5)}, {"top_logprobs", tops}},
                  {{"token", "</answer>"}, {"logprob", 0.0}, {"top_logprobs", nlohmann::json::array()}}}}};
  return r;
}

std::optional<double> outcome(const TaskDrawResult& r, const std::string& name) {
  for (const auto& o : r.outcomes)
    if (o.name == name) return o.value;
  return std::nullopt;
}

TEST(McqLogprobPath, GreedyDrawsGetTheArgmaxOption) {
  McqTask task({item()});
  ASSERT_TRUE(task.prepare({"none"}, 1).ok());
  DrawContext ctx;
  ctx.key = {"s", "q1", "none", "default", 0};
  ctx.config.temperature = 0.0;
  // Free-form says A (wrong); the most likely option at the answer position is B (right).
  auto r = task.run(0, "none", ctx, [&](const ChatRequest&) { return reply("<answer>A</answer>", {{"A", 0.3}, {"B", 0.6}}); });
  ASSERT_EQ(r.status, DrawStatus::kOk);
  EXPECT_EQ(outcome(r, "correct"), 0.0);
  EXPECT_EQ(outcome(r, "correct_logprob"), 1.0);
  // No option in the top list: no logprob outcome (unknown is not wrong).
  r = task.run(0, "none", ctx, [&](const ChatRequest&) { return reply("<answer>A</answer>", {{"The", 0.9}}); });
  EXPECT_FALSE(outcome(r, "correct_logprob").has_value());
  // Sampled draws: the logprob path is greedy only.
  ctx.config.temperature = 0.7;
  r = task.run(0, "none", ctx, [&](const ChatRequest&) { return reply("<answer>A</answer>", {{"B", 0.6}}); });
  EXPECT_FALSE(outcome(r, "correct_logprob").has_value());
}

}  // namespace
}  // namespace nf
