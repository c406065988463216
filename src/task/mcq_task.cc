#include "task/mcq_task.h"

#include <fmt/format.h>

#include "backend/openai.h"
#include "util/hash.h"
#include "util/rng.h"

namespace nf {

McqTask::McqTask(std::vector<McqItem> items, std::vector<McqItem> exemplars)
    : items_(std::move(items)), exemplars_(std::move(exemplars)) {
  for (const auto& it : items_) {
    nlohmann::json options = nlohmann::json::object();
    for (const auto& o : it.options) options[o.letter] = o.text;
    task_items_.push_back({it.id, it.cluster.empty() ? it.id : it.cluster,
                           {{"question", it.question}, {"options", options}, {"answer", it.answer}, {"meta", it.meta}}});
  }
}

Status McqTask::prepare(const std::vector<std::string>& conditions, uint64_t study_seed) {
  rendered_.clear();
  // The exemplar draw: a Fisher-Yates permutation of the pool from the study seed.
  Rng rng = Rng::stream(study_seed, {fnv1a64("fewshot-exemplars")});
  for (size_t i = exemplars_.size(); i > 1; --i) std::swap(exemplars_[i - 1], exemplars_[rng.uniform_int(i)]);
  for (size_t i = 0; i < items_.size(); ++i) {
    for (const auto& cond : conditions) {
      auto r = apply_mcq_condition(items_[i], cond, study_seed);
      if (!r.ok()) return r.status().with_context(fmt::format("item {}", items_[i].id));
      rendered_.emplace(std::make_pair(i, cond), std::move(r).value());
    }
  }
  return Status::Ok();
}

TaskDrawResult McqTask::run(size_t item_index, const std::string& condition, const DrawContext& ctx,
                            const CallFn& call) const {
  TaskDrawResult out;
  std::optional<ChatRequest> req = begin_draw(item_index, condition, ctx, out);
  if (!req) return out;
  ChatResponse resp = call(*req);
  finish_draw(item_index, condition, *req, std::move(resp), out);
  return out;
}

std::optional<ChatRequest> McqTask::begin_draw(size_t item_index, const std::string& condition,
                                               const DrawContext& ctx, TaskDrawResult& out) const {
  auto it = rendered_.find({item_index, condition});
  if (it == rendered_.end()) {
    out.status = DrawStatus::kParseError;  // unreachable after prepare(); never an outcome
    out.error = fmt::format("internal: item {} was not prepared for condition {}", item_index, condition);
    return std::nullopt;
  }
  const RenderedMcq& item = it->second;
  out.detail = item.detail;
  auto messages = render_mcq_prompt(item, ctx.config.template_name);
  if (!messages.ok()) {
    out.status = DrawStatus::kParseError;
    out.error = messages.status().message();
    return std::nullopt;
  }
  if (ctx.config.fewshot > 0) {
    if (static_cast<size_t>(ctx.config.fewshot) > exemplars_.size()) {  // checked by the runner; never an outcome
      out.status = DrawStatus::kParseError;
      out.error = fmt::format("internal: fewshot {} but {} exemplars", ctx.config.fewshot, exemplars_.size());
      return std::nullopt;
    }
    std::vector<ChatMessage> shots;
    for (int k = 0; k < ctx.config.fewshot; ++k) {
      auto ex = apply_mcq_condition(exemplars_[k], "none", 0);
      if (!ex.ok()) {
        out.status = DrawStatus::kParseError;
        out.error = ex.status().message();
        return std::nullopt;
      }
      auto em = render_mcq_prompt(*ex, ctx.config.template_name);
      if (!em.ok()) {
        out.status = DrawStatus::kParseError;
        out.error = em.status().message();
        return std::nullopt;
      }
      shots.push_back(em->back());  // the user turn (a role-framed system message is kept once, first)
      shots.push_back(ChatMessage{"assistant", "<answer>" + ex->answer + "</answer>"});
    }
    const size_t at = messages->size() - 1;  // before the question's user turn
    messages->insert(messages->begin() + static_cast<std::ptrdiff_t>(at), shots.begin(), shots.end());
  }
  ChatRequest req = draw_request(ctx, std::move(*messages));
  out.request = req.to_openai_json();
  return req;
}

void McqTask::finish_draw(size_t item_index, const std::string& condition, const ChatRequest& req,
                          ChatResponse response, TaskDrawResult& out) const {
  const RenderedMcq& item = rendered_.at({item_index, condition});  // begin_draw found it
  out.response = std::move(response);
  out.calls = 1;
  const McqScore score = score_mcq(item, out.response);
  out.status = score.status;
  out.outcomes = score.outcomes;
  out.error = score.error;
  // The logprob scoring path (seed 003 §3): the option with the highest probability at the
  // answer position, for greedy draws only (as in the seed) and only when some option is
  // in the top list; an ok draw gets `correct_logprob` beside the free-form `correct`.
  if (score.status == DrawStatus::kOk && req.temperature == 0.0 && !out.response.logprobs.is_null()) {
    std::vector<std::string> letters;
    for (const auto& o : item.options) letters.push_back(o.letter);
    const AnswerTokenProbs at = answer_token_probabilities(out.response.logprobs, letters);
    std::optional<std::string> best;
    double best_p = -1.0;
    for (const auto& l : letters) {  // shown order: ties go to the first letter
      // Only options the top list carried: an option known from the sampled token alone
      // cannot be compared with the options the list left out.
      if (!at.listed_letters.count(l)) continue;
      auto pit = at.probs.find(l);
      if (pit != at.probs.end() && pit->second && *pit->second > best_p) {
        best_p = *pit->second;
        best = l;
      }
    }
    if (best) {
      const bool right = *best == item.answer;
      out.outcomes.push_back(Outcome{"correct_logprob", right ? 1.0 : 0.0, right ? "1" : "0"});
    }
  }
}

}  // namespace nf
