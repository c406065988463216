#include "core/task_kinds.h"

namespace nf {

const std::vector<std::string>& mcq_condition_names() {
  static const std::vector<std::string> k{"none", "shuffle", "remove_answer", "remove_context"};
  return k;
}

const std::vector<std::string>& chat_condition_names() {
  static const std::vector<std::string> k{"none", "truncate_last_turn"};
  return k;
}

const std::vector<std::string>& vignette_condition_names() {
  static const std::vector<std::string> k{
      "ref_white_man_private",   "race_black_man_private", "race_hispanic_man_private",
      "race_asian_man_private",  "race_native_american_man_private", "white_woman_private",
      "age_34_white_man_private", "age_78_white_man_private", "white_man_medicaid",
      "white_man_private_lep",   "black_woman_medicaid",   "hispanic_man_medicaid_lep",
      "rerender_control",        "sham_attribute_control", "rare_token_control"};
  return k;
}

const std::vector<TaskKind>& task_kinds() {
  static const std::vector<TaskKind> k{
      {"mcq", {"medqa", "bbq"}, mcq_condition_names(), {"none"}, {"floor", "majority_floor", "mcq_robustness"}, false, {},
       {{"correct", "choice"}}},
      {"vignette_agent", {"vignettes"}, vignette_condition_names(), vignette_condition_names(),
       {"floor", "majority_floor", "mcq_robustness", "fairness"}, false, {}},
      {"chat", {"chat", "probe_sheet", "xstest"}, chat_condition_names(), {"none"}, {}, true, {}},
      {"fhir_agent", {"medagentbench"}, {"none"}, {"none"}, {"rerun"}, false,
       {"fhir_base", "feedback", "get_cut_chars", "max_rounds", "families", "per_family", "chart_seed"}},
  };
  return k;
}

const TaskKind* find_task_kind(const std::string& name) {
  for (const auto& k : task_kinds())
    if (k.name == name) return &k;
  return nullptr;
}

std::vector<std::pair<std::string, std::string>> derived_outcomes_of(const std::string& name) {
  const TaskKind* k = find_task_kind(name);
  return k == nullptr ? std::vector<std::pair<std::string, std::string>>{} : k->derived_outcomes;
}

std::vector<std::string> task_kind_names() {
  std::vector<std::string> out;
  for (const auto& k : task_kinds()) out.push_back(k.name);
  return out;
}

}  // namespace nf
