// The chart the record server holds for MedAgentBench (seed 002 §3): the 500 public
// Patient resources of the benchmark's snapshot plus a chart fixture this project
// generates itself (docs/fhir-rerun.md "Chart fixture"), deterministic in (task id,
// seed), such that every fact the benchmark's reference grader reads for the write
// families task3, task5, task8, task9 and task10 (task_truth_audit.json) holds:
//   task5  the latest magnesium ("MG") within 24 h before kNow is live_latest_24h, or
//          there is none (older history > 24 h before kNow exists either way);
//   task9  the latest potassium ("K") is live_latest_K, posted after 24 older values so
//          that an unsorted first page of 20 does not contain it;
//   task10 the latest HbA1C ("A1C") is live_ref_sol at live_last_iso with 4 older
//          values, or the patient has no A1C at all (live_ref_sol [-1]);
//   task3  6 older blood-pressure ("BP") observations; task8 no clinical data.
// Older values are drawn from Rng::stream(seed, {fnv1a64(task id)}) in plausible ranges
// and inserted in a shuffled order before the latest value.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fhir/fhir_server.h"
#include "util/status.h"

namespace nf {

/// "Now" in every MedAgentBench task context.
inline constexpr const char* kMedAgentBenchNow = "2023-11-13T10:15:00+00:00";

/// One write-family task's chart facts (a row of task_truth_audit.json).
struct ChartFact {
  std::string task_id;   // "task9_1"
  std::string family;    // "task9"
  std::string mrn;       // the patient (test_data_v2.json eval_MRN)
  std::string branch;    // the grader's branch, e.g. "normal_no_order"
  std::optional<double> value;      // task5 live_latest_24h, task9 live_latest_K, task10 live_ref_sol[0]
  std::optional<std::string> time;  // task10 live_last_iso
};

/// The Patient resources of fhir_snapshot.jsonl (one JSON object per line with `url`,
/// `status_code`, `data`; Patient entries of searchset Bundles), de-duplicated by id in
/// first-seen order. Errors: NotFound for a missing file; DataLoss "path:line: ..." for a
/// line that is not JSON or lacks `data`.
Result<std::vector<nlohmann::json>> read_snapshot_patients(const std::string& path);

/// The facts of task_truth_audit.json for the write families task3/5/8/9/10. `mrn_by_task`
/// maps task id -> eval_MRN (from test_data_v2.json). Errors: NotFound for a missing
/// file; DataLoss "path: row N: field: problem" for a malformed row, a task without an
/// MRN, or a value of the wrong type.
Result<std::vector<ChartFact>> read_task_truth_audit(const std::string& path,
                                                     const std::map<std::string, std::string>& mrn_by_task);

/// The chart fixture resources for `facts` (see the header comment), in insertion order.
std::vector<nlohmann::json> chart_fixture(const std::vector<ChartFact>& facts, uint64_t seed = 2);

/// A server at `base_url` holding the snapshot's patients and the chart fixture.
/// Errors: those of the readers; InvalidArgument when a fact's patient is not among the
/// snapshot's patients.
Result<std::unique_ptr<FhirServer>> build_medagentbench_server(const std::string& base_url,
                                                               const std::string& snapshot_path,
                                                               const std::string& audit_path,
                                                               const std::map<std::string, std::string>& mrn_by_task,
                                                               uint64_t seed = 2);

}  // namespace nf
