// Task `fhir_agent` (seed 002 §3-§5, App. B): the original MedAgentBench scaffold
// protocol, in our own words. The agent gets the function list (funcs_v1.json, with the
// FHIR base URL filled in), the task's context and question, and answers one action per
// turn:
//   GET <url>                     a search or read on the FHIR server;
//   POST <url>\n<JSON body>       a write;
//   FINISH([answer, ...])         the end of the run (the list must be JSON).
// Roles stay multi-turn (user prompt, assistant action, user environment answer, ...),
// GET bodies shown to the agent are cut at get_cut_chars characters (6,000; App. B), and
// a run ends after max_rounds agent turns (8) without FINISH.
//
// Feedback (seed 002 §3, §6, R3): `benchmark` answers every POST whose body is JSON as
// accepted and stores nothing (what MedAgentBench does; a non-JSON body is "invalid");
// `record` executes the write on the record server (in the draw's own session) and shows
// the agent the server's status, Location and body. In both modes each write records
// what the record server would have answered (status, Location, OperationOutcome).
//
// Each draw stores (TaskDrawResult::detail) the whole trajectory: per turn the reply, the
// action (method, URL relative to the base with sorted query parameters and _format
// dropped, body), the status and body the agent was shown, and for a write the server's
// answer; then the orders issued, the final answer and the reference verdict
// (task/fhir_grader.h). Outcomes: pass (0/1), orders (count), rejected_writes (count of
// orders the record server answers with >= 400).
// Draw status: ok when the run FINISHes or reaches the round limit; parse_error when a
// reply is in none of the three forms (the trajectory stops; detail.failing_turn names
// it); api_error when a model call fails (detail.failing_turn too). Errors never become
// verdicts.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "data/medagentbench.h"
#include "fhir/chart_fixture.h"
#include "fhir/fhir_server.h"
#include "task/fhir_grader.h"
#include "task/task.h"

namespace nf {

/// The record server a FHIR agent talks to: the embedded one (in process) or an external
/// FHIR base over HTTP.
class FhirEnvironment {
 public:
  virtual ~FhirEnvironment() = default;
  /// The base URL shown to the agent (ends with '/').
  virtual std::string base_url() const = 0;
  /// Executes `req` (target relative to the base) in `session`. Thread-safe. A transport
  /// failure is status 0 with an OperationOutcome naming it.
  virtual FhirResponse call(const FhirRequest& req, const std::string& session) = 0;
  /// What a POST would be answered without executing it; nullopt when the environment
  /// cannot tell without writing (an external server).
  virtual std::optional<FhirResponse> dry_run(const FhirRequest& req, const std::string& session) = 0;
};

/// The embedded record server (fhir/chart_fixture.h build_medagentbench_server).
std::unique_ptr<FhirEnvironment> embedded_fhir_environment(std::unique_ptr<FhirServer> server);
/// An external FHIR server at `base_url` ("http://host:port/path/"), e.g. the
/// benchmark's own HAPI image. Errors: InvalidArgument for a URL that is not http(s).
Result<std::unique_ptr<FhirEnvironment>> external_fhir_environment(const std::string& base_url);

/// A parsed agent reply.
struct FhirAction {
  enum class Kind { kGet, kPost, kFinish, kInvalid } kind = Kind::kInvalid;
  std::string url;            // GET / POST: as written
  std::string body_text;      // POST: the text after the first line
  nlohmann::json body;        // POST: parsed body (discarded/null when not JSON)
  bool body_is_json = false;
  std::string answer_text;    // FINISH: the text inside FINISH( ... )
  nlohmann::json answer;      // FINISH: parsed list, null when not a JSON list
  std::string error;          // kInvalid: why
};

/// Reads one reply: surrounding whitespace and ``` fences are dropped; the reply must
/// start with "GET ", "POST " or "FINISH(" (the last ')' closes it). Anything else is
/// kInvalid with a reason.
FhirAction parse_fhir_action(const std::string& reply);

/// `url` relative to `base` with the query parameters sorted and `_format`/`_pretty`
/// dropped: "Observation?code=K&patient=S1". "" is the base itself; a URL not under the
/// base comes back as "!" + url.
std::string canonical_fhir_target(const std::string& url, const std::string& base);

/// The first user message for `task` (see the header comment).
std::string render_fhir_prompt(const MedAgentTask& task, const nlohmann::json& funcs, const std::string& base_url);

struct FhirAgentOptions {
  std::string feedback = "benchmark";  // "benchmark" | "record"
  int get_cut_chars = 6000;            // >= 100
  int max_rounds = 8;                  // 1..64
};

class FhirAgentTask final : public Task {
 public:
  /// `facts` by task id must cover every task (InvalidArgument otherwise).
  static Result<std::unique_ptr<FhirAgentTask>> create(std::vector<MedAgentTask> tasks, std::vector<ChartFact> facts,
                                                       nlohmann::json funcs, std::shared_ptr<FhirEnvironment> env,
                                                       FhirAgentOptions options);
  std::string name() const override { return "fhir_agent"; }
  const std::vector<TaskItem>& items() const override { return items_; }
  /// Only condition "none" exists.
  Status prepare(const std::vector<std::string>& conditions, uint64_t study_seed) override;
  TaskDrawResult run(size_t item_index, const std::string& condition, const DrawContext& ctx,
                     const CallFn& call) const override;

 private:
  FhirAgentTask() = default;
  std::vector<MedAgentTask> tasks_;
  std::map<std::string, ChartFact> facts_;
  nlohmann::json funcs_;
  std::shared_ptr<FhirEnvironment> env_;
  FhirAgentOptions options_;
  std::vector<TaskItem> items_;
};

}  // namespace nf
