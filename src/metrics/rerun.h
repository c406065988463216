// Analysis `rerun`: same-input rerun of a clinical agent (seed 002 §4, Table 1, App. A,
// App. B). Per arm (subject x config) over task groups (one task's R runs):
//   order-set divergence       ordering group whose runs emit >= 2 distinct canonical
//                              order sets (endpoint + full payload; the empty set counts);
//   omission split             ordering group with >= 1 emitting and >= 1 silent run;
//   endpoint divergence        ordering group whose emitting runs post to >= 2 distinct
//                              endpoint sets (silent runs excluded);
//   trajectory divergence      any group whose action sequences differ (query parameters
//                              sorted), with the first divergent turn (median over the
//                              divergent groups);
//   verdict instability        any group whose pass/fail verdict changes;
//   clinical-content divergence ordering group whose emitting runs differ in coded
//                              content (resource type, codings, code.text, value[x],
//                              route, dose and rate quantities, subject; not timestamps,
//                              status, intent, priority, notes or display labels);
//   pairwise order-set disagreement  share of within-group run pairs whose order sets
//                              differ, over ordering groups (comparable across R).
// An ordering group is one with at least one order in any run. Plus the App. B
// decomposition of the order-set-divergent groups (with omission / with misrouting /
// payload only), the groups with changing orders but a stable verdict (all pass / all
// fail), and the writes the record server rejects. Rates carry Wilson 95% intervals with
// their denominators; pairwise disagreement a group-cluster bootstrap interval; every
// rate also a family-cluster bootstrap interval that says when it rests on fewer than 5
// clusters or when every resample was equal. Paired exact McNemar between two arms over
// the groups both hold (a non-ordering group counts as not divergent), Holm across all
// the comparisons reported. Only runs that parsed (status ok) enter; the rest are counted.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "metrics/floor.h"
#include "util/status.h"

namespace nf {

struct RerunOrder {
  std::string endpoint;               // relative to the FHIR base; "" = the base URL
  nlohmann::json payload;             // the JSON body as posted
  std::optional<bool> rejected;       // the record server's answer was >= 400 (unknown: nullopt)
};

/// One ok run (draw) of a task under an arm.
struct RerunRun {
  std::string subject, config, item, family;
  int replicate = 0;
  std::vector<RerunOrder> orders;     // in the order posted
  std::vector<std::string> actions;   // canonical action per turn ("GET Observation?code=K&patient=S1")
  bool pass = false;
};

/// Runs that did not parse or failed at the API, per arm ("subject|config").
struct RerunExcluded {
  int64_t parse_error = 0, api_error = 0;
};

struct RerunOptions {
  /// Arm pairs to compare ("subject|config"); empty = every pair of configs within each
  /// subject, in config order.
  std::vector<std::pair<std::string, std::string>> pairs;
  BootstrapOptions bootstrap;
};

/// The canonical text of a JSON value: object keys sorted, every number as a double, so
/// {"value": 1} and {"value": 1.0} compare equal.
std::string canonical_json(const nlohmann::json& j);

/// The clinical-content projection of one order (see the header comment), canonical.
std::string clinical_content(const RerunOrder& o);

/// Per-group indicators (exposed for tests). `runs` are one group's runs.
struct RerunGroup {
  bool ordering = false, order_set_divergent = false, omission_split = false, endpoint_divergent = false,
       trajectory_divergent = false, verdict_unstable = false, clinical_divergent = false;
  std::optional<int> first_divergent_turn;
  int pairs = 0, pairs_differing = 0;
  bool all_pass = false, all_fail = false;
  int orders = 0, rejected = 0;
};
RerunGroup rerun_group(const std::vector<RerunRun>& runs);

/// The analyses.rerun section: {"method", "source", "bootstrap", "arms": [...],
/// "comparisons": [...], "warnings": [...]} (docs/fhir-rerun.md "Results"). Pure.
/// Errors: InvalidArgument for a pair naming an arm with no runs.
Result<nlohmann::json> rerun_analysis(const std::vector<RerunRun>& runs,
                                      const std::map<std::string, RerunExcluded>& excluded, const RerunOptions& options);

/// Parses the analysis options {"arms": [["subj|cfg", "subj|cfg"], ...]}. Errors:
/// InvalidArgument naming rerun.arms.
Result<RerunOptions> rerun_options_from_json(const nlohmann::json& j, const BootstrapOptions& bootstrap);

/// One run from the detail a fhir_agent draw stores (task/fhir_agent_task.h): family,
/// verdict (pass), orders (endpoint, payload, rejected) and the canonical action per turn
/// ("GET <url>", "POST <url> <canonical body>", "FINISH <canonical answer> <text>",
/// "INVALID"). subject/config/item/replicate are left for the caller.
RerunRun rerun_run_from_detail(const nlohmann::json& detail);

class Store;

/// Reads the rerun runs of a fhir_agent store: every ok draw with a `pass` outcome whose
/// stored detail is a FHIR agent's (a `trajectory` and an `orders` array; any other draw
/// is left out, so a store without FHIR agent draws gives no runs) (cached draws only
/// when `include_cached`), its orders, canonical actions and verdict
/// from the stored trajectory (task/fhir_agent_task.h), and the parse_error / api_error
/// counts per arm (every arm of a fhir_agent study; in any other store only the arms
/// with runs). Errors: the store's.
Result<std::pair<std::vector<RerunRun>, std::map<std::string, RerunExcluded>>> read_rerun_runs(Store& store,
                                                                                                 bool include_cached);

}  // namespace nf
