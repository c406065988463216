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
class McqTask final : public Task {
 public:
  explicit McqTask(std::vector<McqItem> items);
  std::string name() const override { return "mcq"; }
  const std::vector<TaskItem>& items() const override { return task_items_; }
  Status prepare(const std::vector<std::string>& conditions, uint64_t study_seed) override;
  TaskDrawResult run(size_t item_index, const std::string& condition, const DrawContext& ctx,
                     const CallFn& call) const override;

 private:
  std::vector<McqItem> items_;
  std::vector<TaskItem> task_items_;
  std::map<std::pair<size_t, std::string>, RenderedMcq> rendered_;
};

}  // namespace nf
