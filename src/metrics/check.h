// CI gates over results.json (`noisefloor check`): rules a result must satisfy, and which
// cells break them. Exit code 1 of the CLI is reserved for a failed rule (util/exit_code.h).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/status.h"

namespace nf {

/// One rule. `kind` is one of
///   flip_rate_clears_floor            analyses.fairness: every selected flip row's flip rate
///                                     (use: point, or its lower CI bound with use: lower) is
///                                     above the upper CI bound of its action's floor;
///   accuracy_difference_clears_floor  analyses.paired_subjects: every selected pair's |mean_a
///                                     - mean_b| is above the larger upper CI bound of the two
///                                     subjects' floors (analyses.floor, same cell and outcome);
///   max_pooled_floor                  analyses.floor pooled rows: rate (use: upper -> ci_high)
///                                     <= limit;
///   max_parse_error_rate              draws rows: parse_error_rate <= limit (old name
///                                     max_parse_rate accepted);
///   min_clusters                      every interval's cluster count >= limit (floor rows'
///                                     clusters, fairness rows' vignettes, paired_subjects
///                                     rows' items).
/// Selectors (all optional, exact match): subject, config, condition, outcome (action for
/// flips), a, b (paired_subjects); flip rows of control arms are skipped unless
/// include_controls is true.
struct CheckRule {
  std::string kind;
  double limit = 0.0;  // the threshold of max_* / min_* rules
  std::string use = "point";
  nlohmann::json select = nlohmann::json::object();
  bool include_controls = false;
  std::string origin;  // "rules.yaml:4" or "--max-parse-rate", for messages
  std::string describe() const;  // "max_parse_rate <= 0.02 (rules.yaml:4)"
};

/// One cell a rule looked at.
struct CheckFinding {
  size_t rule = 0;   // index into the rules
  std::string cell;  // "subject=m config=default condition=t outcome=match"
  bool passed = true;
  std::string detail;  // "flip rate 0.05 <= floor upper bound 0.081"
};

struct CheckReport {
  std::vector<CheckFinding> findings;
  size_t failed() const;
};

/// Reads rules from YAML text `rules: [{rule: KIND, max|min: X, use: ..., <selectors>}]`
/// (a bare list is accepted too). Errors: InvalidArgument "origin:line: key: problem" for
/// an unknown rule (with a suggestion), an unknown key, a missing or non-numeric limit, a
/// negative limit, an unknown `use`, or no rules at all.
Result<std::vector<CheckRule>> parse_check_rules(const std::string& yaml_text, const std::string& origin);

/// The analyses the rules read ("fairness", "paired_subjects", "floor").
std::vector<std::string> analyses_needed(const std::vector<CheckRule>& rules);

/// Evaluates every rule on `results` (docs/results.md). Errors: InvalidArgument when a
/// rule matches no cell (e.g. no fairness analysis in the results, or a selector naming
/// nothing): a gate that checks nothing is a configuration error, not a pass.
Result<CheckReport> evaluate_checks(const nlohmann::json& results, const std::vector<CheckRule>& rules);

}  // namespace nf
