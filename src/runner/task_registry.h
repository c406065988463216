// The task factories (DESIGN.md "Extension points"): task kind name -> a function that
// reads the study's dataset and builds the Task. The kinds themselves (formats,
// conditions, default analyses) are catalogued in core/task_kinds.h, which the spec layer
// validates studies against; this table is the runner's half. make_task (runner.h) looks
// the study's task up here and never branches on a name.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "spec/study.h"
#include "task/task.h"
#include "util/status.h"

namespace nf {

/// Reads `study.dataset` (format, path, limit, id/cluster fields) and `study.task_options`
/// and builds the task. Errors: the dataset reader's (naming file, line and field);
/// InvalidArgument for a format or option the kind does not accept.
using TaskFactory = std::function<Result<std::unique_ptr<Task>>(const Study&)>;

struct TaskRegistration {
  std::string name;  // a core/task_kinds.h kind name
  TaskFactory make;
};

/// Every registered factory, one per core task kind, in task_kinds() order.
const std::vector<TaskRegistration>& task_registry();

/// The factory for `name`, or nullptr.
const TaskFactory* find_task_factory(const std::string& name);

}  // namespace nf
