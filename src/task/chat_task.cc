// The open-ended chat task (seed 004 §2.3). See chat_task.h.
#include "task/chat_task.h"

#include "core/task_kinds.h"

#include <fmt/format.h>

#include "perturb/truncate.h"
#include "util/strings.h"

namespace nf {
namespace {

nlohmann::json messages_json(const std::vector<ChatMessage>& messages) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& m : messages) out.push_back({{"role", m.role}, {"content", m.content}});
  return out;
}

}  // namespace

ChatTask::ChatTask(std::vector<ChatItem> items) : items_(std::move(items)) {
  for (const auto& it : items_) {
    nlohmann::json data = {{"messages", messages_json(it.messages)}, {"meta", it.meta}};
    if (!it.response.empty()) data["released_response"] = it.response;
    task_items_.push_back({it.id, it.cluster.empty() ? it.id : it.cluster, std::move(data)});
  }
}

Status ChatTask::prepare(const std::vector<std::string>& conditions, uint64_t /*study_seed*/) {
  prepared_.clear();
  const std::vector<std::string>& known = chat_condition_names();  // core/task_kinds.h
  for (const auto& cond : conditions) {
    if (cond != "none" && cond != "truncate_last_turn")
      return InvalidArgument(fmt::format("condition '{}': not a chat condition (expected {}){}", cond,
                                         join(known, ", "), did_you_mean(cond, known)));
  }
  for (size_t i = 0; i < items_.size(); ++i) {
    for (const auto& cond : conditions) {
      Prepared p;
      if (cond == "none") {
        if (items_[i].messages.empty() || items_[i].messages.back().role != "user")
          return InvalidArgument(
              fmt::format("item {}, condition none: the conversation must end with a user turn", items_[i].id));
        p.messages = items_[i].messages;
        p.detail = {{"condition", "none"}};
      } else {
        auto t = truncate_last_turn(items_[i].messages);
        if (!t.ok())
          return InvalidArgument(fmt::format("item {}, condition {}: {}", items_[i].id, cond, t.status().message()));
        p.messages = std::move(t->messages);
        p.detail = t->detail();
      }
      prepared_.emplace(std::make_pair(i, cond), std::move(p));
    }
  }
  return Status::Ok();
}

TaskDrawResult ChatTask::run(size_t item_index, const std::string& condition, const DrawContext& ctx,
                             const CallFn& call) const {
  TaskDrawResult out;
  auto it = prepared_.find({item_index, condition});
  if (it == prepared_.end()) {
    out.status = DrawStatus::kParseError;  // unreachable after prepare(); never an outcome
    out.error = fmt::format("internal: item {} was not prepared for condition {}", item_index, condition);
    return out;
  }
  out.detail = it->second.detail;
  const ChatRequest req = draw_request(ctx, it->second.messages);
  out.request = req.to_openai_json();
  out.response = call(req);
  out.calls = 1;
  switch (out.response.kind) {
    case ResponseKind::kApiError:
      out.status = DrawStatus::kApiError;
      out.error = out.response.error.empty() ? "api error" : out.response.error;
      return out;
    case ResponseKind::kRefused:
      out.status = DrawStatus::kRefused;
      out.error = out.response.error.empty() ? "refused" : out.response.error;
      return out;
    case ResponseKind::kOk:
      break;
  }
  if (trim(out.response.content).empty()) {
    out.status = DrawStatus::kParseError;
    out.error = out.response.finish_reason == "length" ? "empty reply (finish_reason=length)" : "empty reply";
    return out;
  }
  out.status = DrawStatus::kOk;  // no outcomes: judges score chat draws (noisefloor judge)
  return out;
}

}  // namespace nf
