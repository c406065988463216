// Fault (issue 13 item 8): a reply whose top_logprobs is null gave no per-option result at
// all while one with [] gave every option unknown, and neither used the sampled token's
// own probability. Both now give every option unknown except the sampled one.
#include <cmath>

#include <gtest/gtest.h>

#include "backend/openai.h"

namespace nf {
namespace {

nlohmann::json logprobs(const nlohmann::json& top) {
  nlohmann::json first = {{"token", " C"}, {"logprob", std::log(0.8)}};
  if (!top.is_discarded()) first["top_logprobs"] = top;
  return {{"content", nlohmann::json::array({first})}};
}

TEST(RegressionTopLogprobsNull, NullEmptyAndAbsentAgree) {
  const std::vector<std::string> letters = {"A", "B", "C", "D"};
  const auto with_null = option_probabilities(logprobs(nullptr), letters);
  const auto with_empty = option_probabilities(logprobs(nlohmann::json::array()), letters);
  const auto absent = option_probabilities(logprobs(nlohmann::json(nlohmann::json::value_t::discarded)), letters);
  EXPECT_EQ(with_null, with_empty);
  EXPECT_EQ(with_null, absent);
  ASSERT_EQ(with_null.size(), 4u);
  ASSERT_TRUE(with_null.at("C").has_value());
  EXPECT_NEAR(*with_null.at("C"), 0.8, 1e-12);  // the sampled token's own probability
  for (const char* l : {"A", "B", "D"}) EXPECT_FALSE(with_null.at(l).has_value()) << l;
}

TEST(RegressionTopLogprobsNull, SampledTokenIsNotCountedTwice) {
  const auto p = option_probabilities(
      logprobs({{{"token", " C"}, {"logprob", std::log(0.8)}}, {{"token", "C"}, {"logprob", std::log(0.1)}}}),
      {"A", "B", "C"});
  EXPECT_NEAR(*p.at("C"), 0.9, 1e-12);  // " C" once (listed and sampled) + "C"
  EXPECT_FALSE(p.at("A").has_value());
}

}  // namespace
}  // namespace nf
