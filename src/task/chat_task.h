// The open-ended chat task of seed 004 §2.3 (the missing-information probe): a subject
// answers a conversation in free text; judges score the stored answers later
// (`noisefloor judge`, docs/judging.md).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "data/chat.h"
#include "task/task.h"

namespace nf {

/// The chat task over ChatItems (data/chat.h). Conditions: known_chat_conditions()
/// (spec/study.h): "none" sends the conversation as is; "truncate_last_turn" removes the
/// latter half of the final user turn (perturb/truncate.h, seed 004 §2.3).
///
/// TaskItem::data = {"messages": [{"role","content"}...], "meta": {...}} plus
/// "released_response" for a probe-sheet item that carries one.
///
/// Scoring: none. A chat draw has no outcomes; its status is api_error / refused as the
/// backend classified the response (never an outcome), ok when the content is non-empty
/// after trimming (a reply cut by max_tokens, finish_reason "length", is still ok and
/// keeps its finish_reason), parse_error for an empty reply. Judges score ok draws later
/// from draw.request["messages"] and draw.content (seed 004 §2.5-2.6).
class ChatTask final : public Task {
 public:
  explicit ChatTask(std::vector<ChatItem> items);
  std::string name() const override { return "chat"; }
  const std::vector<TaskItem>& items() const override { return task_items_; }
  /// Applies every condition to every item once, before any call. Errors: InvalidArgument
  /// "item A007, condition truncate_last_turn: ..." for an item the condition cannot be
  /// applied to (e.g. an empty last turn), or an unknown condition (with a did-you-mean).
  Status prepare(const std::vector<std::string>& conditions, uint64_t study_seed) override;
  /// One call: the prepared messages with the config's temperature, top_p and
  /// max_tokens, the per-replicate seed `ctx.seed`, the subject's model and extra_body.
  /// result.request is the OpenAI body actually sent (its "messages" are what judges read);
  /// result.detail: {"condition": "none"} or TruncatedTurn::detail().
  TaskDrawResult run(size_t item_index, const std::string& condition, const DrawContext& ctx,
                     const CallFn& call) const override;

 private:
  struct Prepared {
    std::vector<ChatMessage> messages;
    nlohmann::json detail;
  };
  std::vector<ChatItem> items_;
  std::vector<TaskItem> task_items_;
  std::map<std::pair<size_t, std::string>, Prepared> prepared_;
};

}  // namespace nf
