// The task catalog (DESIGN.md "Extension points"): one entry per task kind, naming the
// dataset formats it reads, the conditions it knows (and those it runs by default) and
// the analyses a study runs when it lists none. The spec layer validates a study against
// this table and the runner builds the task through the factory table of
// runner/task_registry.h; neither branches on a task name. The condition lists live here
// once, so spec and perturb no longer keep copies of each other's.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace nf {

struct TaskKind {
  std::string name;                              // "mcq", "vignette_agent", "chat", "fhir_agent"
  std::vector<std::string> formats;              // dataset.format values it reads; [0] = default
  std::vector<std::string> conditions;           // every known condition, in canonical order
  std::vector<std::string> default_conditions;   // conditions when the study lists none
  std::vector<std::string> default_analyses;     // analyses when the study lists none
  bool judged = false;                           // draws are scored by a judge panel (task chat)
  std::vector<std::string> option_keys;          // keys accepted in the study's task_options
  /// Outcomes that are a function of another outcome of the same draw, as {derived,
  /// source} (mcq: `correct` is `choice` compared with the key). Their floors are kept per
  /// outcome, but the pooled floor leaves them out while their source is present: pooling
  /// a derived outcome with its source counts every replicate pair twice (issue 37, tester
  /// s9 F2). A kind that declares none has only independent outcomes.
  std::vector<std::pair<std::string, std::string>> derived_outcomes;
};

/// Every task kind, in the order mcq, vignette_agent, chat, fhir_agent.
const std::vector<TaskKind>& task_kinds();

/// The kind named `name`, or nullptr.
const TaskKind* find_task_kind(const std::string& name);

/// The derived outcomes of the task kind named `name` as {derived, source}; empty for an
/// unknown name (an imported store has no task: every outcome is independent).
std::vector<std::pair<std::string, std::string>> derived_outcomes_of(const std::string& name);

/// The names of task_kinds(), in order.
std::vector<std::string> task_kind_names();

/// Conditions of seed 004 §2.4 (mcq): none, shuffle, remove_answer, remove_context.
const std::vector<std::string>& mcq_condition_names();
/// Conditions of seed 004 §2.3 (chat): none, truncate_last_turn.
const std::vector<std::string>& chat_condition_names();
/// Descriptor conditions of seed 000 §III.A, S10 (vignette_agent): the reference, 11
/// standard conditions and 3 controls.
const std::vector<std::string>& vignette_condition_names();

}  // namespace nf
