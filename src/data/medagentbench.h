// Dataset reader for MedAgentBench (seed 002 §3): test_data_v2.json, 300 tasks in ten
// families (task1..task10; task3, 5, 8, 9, 10 can write), and funcs_v1.json, the FHIR
// function list shown to the agent.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/status.h"

namespace nf {

/// One task of test_data_v2.json.
struct MedAgentTask {
  std::string id;           // "task9_1"
  std::string family;       // "task9"
  int index = 0;            // 1 for task9_1
  std::string instruction;
  std::string context;      // "" when empty
  std::string mrn;          // eval_MRN; "" when absent (task1 "patient not found" items)
  nlohmann::json sol;       // the stored solution, null when absent
};

/// The write-capable families of seed 002 §3: task3, task5, task8, task9, task10.
const std::vector<std::string>& medagentbench_write_families();

/// Reads test_data_v2.json (a JSON array of objects with string id "taskF_N", string
/// instruction, optional string context, optional string eval_MRN, optional sol). Keeps the
/// families in `families` (empty = all) and, when `per_family` > 0, the first
/// `per_family` tasks of each by N (the "identifier-ordered" prefix of seed 002 §5).
/// Returned sorted by family (numeric F) then N. Errors: NotFound if the file is
/// missing; InvalidArgument "path: [i] field: problem" for malformed JSON, a missing or
/// mistyped field, an id not of the form taskF_N, a duplicate id, or a requested family
/// with no task.
Result<std::vector<MedAgentTask>> read_medagentbench_tasks(const std::string& path,
                                                           const std::vector<std::string>& families = {},
                                                           int64_t per_family = 0);

/// task id -> eval_MRN over every task of the file that has one. Errors: those of the reader.
Result<std::map<std::string, std::string>> read_medagentbench_mrns(const std::string& path);

/// Reads funcs_v1.json: a JSON array of objects each with a string "name" ("GET
/// {api_base}/Observation") and "description". Errors: NotFound; InvalidArgument
/// "path: [i] field: problem".
Result<nlohmann::json> read_medagentbench_funcs(const std::string& path);

}  // namespace nf
