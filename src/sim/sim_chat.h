// The simulator's free-text chat model (seed 004 §2.3, the missing-information probe):
// a conversation that is neither an MCQ prompt, a vignette-agent stage nor a judge prompt
// is answered with either a CLARIFYING reply (acknowledges that information is missing
// or uncertain and asks the user a question) or a CONFIDENT reply (a definitive answer
// with no question mark and no hedging words), so a judge panel has a known truth to
// recover.
//
// Truth: P(clarifying) = SimParams::clarify_rate_truncated when the last user turn looks
// cut off (sim_chat_looks_truncated), else SimParams::clarify_rate. The choice uses the
// caller's uniform u (sim.cc passes the request's first stream draw, so at temperature 0
// a (model, conversation) always gets the same kind of reply); the template index comes
// from the caller's 64-bit draw.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace nf {

/// True when `last_user_turn` looks cut off: after trimming, it is empty, it contains no
/// '?' (the question was removed: a sentence-boundary cut usually drops it), or its last
/// character is not terminal punctuation (. ? ! : ; ) " ' or a closing bracket), which
/// covers a turn cut mid-word or mid-sentence (seed 004 §2.3 truncate_last_turn).
bool sim_chat_looks_truncated(std::string_view last_user_turn);

/// The probability of a clarifying reply for this last user turn: `clarify_rate_truncated`
/// when it looks cut off, else `clarify_rate` (both in [0, 1]).
double sim_chat_clarify_probability(std::string_view last_user_turn, double clarify_rate,
                                    double clarify_rate_truncated);

/// The reply: clarifying when u < sim_chat_clarify_probability(...), else confident;
/// `r_template` picks one of several templates of that kind. Every clarifying template
/// contains a question mark and the words "information" or "details"; no confident
/// template contains '?', "missing", "information", "uncertain", "clarify" or "depends".
std::string sim_chat_reply(std::string_view last_user_turn, double clarify_rate, double clarify_rate_truncated,
                           double u, uint64_t r_template);

/// True when `reply` was a clarifying reply of sim_chat_reply (exposed for tests).
bool sim_chat_is_clarifying(std::string_view reply);

}  // namespace nf
