#include "runner/task_registry.h"

#include <fmt/format.h>

#include "data/chat.h"
#include "data/medqa.h"
#include "data/vignettes.h"
#include "task/chat_task.h"
#include "task/mcq_task.h"
#include "task/vignette_task.h"

namespace nf {

namespace {

Result<std::unique_ptr<Task>> make_mcq(const Study& study) {  // seed 004 §2.4: task/mcq_task.h
  NF_ASSIGN_OR_RETURN(auto items, read_medqa_jsonl(study.dataset.path, study.dataset.limit, study.dataset.id_field,
                                                   study.dataset.cluster_field));
  return std::unique_ptr<Task>(std::make_unique<McqTask>(std::move(items)));
}

Result<std::unique_ptr<Task>> make_vignette_agent(const Study& study) {  // seed 000 §III.A: task/vignette_task.h
  if (study.dataset.format != "vignettes")
    return InvalidArgument(fmt::format("task vignette_agent: dataset.format must be 'vignettes', got '{}'", study.dataset.format));
  NF_ASSIGN_OR_RETURN(auto set, read_vignettes_json(study.dataset.path));
  if (study.dataset.limit > 0 && static_cast<size_t>(study.dataset.limit) < set.vignettes.size())
    set.vignettes.resize(static_cast<size_t>(study.dataset.limit));
  NF_ASSIGN_OR_RETURN(auto task, VignetteTask::create(std::move(set)));
  return std::unique_ptr<Task>(std::move(task));
}

Result<std::unique_ptr<Task>> make_chat(const Study& study) {  // seed 004 §2.3: task/chat_task.h
  std::vector<ChatItem> items;
  if (study.dataset.format == "chat") {
    NF_ASSIGN_OR_RETURN(items, read_chat_jsonl(study.dataset.path, study.dataset.limit, study.dataset.id_field,
                                               study.dataset.cluster_field));
  } else if (study.dataset.format == "probe_sheet") {
    NF_ASSIGN_OR_RETURN(items, read_probe_sheet(study.dataset.path, probe_sheet_key_path(study.dataset.path)));
    if (study.dataset.limit > 0 && static_cast<size_t>(study.dataset.limit) < items.size())
      items.resize(static_cast<size_t>(study.dataset.limit));
  } else {
    return InvalidArgument(
        fmt::format("task chat: dataset.format must be 'chat' or 'probe_sheet', got '{}'", study.dataset.format));
  }
  return std::unique_ptr<Task>(std::make_unique<ChatTask>(std::move(items)));
}

}  // namespace

const std::vector<TaskRegistration>& task_registry() {
  static const std::vector<TaskRegistration> k{
      {"mcq", make_mcq},
      {"vignette_agent", make_vignette_agent},
      {"chat", make_chat},
  };
  return k;
}

const TaskFactory* find_task_factory(const std::string& name) {
  for (const auto& r : task_registry())
    if (r.name == name) return &r.make;
  return nullptr;
}

}  // namespace nf
