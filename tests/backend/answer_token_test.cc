// Option probabilities at the answer position (issue 11 item 1): for "<answer>B</answer>"
// the first generated token is "<", so the per-option probabilities must be read at the
// token where the parsed letter sits; a top list with other tokens under a grammar says the
// server reports the distribution before the constraint.
#include <gtest/gtest.h>

#include <cmath>

#include "backend/openai.h"

namespace nf {
namespace {

nlohmann::json tok(const std::string& t, double p, nlohmann::json top = nlohmann::json::array()) {
  return {{"token", t}, {"logprob", std::log(p)}, {"top_logprobs", top}};
}
nlohmann::json alt(const std::string& t, double p) { return {{"token", t}, {"logprob", std::log(p)}}; }

TEST(AnswerToken, ReadsTheLetterAfterTheLastAnswerTag) {
  // "I think A. <answer>B</answer>": an earlier letter and the tag's own tokens are skipped.
  const nlohmann::json lp = {
      {"content",
       {tok("I think", 0.9, {alt("I think", 0.9)}), tok(" A", 0.5, {alt(" A", 0.5), alt(" C", 0.3)}),
        tok(". ", 0.9), tok("<", 0.99, {alt("<", 0.99), alt("The", 0.01)}), tok("answer", 1.0), tok(">", 1.0),
        tok("B", 0.6, {alt("B", 0.6), alt("D", 0.25), alt("hello", 0.1)}), tok("</", 1.0), tok("answer", 1.0),
        tok(">", 1.0)}}};
  const auto at = answer_token_probabilities(lp, {"A", "B", "C", "D"});
  ASSERT_TRUE(at.position.has_value()) << at.note;
  EXPECT_EQ(*at.position, 6u);
  EXPECT_EQ(at.token, "B");
  EXPECT_NEAR(*at.token_prob, 0.6, 1e-12);
  EXPECT_NEAR(*at.probs.at("B"), 0.6, 1e-12);
  EXPECT_NEAR(*at.probs.at("D"), 0.25, 1e-12);
  EXPECT_FALSE(at.probs.at("A").has_value());  // absent from the top list: unknown, not zero
  EXPECT_FALSE(at.probs.at("C").has_value());
  EXPECT_TRUE(at.top_has_non_letters);  // "hello": not constrained to the letters
  EXPECT_EQ(option_probabilities(lp, {"A", "B", "C", "D"}), at.probs);
}

TEST(AnswerToken, WithoutATagTheLastLetterTokenCounts) {
  const nlohmann::json lp = {{"content", {tok(" C", 0.7, {alt(" C", 0.7), alt("C", 0.1), alt("A", 0.2)})}}};
  const auto at = answer_token_probabilities(lp, {"A", "B", "C"});
  ASSERT_TRUE(at.position.has_value());
  EXPECT_NEAR(*at.probs.at("C"), 0.8, 1e-12);  // "C" and " C" merge
  EXPECT_FALSE(at.top_has_non_letters);
}

TEST(AnswerToken, MergedOrMissingLettersAreNotFound) {
  const nlohmann::json merged = {{"content", {tok("<answer", 1.0), tok(">B", 0.5, {alt(">B", 0.5), alt(">A", 0.4)})}}};
  const auto a = answer_token_probabilities(merged, {"A", "B"});
  EXPECT_FALSE(a.position.has_value());
  EXPECT_TRUE(a.probs.empty());
  EXPECT_NE(a.note.find("shares token 1"), std::string::npos) << a.note;
  const nlohmann::json none = {{"content", {tok("no idea", 1.0)}}};
  EXPECT_FALSE(answer_token_probabilities(none, {"A", "B"}).position.has_value());
  EXPECT_FALSE(answer_token_probabilities(nullptr, {"A"}).position.has_value());
}

}  // namespace
}  // namespace nf
