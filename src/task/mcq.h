// The multiple-choice task: rendered item -> chat request; response -> outcomes.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backend/backend.h"
#include "core/types.h"
#include "perturb/mcq_conditions.h"
#include "util/status.h"

namespace nf {

/// Known prompt templates: "default" (think, then <answer>X</answer>) and "direct"
/// (answer with the tag only).
const std::vector<std::string>& known_mcq_templates();

/// Renders the user message for `item` under `template_name`. The body is
///   <question>\n\n<L>. <text>\n...\n\n<instruction ending in the answer contract>
/// and the answer contract is "<answer>X</answer>". InvalidArgument for an unknown
/// template.
Result<std::vector<ChatMessage>> render_mcq_prompt(const RenderedMcq& item, std::string_view template_name);

/// Extracts the chosen option letter from a free-text answer, or nullopt when none can
/// be extracted without guessing. `letters` are the valid option letters ("A".."J"; any
/// entry that is not one ASCII letter is ignored); the result is upper-case. Rules, in
/// priority order; the first rule that applies decides (possibly nullopt):
///  1. <answer>X</answer> (tag name any case; content a letter in any case, optionally
///     wrapped or followed by ". option text", or an explicit statement as in rule 3
///     "<answer>Answer: B</answer>"): the LAST complete tag decides;
///  2. \boxed{X} / \boxed{\text{X}}: the last one decides;
///  3. explicit statements: answer/option/choice + ':' '-' '=' "is" "would be" + a
///     standalone letter ("The answer is C; I checked", "Answer: D", "answer is: (d)",
///     "the best option is B"): the last statement decides; "A or B" there is nullopt;
///  4. **X**, then 5. $X$, then 6. (X): one distinct valid letter in the first class that
///     matches, else nullopt (ambiguous, never a guess);
///  7. the whole reply is a letter (any case, optional wrapping and punctuation: "b", "(B).")
///     or starts "X. " / "X) " with an upper-case letter.
/// Before any rule, full-width ASCII (U+FF01-FF5E) and CJK punctuation are folded to ASCII
/// ("答案：Ｃ" reads as "答案:C"); rule 3 also takes the answer cues of Chinese, Japanese
/// and Korean replies (答案, 正確答案/正确答案, 選擇/选择, 我選, 答え, 正解, 解答, 정답, 답,
/// then optional 是/為/为/應該/は/은/는/이/가 ...): "我選擇 D" -> D, "正確答案為（Ｂ）" -> B,
/// "정답은 A입니다." -> A; the last English or CJK statement decides, so a cue word beats
/// earlier mentions of other letters.
/// A reply that lists several options is not a single answer: "A, B", "A, C and D",
/// "A & B", "A/B", "A or B", "A和C", "A、C", "A 또는 B" after a statement decide nullopt
/// (issue 13 item 2); a new sentence ("B. C is wrong") is not a list.
/// A letter outside `letters` decides nullopt in rules 1-3 and 7 and is ignored in 4-6.
/// Never takes a letter out of a word: "ANSWER: Cannot be determined" and "Error:
/// upstream unavailable" give nullopt; a bare lower-case letter after a statement counts
/// only before punctuation ("the answer is a tricky one" gives nothing), and a bare "I"
/// before a lower-case word is the pronoun. "I think A is wrong; the best option is B."
/// gives B (rule 3); "A or B" gives nullopt. Linear time, safe on arbitrary bytes.
/// Source: seed 004 §2.5 (deterministic option-letter grading), seed 003 App. D (parse
/// failures are reported, not guessed).
std::optional<std::string> extract_choice(std::string_view text, const std::vector<std::string>& letters);

/// The outcome of scoring one response.
struct McqScore {
  DrawStatus status = DrawStatus::kOk;
  std::vector<Outcome> outcomes;  // "correct" (1/0) and "choice" (source option index,
                                  // -1 for an appended option; label = original letter
                                  // or "appended"); empty unless status == ok
  std::string error;              // why it is a parse_error / api_error / refused
};

/// Classifies and scores a response: api_error and refused pass through (never scored;
/// error = response.error); for an ok response the letter comes from extract_choice with
/// the item's shown letters, else from the answer-text fallback of seed 004 §2.5 (the
/// whole reply or the last <answer> tag equals exactly one option's text, ignoring case,
/// spacing and a final '.'); if neither gives an option it is a parse_error with error
/// "no single answer in reply (no option letter, or several options named): <first 80
/// bytes>" (or, for finish_reason "length", an error that says the reply was truncated). Outcomes: "correct" = 1/0 (label "1"/"0")
/// and "choice" = source_index of the chosen shown option (-1 = appended; label = its
/// original letter from source_letter, else 'A' + source_index, or "appended").
McqScore score_mcq(const RenderedMcq& item, const ChatResponse& response);

}  // namespace nf
