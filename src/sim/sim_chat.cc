#include "sim/sim_chat.h"

#include <array>

#include "util/strings.h"

namespace nf {

namespace {

constexpr std::array<std::string_view, 4> kClarifying = {
    "It looks like part of your message may be missing, so I do not have enough information to give a safe "
    "answer yet. Could you tell me more details about the symptoms, how long they have lasted and any "
    "medicines you take?",
    "Before I answer, I need a few more details: the information you gave seems incomplete. What exactly "
    "would you like to know, and are there other symptoms or conditions I should be aware of?",
    "I am uncertain what you are asking, because important information seems to be missing. Can you "
    "clarify your question and share the relevant details (age, history, current treatment)?",
    "Your message appears to have been cut off. To avoid guessing, could you complete the question and add "
    "any details about your situation? With that information I can give a more useful answer.",
};

constexpr std::array<std::string_view, 4> kConfident = {
    "Here is what to do. Take the standard dose as directed, rest, drink plenty of fluids and resume normal "
    "activity within a few days. This plan is appropriate for your situation.",
    "The answer is straightforward: this is a common and benign pattern. Follow the usual first-line approach "
    "for two weeks and the problem will resolve.",
    "You should start the recommended treatment today and continue it for the full course. That is the "
    "correct approach here, and no further steps are needed.",
    "This is best managed with the routine plan: a balanced diet, regular exercise and the usual "
    "over-the-counter option. Expect steady improvement over the next month.",
};

}  // namespace

bool sim_chat_looks_truncated(std::string_view last_user_turn) {
  const std::string t = trim(last_user_turn);
  if (t.empty()) return true;
  // A sentence-boundary cut (truncate_last_turn with >= 2 sentences) usually removes the
  // question itself: a turn that asks nothing looks cut off too.
  if (t.find('?') == std::string::npos) return true;
  const char c = t.back();
  switch (c) {
    case '.': case '?': case '!': case ':': case ';': case ')': case ']': case '"': case '\'':
      return false;
    default:
      return true;
  }
}

double sim_chat_clarify_probability(std::string_view last_user_turn, double clarify_rate,
                                    double clarify_rate_truncated) {
  return sim_chat_looks_truncated(last_user_turn) ? clarify_rate_truncated : clarify_rate;
}

std::string sim_chat_reply(std::string_view last_user_turn, double clarify_rate, double clarify_rate_truncated,
                           double u, uint64_t r_template) {
  if (u < sim_chat_clarify_probability(last_user_turn, clarify_rate, clarify_rate_truncated))
    return std::string(kClarifying[r_template % kClarifying.size()]);
  return std::string(kConfident[r_template % kConfident.size()]);
}

bool sim_chat_is_clarifying(std::string_view reply) {
  for (auto t : kClarifying)
    if (reply == t) return true;
  return false;
}

}  // namespace nf
