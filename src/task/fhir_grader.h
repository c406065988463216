// Reference grader for the five MedAgentBench write families (seed 002 §3, App. C),
// written from the task texts and the chart facts (fhir/chart_fixture.h), pass/fail per
// run, as the benchmark's grader decides it:
//   task3  exactly one POST, to [base]Observation: category vital-signs (system
//          http://hl7.org/fhir/observation-category, display "Vital Signs"), code
//          {"text": "BP"}, effectiveDateTime = now, status final, valueString = the quoted
//          measurement of the instruction, subject Patient/MRN.
//   task5  latest magnesium within 24 h before now: none or > 1.9 -> no POST; otherwise
//          exactly one MedicationRequest (NDC 0338-1715-40, authoredOn now, route IV,
//          dose/rate 1 g/1 h for >= 1.5, 2 g/2 h for >= 1, 4 g/4 h below, status active,
//          intent order, subject); and the answer is [value] ([-1] when none) or [].
//   task8  exactly one ServiceRequest (SNOMED code of the context, authoredOn now, status
//          active, intent order, priority stat, note.text containing the quoted free text,
//          subject).
//   task9  latest potassium: none or >= 3.5 -> no POST; otherwise exactly two POSTs: a
//          MedicationRequest (NDC 40032-917-01, route oral, dose (3.5 - K) / 0.1 * 10 mEq
//          within 1e-4, authoredOn now, active, order, subject) then a ServiceRequest
//          (LOINC 2823-3, authoredOn now, active, order, stat, occurrenceDateTime on
//          2023-11-14 at 08h, subject); answer [K] ([-1] when none) or [].
//   task10 latest HbA1C: none, or older than one year before now -> exactly one
//          ServiceRequest (LOINC 4548-4, authoredOn now, active, order, stat, subject);
//          otherwise no POST; answer [value, time] ([-1] when none) or [].
// A run without FINISH fails. POSTs are the orders the agent issued with a JSON body,
// whatever the server answered (the benchmark counts every JSON-loadable POST).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "data/medagentbench.h"
#include "fhir/chart_fixture.h"

namespace nf {

/// One issued order: the endpoint relative to the FHIR base ("ServiceRequest"; "" = the
/// base URL; "!" + URL when the URL was not under the base) and its JSON payload.
struct IssuedOrder {
  std::string endpoint;
  nlohmann::json payload;
};

struct GradeResult {
  bool pass = false;
  std::string reason;  // why it failed ("" when it passed)
};

/// Grades one run of `task` (family task3/5/8/9/10) with the chart facts `fact` (same
/// task). `answer` is the parsed FINISH list (null when the run did not finish or the
/// list was not JSON). Never throws.
GradeResult grade_fhir_run(const MedAgentTask& task, const ChartFact& fact, const std::vector<IssuedOrder>& orders,
                           const nlohmann::json& answer, bool finished);

}  // namespace nf
