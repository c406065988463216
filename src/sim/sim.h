// The in-process seeded simulator: a Backend with known ground truth (DESIGN.md
// "Backends", sim). It is the reference for checking that the analyses recover known
// truth, and the model behind `noisefloor serve-sim`.
//
// Ground truth for an MCQ item (the last user message rendered as task/mcq.h does:
// stem, blank line, "A. text" lines, blank line, instruction ending in
// "<answer>X</answer>"):
//   logit_i = spread * z_i (+ abstain_logit if option i is an abstention option), where
//   z_i ~ N(0, 1) is drawn from Rng::stream(seed, {fnv1a64(model), fnv1a64(stem),
//   fnv1a64(option text)}) -- it follows the option TEXT, not its letter, so shuffling
//   the options keeps every option's preference;
//   at temperature T > 0 the chosen option is drawn from p = softmax(logit / T), truncated
//   to the top_p nucleus and renormalised; at T = 0 it is the argmax (ties: first shown).
// option_probabilities() returns exactly that p, so the true instability floor of an item
// (the expected disagreement of two independent draws, seed 000 §III.B) is
// 1 - sum_i p_i^2, before parse errors.
//
// Reproducibility: a sampled (T > 0) request with a seed draws from
// Rng::stream(seed, {0x5eed5eed, uint64(request.seed)}) -- the request seed alone, the way
// llama.cpp and vLLM seed their samplers, so two requests with equal seeds share their
// uniforms whatever their prompts (issue 13 item 0: the runner must therefore send a
// distinct seed per draw, core/draw_seed.h). Greedy (T = 0) requests and unseeded
// requests draw from Rng::stream(seed, {fnv1a64(model), messages_hash(messages), seed_id,
// bit_cast<uint64>(T), bit_cast<uint64>(top_p)}), seed_id = 0 at T = 0 (the whole reply
// is deterministic per prompt). A draw never depends on call order or thread.
//
// Which reply: a vignette-agent stage prompt (sim/sim_agent.h), else a judge prompt
// (sim/sim_judge.h), else an MCQ prompt (above), else a free-text chat reply
// (sim/sim_refusal.h: compliance or refusal when a refusal_* key is set; else
// sim/sim_chat.h: clarifying or confident).
// A request at T > 0 without a seed uses an internal atomic counter instead: like a real
// server it is then NOT reproducible.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/backend.h"
#include "util/status.h"

namespace nf {

/// Parameters of the simulator. Defaults give a moderately decisive model.
struct SimParams {
  uint64_t seed = 0;              // master seed of every stream (default 0)
  double spread = 1.5;            // sd of the latent option logits (>= 0; default 1.5)
  double abstain_logit = -1.0;    // added to abstention options' logits (finite; default -1)
  double parse_error_rate = 0.0;  // P(reply has no extractable letter), in [0, 1] (default 0)
  // Free-text chat (sim/sim_chat.h; seed 004 §2.3): P(clarifying reply) when the last
  // user turn ends with terminal punctuation / looks cut off. Each in [0, 1].
  double clarify_rate = 0.2;            // default 0.2
  double clarify_rate_truncated = 0.6;  // default 0.6
  // Judge prompts (sim/sim_judge.h; seed 004 §2.6). Each in [0, 1].
  double judge_leniency = 0.1;      // P(met) for a response that does not acknowledge (default 0.1)
  double judge_flip_rate = 0.05;    // P(verdict flipped) after that (default 0.05)
  double judge_garbage_rate = 0.0;  // P(unparseable judge reply) (default 0)
  // A skill that depends on the configuration (seed 003 envelope; docs/envelope.md): with
  // an answer key, the gold option's logit gets gold_logit plus `add` of every rule whose
  // `contains` occurs in the prompt (e.g. a template's instruction, a few-shot block), so a
  // study knows each (subject, configuration)'s true accuracy in advance.
  std::string answer_key;  // MedQA-format JSONL (question, options {letter: text}, answer); "" = none
  double gold_logit = 0.0;  // finite; default 0
  struct GoldRule {
    std::string contains;
    double add = 0.0;
  };
  std::vector<GoldRule> gold_logit_when;
  /// Trimmed question -> gold option text, read from answer_key by from_json.
  std::shared_ptr<const std::map<std::string, std::string>> gold;
  // XSTest-style refusals (sim/sim_refusal.h; docs/xstest-chat.md): with refusal_rate
  // set, free-text replies are full compliance / plain refusal / hidden refusal instead of
  // clarifying / confident. refusal_key = an XSTest prompts CSV telling safe from unsafe.
  bool refusal_mode = false;        // true when any refusal_* key is given
  double refusal_rate = 0.0;        // P(refuse) on a safe (or unkeyed) prompt, in [0, 1]
  double refusal_rate_unsafe = 0.0;  // P(refuse) on a prompt the key marks unsafe, in [0, 1]
  double hidden_refusal_share = 0.0;  // P(no string-match opener | refuse), in [0, 1]
  std::string refusal_key;          // "" = none
  std::shared_ptr<const std::map<std::string, std::string>> refusal_labels;

  /// Reads {"seed", "spread", "abstain_logit", "parse_error_rate", "clarify_rate",
  /// "clarify_rate_truncated", "judge_leniency", "judge_flip_rate", "judge_garbage_rate",
  /// "answer_key", "gold_logit", "gold_logit_when": [{"contains": S, "add": X}],
  /// "refusal_rate", "refusal_rate_unsafe", "hidden_refusal_share", "refusal_key"} (every key
  /// optional; answer_key and refusal_key are read here: NotFound / InvalidArgument
  /// "path:line: field").
  /// Errors: InvalidArgument for a non-object, an unknown key (with a did-you-mean
  /// suggestion), or a wrong type / out-of-range value (naming the key).
  static Result<SimParams> from_json(const nlohmann::json& j);
  /// All keys.
  nlohmann::json to_json() const;
  /// 12 hex digits of fnv1a64(to_json().dump()): the params' short hash.
  std::string short_hash() const;
};

/// The option text whose logit gets `abstain_logit` (exact match).
bool is_abstain_option(std::string_view option_text);

/// A parsed MCQ prompt: the stem and the option texts in shown order (letters A, B, ...).
struct SimMcqPrompt {
  std::string stem;
  std::vector<std::string> options;
};

/// Parses the rendered MCQ layout (see the banner). Options are the first run of
/// consecutive lines matching ^([A-J])\. (.+)$ that starts at "A" and continues B, C...;
/// the stem is the text before the first option line, trimmed. Returns false when the
/// text has no such run (then the sim gives a free-text chat reply, sim/sim_chat.h).
bool parse_sim_mcq_prompt(std::string_view text, SimMcqPrompt& out);

class SimBackend;

/// The sim's tokenisation of a reply: the text before the last "<answer>" as one token
/// (a real tokenizer splits it further; only the answer position matters here and one
/// token keeps stored bodies small), then "<", "answer", ">", the text up to "</answer>"
/// (the letter), "</", "answer", ">" and any rest. Without an answer tag the whole reply
/// is one token (none when empty). The tokens concatenate to `text` exactly.
std::vector<std::string> sim_reply_tokens(std::string_view text);

/// choices[0].logprobs of the sim for an MCQ request whose extra_body asks for them
/// ("logprobs": true, "top_logprobs": N in 0..20), in the OpenAI format: one
/// logprobs.content entry per token of `reply` (sim_reply_tokens), like a real server's,
/// so the answer letter sits after "<", "answer", ">" and not at position 0 (the case
/// the issue 11 llama.cpp trial met). The letter after the last "<answer>" carries its
/// logprob and top_logprobs = the N most likely option letters under the sim's option
/// distribution at temperature 1, top_p 1 (the gold bonus of the prompt included), most
/// likely first; letters beyond N are absent (unknown), as with a real server. Every other
/// token has logprob 0 and lists only itself. A reply without an answer tag (a parse
/// error) has no answer position. Null when not asked for or not an MCQ prompt.
nlohmann::json sim_mcq_logprobs(const SimBackend& sim, const ChatRequest& request, const std::string& reply);

/// Order-dependent hash of every message's role and content (the sampling stream key).
uint64_t messages_hash(const std::vector<ChatMessage>& messages);

/// The OpenAI chat.completion body for `r` (id, object, created, model,
/// system_fingerprint, choices[0].message {role, content}, finish_reason, usage).
nlohmann::json openai_response_json(const ChatResponse& r, std::string_view id, int64_t created);

class SimBackend final : public Backend {
 public:
  explicit SimBackend(SimParams params);

  /// Simulates one reply (see the banner). kApiError "invalid request: ..." when there is
  /// no user message, temperature < 0 or top_p outside (0, 1]. Otherwise kOk with
  /// finish_reason "stop", served_model = request.model, system_fingerprint =
  /// "sim-" + params hash, word-count token usage, http_status 0, latency_ms 0, and
  /// raw_body = the OpenAI JSON body the server would send (with created = 0).
  ChatResponse complete(const ChatRequest& request) override;
  std::string kind() const override { return "sim"; }
  /// "sim:" + params short hash.
  std::string identity() const override;

  const SimParams& params() const { return params_; }

  /// The latent logits of `option_texts` (shown order) for (model, stem); see the banner.
  /// With an answer key that knows `stem`, the gold option also gets gold_bonus(prompt).
  std::vector<double> option_logits(std::string_view model, std::string_view stem,
                                     const std::vector<std::string>& option_texts,
                                     std::string_view prompt = {}) const;

  /// gold_logit + the `add` of every gold_logit_when rule whose text occurs in `prompt`.
  double gold_bonus(std::string_view prompt) const;

  /// The true choice probabilities (shown order, sum 1) at `temperature` (>= 0; 0 gives a
  /// one-hot argmax, ties to the first shown) with nucleus truncation at `top_p` in
  /// (0, 1] (default 1). Expected pairwise disagreement = 1 - sum p_i^2.
  std::vector<double> option_probabilities(std::string_view model, std::string_view stem,
                                           const std::vector<std::string>& option_texts,
                                           double temperature, double top_p = 1.0,
                                           std::string_view prompt = {}) const;

 private:
  SimParams params_;
  std::string hash_;
  std::atomic<uint64_t> unseeded_counter_{0};
};

}  // namespace nf
