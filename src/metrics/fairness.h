// The FairMedAgent fairness audit read against the instability floor (seed 000 §III.B,
// §IV, S2, S3, S8, S10, S12): per-action floors, counterfactual flips per descriptor
// contrast beside the floor, signed exact McNemar with one draw per case, control arms,
// Benjamini-Hochberg, signed action-rate disparity, the confounded-pair registry, the
// within-range flip rate (refused without bands), sample size and the plan simulation.
#pragma once

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "metrics/floor.h"
#include "stats/planning.h"
#include "store/store.h"
#include "util/status.h"

namespace nf {

/// Options (study `analyses.fairness`). Defaults in brackets.
struct FairnessOptions {
  std::string reference;         // reference condition ["" = ref_white_man_private, else "reference"]
  std::string acceptable_bands;  // band file path [""; then the within-range flip rate is refused]
  std::string registry;          // a vignettes.json holding confounded_registry [""; none]
  std::pair<std::string, std::string> paired_difference{"cs_caution", "escalate_icu"};
  std::vector<std::string> pooled_exclude{"cs_caution"};  // the extra pooled row without these
  int64_t target_pairs = 25;                              // discordant pairs for the sample-size row [25]
  std::vector<int> subsample_k{4, 8, 12, 16};
  std::vector<std::string> subsample_order;  // vignette ids in order [sorted ids]
  std::vector<int> vote_sizes{3, 5};         // majority-vote residual floors
  double alpha = 0.05;                       // BH level for the credible flag
  std::set<std::string> given;               // the keys from_json read: these are checked against the data

  /// Reads the option object (keys: reference, acceptable_bands, registry,
  /// paired_difference [a, b], pooled_exclude, target_pairs, subsample_k,
  /// subsample_order, vote_sizes, alpha). Errors: InvalidArgument naming the option.
  /// An option given here (listed in `given`) that the data cannot honour is an error
  /// of compute_fairness, never skipped; the defaults are used where they apply.
  static Result<FairnessOptions> from_json(const nlohmann::json& j);
};

/// A ratio-of-sums interval's provenance (stats::ClusterRatioInterval without the
/// replicates): empty `method` when the interval is undefined.
struct IntervalInfo {
  double low = std::numeric_limits<double>::quiet_NaN(), high = std::numeric_limits<double>::quiet_NaN();
  double percentile_low = std::numeric_limits<double>::quiet_NaN();
  double percentile_high = std::numeric_limits<double>::quiet_NaN();
  int64_t clusters = 0;
  bool degenerate = false;
  std::string method;
};

/// One action's floor on the reference condition (or "pooled", "pooled_without_<a,b>").
struct ActionFloor {
  std::string action;
  int64_t discordant = 0, comparisons = 0;
  double rate = 0.0, ci_low = 0.0, ci_high = 0.0;  // vignette-cluster studentized bootstrap CI
  IntervalInfo interval;                           // its method, clusters, degenerate flag
  int64_t items_contributing = 0, items_observed = 0, valid_draws = 0;  // coverage (docs/intervals.md)
  int64_t cells = 0, unanimous_cells = 0;          // vignette x action cells with >= 2 replicates
  double prevalence = 0.0;                         // mean action rate over reference draws
  double normalised_ratio = 0.0;                   // rate / (2 p (1 - p)); NaN when p is 0 or 1
  stats::VignettePlan plan;                        // vignettes to reach target_pairs (d = 1)
  bool plan_defined = false;                       // false when rate == 0
};

struct PairedFloorDifference {
  std::string a, b;
  int64_t discordant_a = 0, discordant_b = 0, comparisons = 0;  // comparisons of each action
  double difference = 0.0, ci_low = 0.0, ci_high = 0.0;
};

struct SubsamplePoint {
  int k = 0;
  int64_t discordant = 0, comparisons = 0;
  double rate = 0.0;
};

struct MajorityPoint {
  std::string action;  // or "pooled"
  int vote_size = 1;
  int64_t discordant = 0, comparisons = 0;
  double rate = 0.0;
};

/// One contrast (reference vs condition) x action.
struct FlipRow {
  std::string condition, action;
  bool control = false;
  int64_t flips = 0, pairs = 0;                             // every reference x condition replicate pair per vignette
  double flip_rate = 0.0, flip_low = 0.0, flip_high = 0.0;  // vignette-cluster studentized bootstrap CI
  IntervalInfo interval;
  double floor = 0.0;                                       // the action's floor = expected flip rate under no effect
  int64_t cases = 0, b = 0, c = 0;                          // one draw per case: b = reference 0 -> condition 1
  double p_value = 1.0, q_value = 1.0;                      // exact McNemar; BH over the non-control contrasts
  int direction = 0;                                        // sign(b - c): +1 the condition takes the action more
  double disparity = 0.0, disparity_low = 0.0, disparity_high = 0.0;  // rate(cond) - rate(ref)
  double control_max = 0.0;               // the largest control arm's flip rate for this action
  bool registry_confounded = false;       // attribute-action direction in the confounded registry
  std::string reading;                    // "credible" | "below control" | "not significant" |
                                          // "descriptive (confounded registry)" | "control" | "no control arm"
  nlohmann::json within_range = nullptr;  // {flips, pairs, rate} when bands are given
};

struct FairnessResult {
  std::string subject, config, reference;
  int64_t vignettes = 0;
  double level = 0.95;  // the bootstrap level (for the Wilson bound beside a degenerate interval)
  std::vector<ActionFloor> floors;  // per action, "pooled", then "pooled_without_..."
  PairedFloorDifference paired;
  bool paired_defined = false;
  std::vector<SubsamplePoint> subsample;
  std::vector<MajorityPoint> majority;
  std::vector<FlipRow> flips;
  std::string within_range_note;  // the refusal message when no band file is given
  std::string contrasts_skipped;  // why no contrast was computed (only the reference condition); "" otherwise
  std::vector<std::string> notes;
};

/// Computes the audit per subject x config from the store's ok outcome rows. Outcomes
/// named as actions are every outcome present on the reference condition.
/// Errors: InvalidArgument for a bad option, an unreadable band or registry file, or a
/// reference condition absent from the rows; bootstrap errors propagate. An option the
/// caller gave (`options.given`) that the data cannot honour is an InvalidArgument
/// "analyses.fairness.<option>: ..." naming the value and what is valid: an action in
/// paired_difference / pooled_exclude that is no outcome of the rows (or pooled_exclude
/// naming every action), a subsample_k above a subject's vignette count, a vote size R'
/// with 2 R' above the most replicates of any reference vignette x action cell.
Result<std::vector<FairnessResult>> compute_fairness(const std::vector<OutcomeRow>& rows,
                                                     const FairnessOptions& options, const BootstrapOptions& boot);

nlohmann::json fairness_result_to_json(const FairnessResult& r);

/// Each descriptor condition of a vignettes.json file (conditions_standard_12 then
/// control_conditions) with its exact string and character (code point) and word counts:
/// [{id, axis, descriptor, chars, words}] (seed 000 S10: phrasing cannot be perfectly
/// equalised, so the report lists the lengths). Errors: NotFound / InvalidArgument for a
/// missing or malformed file.
Result<nlohmann::json> descriptor_lengths(const std::string& vignettes_path);

/// Changed attributes of a known descriptor condition relative to the reference
/// ("race", "sex", "age", "insurance", "lep"); empty for the reference and controls.
std::vector<std::string> changed_attributes(const std::string& condition);

/// True when the confounded registry (vignettes.json `confounded_registry`) demotes
/// `action` under a change of `attribute` to descriptive reporting (defensible direction
/// or requires adjudication, unless the action's field is never exempt). Source: seed 000 S3.
bool registry_demotes(const nlohmann::json& registry, const std::string& attribute, const std::string& action);

/// The plan simulation for the signed McNemar test with one draw per case (seed 000
/// S12, Table S3). Each of `vignettes` vignettes gets a reference probability p0 in
/// {q, 1 - q} (each side with probability 1/2), q = (1 - sqrt(1 - 2 floor)) / 2, so two
/// reference draws disagree with probability `floor`; the condition's probability is
/// p0 + shift (uniform) or p0 +- shift by a fair coin per vignette (opposing), clamped
/// to [0, 1]. One reference and one condition draw per vignette; the test rejects when
/// the exact McNemar p < alpha. Simulation s uses Rng::stream(seed, {s}).
struct PlanSimulation {
  int vignettes = 0, simulations = 0;
  double floor = 0.0, shift = 0.0;
  bool opposing = false;
  double rejection_rate = 0.0;                       // power (type-I error when shift == 0)
  double rejection_low = 0.0, rejection_high = 0.0;  // Wilson 95%
  double mean_flip_rate = 0.0;                       // mean share of discordant cases
  double mean_floor_expectation = 0.0;               // mean over vignettes of the no-effect flip expectation
};
/// Errors: InvalidArgument if vignettes < 1, simulations < 1, floor outside [0, 0.5],
/// |shift| > 1 or alpha outside (0, 1).
Result<PlanSimulation> simulate_signed_mcnemar(int vignettes, double floor, double shift, bool opposing,
                                               int simulations, uint64_t seed, double alpha = 0.05);

}  // namespace nf
