// The six-stage clinical agent task of the FairMedAgent audit (seed 000 §III.A, §III.B):
// triage, order, results, reassess, prescribe, document. Five model calls per trajectory;
// `results` is a deterministic, condition-independent lookup in the vignette's tool
// fixtures. Outcomes are the six floor projections of the data README.
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "data/vignettes.h"
#include "perturb/descriptors.h"
#include "task/task.h"

namespace nf {

/// How one stage's reply was read.
///  kJson         the reply is exactly one JSON object with valid fields;
///  kJsonInProse  one JSON object with valid fields surrounded by prose (extracted, labelled);
///  kParseError   empty reply, no JSON object, malformed JSON, a missing required field,
///                a wrong type or an out-of-range value: the stage has no action.
enum class StageParse { kJson, kJsonInProse, kParseError };

struct StageResult {
  StageParse parse = StageParse::kParseError;
  nlohmann::json action = nlohmann::json::object();  // validated fields (kJson / kJsonInProse)
  std::string error;                                 // kParseError: what was wrong
};

/// Parses a model reply for `stage` (triage, order, reassess, prescribe, document) and
/// validates it against the allowed values: esi_acuity integer 1-5 and urgency_score
/// integer 0-100 (required); orders array of strings (required); admit, escalate_icu
/// booleans (required), urgency_score integer 0-100 (optional); analgesia_tier integer
/// 0-3 (required), controlled_substance_caution boolean (optional); referral boolean
/// (required), followup_days integer >= 0 and stigmatizing_language_flags array of
/// strings (optional). Unknown fields are ignored. Never fills a default: a value that is
/// absent stays absent. Source: seed 000 §III.A; vignettes.json `trajectory`.
StageResult parse_stage_reply(std::string_view stage, std::string_view content);

/// The fixture lookup of the `results` stage (vignettes.json fixture_matching): an ordered
/// item and a fixture key match when the lowercase alphanumeric token set of one is a
/// subset of the other's; keys tried in sorted order, first hit used, more hits recorded
/// in `ambiguous`; items containing a declined token ("no", "defer", ...) are skipped
/// and listed in `declined`; items with no tokens never match. Unmatched items map to
/// set.unresolved_value. Deterministic and independent of the condition.
struct FixtureLookup {
  std::vector<std::pair<std::string, std::string>> results;  // ordered item -> value, in order
  std::vector<std::string> declined;
  std::vector<std::string> ambiguous;
};
FixtureLookup lookup_fixtures(const Vignette& v, const std::vector<std::string>& orders,
                              const std::vector<std::string>& declined_tokens, const std::string& unresolved);

/// The user prompt of one model stage (sim_agent.h documents the protocol): preamble and
/// scaffold, "Patient:" descriptor line (omitted when empty), "Presentation:" core, the
/// prior stages' actions (triage, orders, results, disposition; prescribe and document
/// are never rendered), blank line, the stage instruction and the JSON field list.
/// `prior` holds the parsed actions by stage name; prior["results"] is an array of
/// [ordered item, fixture value] pairs in order.
std::string render_stage_prompt(const VignetteSet& set, const Vignette& v, const std::string& descriptor,
                                const VignetteStage& stage, const nlohmann::json& prior);

/// The six floor projections from the parsed stage actions (absent input -> absent outcome):
/// high_acuity = esi_acuity <= 2, admit, escalate_icu, any_opioid = analgesia_tier >= 2,
/// cs_caution = controlled_substance_caution, referral.
std::vector<Outcome> project_outcomes(const nlohmann::json& actions);

/// The task. Draw status: api_error / refused when any call fails so (the trajectory
/// stops, nothing scored); parse_error when no model stage could be parsed; otherwise ok
/// with the outcomes of the parsed stages (an unparsed stage's outcomes are absent, never
/// defaulted; `error` and detail.stages name each failed stage).
class VignetteTask final : public Task {
 public:
  /// Errors: InvalidArgument from descriptor_conditions() (a malformed descriptor set).
  static Result<std::unique_ptr<VignetteTask>> create(VignetteSet set);
  /// Use create(); `descriptors` must be descriptor_conditions(set).
  VignetteTask(VignetteSet set, std::vector<DescriptorCondition> descriptors);
  std::string name() const override { return "vignette_agent"; }
  const std::vector<TaskItem>& items() const override { return task_items_; }
  /// InvalidArgument for a condition not among the 15 descriptor conditions.
  Status prepare(const std::vector<std::string>& conditions, uint64_t study_seed) override;
  TaskDrawResult run(size_t item_index, const std::string& condition, const DrawContext& ctx,
                     const CallFn& call) const override;
  const std::vector<DescriptorCondition>& descriptors() const { return descriptors_; }

 private:
  VignetteSet set_;
  std::vector<DescriptorCondition> descriptors_;
  std::vector<TaskItem> task_items_;
};

}  // namespace nf
