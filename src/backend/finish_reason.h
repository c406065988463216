// Whether a reply's finish reason says the generation ended normally (shared by the
// OpenAI-compatible and Anthropic readers).
#pragma once

#include <string>

namespace nf {

/// Whether a reply's finish reason says the generation did not end normally, so that its
/// text is no answer: "error", "abort" (vLLM, SGLang when a request is aborted),
/// "cancelled", or any value this client does not know. Returns the api_error text for
/// such a reply, or "" when the text may be scored: an empty finish reason (absent or
/// null: the task decides), or one of the ends of a finished generation that OpenAI and
/// the common OpenAI-compatible servers send (stop, length, tool_calls, function_call,
/// content_filter; eos_token, eos, stop_sequence as TGI and others write them; end_turn,
/// max_tokens as Anthropic writes them). Tester finding 2026-12-01: `finish_reason:
/// "error"` was scored as the model's answer.
std::string abnormal_finish_error(const std::string& finish_reason);

}  // namespace nf
