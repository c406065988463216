// The multiple-choice task behind the Task interface (seed 004 §2.4).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "perturb/mcq_conditions.h"
#include "task/mcq.h"
#include "task/task.h"

namespace nf {

/// Wraps MCQ items: prepare() renders every (item, condition) once (shuffle permutations
/// from the study seed); run() renders the prompt under the config's template, makes one
/// call and scores it with score_mcq (outcomes `correct` and `choice`).
/// Few-shot (config.fewshot = k > 0; seed 003 §3): the first k exemplars of a permutation
/// of `exemplars` drawn from the study seed (one exemplar draw per study, the same for every
/// item and configuration with that k, each k a prefix of the next) come before the
/// question as user / assistant turns, each rendered with the config's template and
/// answered "<answer>X</answer>" with its gold letter. The exemplar pool must be disjoint
/// from the test items (the runner passes the dataset items after `limit`).
class McqTask final : public Task {
 public:
  explicit McqTask(std::vector<McqItem> items, std::vector<McqItem> exemplars = {});
  std::string name() const override { return "mcq"; }
  const std::vector<TaskItem>& items() const override { return task_items_; }
  Status prepare(const std::vector<std::string>& conditions, uint64_t study_seed) override;
  TaskDrawResult run(size_t item_index, const std::string& condition, const DrawContext& ctx,
                     const CallFn& call) const override;
  bool single_call() const override { return true; }
  std::optional<ChatRequest> begin_draw(size_t item_index, const std::string& condition, const DrawContext& ctx,
                                        TaskDrawResult& out) const override;
  void finish_draw(size_t item_index, const std::string& condition, const ChatRequest& request,
                   ChatResponse response, TaskDrawResult& out) const override;

 private:
  std::vector<McqItem> items_;
  std::vector<McqItem> exemplars_;  // in the study-seeded order after prepare()
  std::vector<TaskItem> task_items_;
  std::map<std::pair<size_t, std::string>, RenderedMcq> rendered_;
};

}  // namespace nf
