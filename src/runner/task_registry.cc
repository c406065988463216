#include "runner/task_registry.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "data/bbq.h"
#include "data/chat.h"
#include "data/medqa.h"
#include "data/vignettes.h"
#include "data/xstest.h"
#include "data/medagentbench.h"
#include "fhir/chart_fixture.h"
#include "spec/study_where.h"
#include "task/chat_task.h"
#include "task/fhir_agent_task.h"
#include "task/mcq_task.h"
#include "task/vignette_task.h"

namespace nf {

namespace {

Result<std::unique_ptr<Task>> make_mcq(const Study& study) {  // seed 004 §2.4: task/mcq_task.h
  if (study.dataset.format == "bbq") {  // data/bbq.h: three options incl. unknown
    if (*std::max_element(study.axes.fewshot.begin(), study.axes.fewshot.end()) > 0)
      return InvalidArgument("configs.fewshot: not supported for dataset.format bbq yet");
    NF_ASSIGN_OR_RETURN(auto bbq, read_bbq_jsonl(study.dataset.path, study.dataset.limit));
    std::vector<McqItem> items;
    for (auto& b : bbq) items.push_back(std::move(b.mcq));
    return std::unique_ptr<Task>(std::make_unique<McqTask>(std::move(items)));
  }
  const int max_shots = *std::max_element(study.axes.fewshot.begin(), study.axes.fewshot.end());
  if (max_shots == 0) {
    NF_ASSIGN_OR_RETURN(auto items, read_medqa_jsonl(study.dataset.path, study.dataset.limit, study.dataset.id_field,
                                                     study.dataset.cluster_field));
    return std::unique_ptr<Task>(std::make_unique<McqTask>(std::move(items)));
  }
  // Few-shot (seed 003 §3): the exemplar pool is the file's items after the first
  // `limit` (disjoint from the test items by construction).
  NF_ASSIGN_OR_RETURN(auto all, read_medqa_jsonl(study.dataset.path, 0, study.dataset.id_field,
                                                 study.dataset.cluster_field));
  const auto n_test = static_cast<size_t>(study.dataset.limit);
  if (study.dataset.limit <= 0 || all.size() < n_test + static_cast<size_t>(max_shots))
    return InvalidArgument(fmt::format(
        "configs.fewshot: {} exemplars need dataset.limit set below the {} items of {} (the exemplar pool is the "
        "items after the first `limit`)",
        max_shots, all.size(), study.dataset.path));
  std::vector<McqItem> pool(all.begin() + static_cast<std::ptrdiff_t>(n_test), all.end());
  all.resize(n_test);
  return std::unique_ptr<Task>(std::make_unique<McqTask>(std::move(all), std::move(pool)));
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
  } else if (study.dataset.format == "xstest") {  // data/xstest.h; docs/xstest-chat.md
    NF_ASSIGN_OR_RETURN(items, read_xstest_prompts(study.dataset.path, study.dataset.limit));
  } else {
    return InvalidArgument(fmt::format("task chat: dataset.format must be 'chat', 'probe_sheet' or 'xstest', got '{}'",
                                       study.dataset.format));
  }
  return std::unique_ptr<Task>(std::make_unique<ChatTask>(std::move(items)));
}

// seed 002: task/fhir_agent_task.h. The dataset is test_data_v2.json; funcs_v1.json,
// fhir_snapshot.jsonl and task_truth_audit.json are read beside it.
Result<std::unique_ptr<Task>> make_fhir_agent(const Study& study) {
  const nlohmann::json& o = study.task_options;
  // "study.yaml:LINE: task_options.KEY: problem", as the study parser's own errors.
  auto bad = [&study](const std::string& key, const std::string& what) {
    return InvalidArgument(fmt::format("{}: {}", study_key_where(study, "task_options." + key), what));
  };
  FhirAgentOptions opt;
  std::string fhir_base = "embedded";
  std::vector<std::string> families = medagentbench_write_families();
  int64_t per_family = 0;
  uint64_t chart_seed = 2;
  for (const auto& [k, v] : o.items()) {
    if (k == "fhir_base" || k == "feedback") {
      if (!v.is_string()) return bad(k, "expected a string");
      (k == "fhir_base" ? fhir_base : opt.feedback) = v.get<std::string>();
    } else if (k == "get_cut_chars" || k == "max_rounds" || k == "per_family" || k == "chart_seed") {
      if (!v.is_number_integer() || v.get<int64_t>() < 0) return bad(k, "expected a non-negative integer");
      const int64_t n = v.get<int64_t>();
      if (k == "get_cut_chars") opt.get_cut_chars = static_cast<int>(std::min<int64_t>(n, 1'000'000'000));
      if (k == "max_rounds") opt.max_rounds = static_cast<int>(std::min<int64_t>(n, 1000));
      if (k == "per_family") per_family = n;
      if (k == "chart_seed") chart_seed = static_cast<uint64_t>(n);
    } else if (k == "families") {
      families.clear();
      const nlohmann::json list = v.is_array() ? v : nlohmann::json::array({v});
      for (const auto& f : list) {
        if (!f.is_string()) return bad(k, "expected a list of family names (task3, task5, task8, task9, task10)");
        const auto& wf = medagentbench_write_families();
        if (std::find(wf.begin(), wf.end(), f.get<std::string>()) == wf.end())
          return bad(k, fmt::format("'{}' is not a write family (task3, task5, task8, task9, task10)", f.get<std::string>()));
        families.push_back(f.get<std::string>());
      }
    }
  }
  const std::string& path = study.dataset.path;
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  NF_ASSIGN_OR_RETURN(auto tasks, read_medagentbench_tasks(path, families, per_family));
  if (per_family > 0) {
    // A cap above what a family holds would run fewer tasks than asked without a word.
    NF_ASSIGN_OR_RETURN(auto every, read_medagentbench_tasks(path, families, 0));
    std::map<std::string, int64_t> per;
    for (const auto& t : every) ++per[t.family];
    for (const auto& [family, n] : per)
      if (n < per_family)
        return bad("per_family", fmt::format("{} tasks per family asked, but family {} has {} (at most {} for the "
                                             "families chosen)",
                                             per_family, family, n,
                                             std::min_element(per.begin(), per.end(), [](const auto& a, const auto& b) {
                                               return a.second < b.second;
                                             })->second));
  }
  if (study.dataset.limit > 0 && static_cast<size_t>(study.dataset.limit) < tasks.size())
    tasks.resize(static_cast<size_t>(study.dataset.limit));
  NF_ASSIGN_OR_RETURN(auto funcs, read_medagentbench_funcs(dir + "/funcs_v1.json"));
  NF_ASSIGN_OR_RETURN(auto mrns, read_medagentbench_mrns(path));
  NF_ASSIGN_OR_RETURN(auto facts, read_task_truth_audit(dir + "/task_truth_audit.json", mrns));
  std::shared_ptr<FhirEnvironment> env;
  if (fhir_base == "embedded") {
    NF_ASSIGN_OR_RETURN(auto server, build_medagentbench_server("http://localhost:8080/fhir/", dir + "/fhir_snapshot.jsonl",
                                                                dir + "/task_truth_audit.json", mrns, chart_seed));
    env = embedded_fhir_environment(std::move(server));
  } else {
    NF_ASSIGN_OR_RETURN(auto ext, external_fhir_environment(fhir_base));
    env = std::move(ext);
  }
  NF_ASSIGN_OR_RETURN(auto task, FhirAgentTask::create(std::move(tasks), std::move(facts), std::move(funcs), env, opt));
  return std::unique_ptr<Task>(std::move(task));
}

}  // namespace

const std::vector<TaskRegistration>& task_registry() {
  static const std::vector<TaskRegistration> k{
      {"mcq", make_mcq},
      {"vignette_agent", make_vignette_agent},
      {"chat", make_chat},
      {"fhir_agent", make_fhir_agent},
  };
  return k;
}

const TaskFactory* find_task_factory(const std::string& name) {
  for (const auto& r : task_registry())
    if (r.name == name) return &r.make;
  return nullptr;
}

}  // namespace nf
