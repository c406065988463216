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
/// be extracted without guessing. `letters` are the valid option letters ("A".."J").
/// Accepts, in priority order: <answer>X</answer> (last one wins); "answer is X",
/// "answer: X", "Answer - (X)"; **X**; (X); $X$ / \boxed{X}; a reply that is just the
/// letter (any case, optional punctuation). Never takes a letter out of a word:
/// "ANSWER: Cannot be determined" and "Error: upstream unavailable" give nullopt.
std::optional<std::string> extract_choice(std::string_view text, const std::vector<std::string>& letters);

/// The outcome of scoring one response.
struct McqScore {
  DrawStatus status = DrawStatus::kOk;
  std::vector<Outcome> outcomes;  // "correct" (1/0) and "choice" (source option index,
                                  // -1 for an appended option; label = original letter
                                  // or "appended"); empty unless status == ok
  std::string error;              // why it is a parse_error / api_error / refused
};

/// Classifies and scores a response: api_error and refused pass through (never scored);
/// an ok response whose letter cannot be extracted is a parse_error.
McqScore score_mcq(const RenderedMcq& item, const ChatResponse& response);

}  // namespace nf
