// Configuration envelope and rank-flip audit (seed 003 §4, App. D, F, V): is "A beats B"
// a property of the models or of the harness? Over per-(subject, configuration) cell
// scores it reports score dispersion (range, SDI, CFR_theta), pairwise reversal counts
// with the strict-reversal certificate (rho_flip = 0), induced orderings (tau_R,
// total-order mismatch, reachable orderings), a Type-II variance partition, a
// configuration bootstrap and a parse-clean rerun. Layer 5.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/store.h"
#include "util/status.h"

namespace nf {

struct AnalysisContext;

/// One cell of the envelope: one subject under one configuration.
struct EnvelopeCell {
  std::string subject;
  std::string config;  // "axis=value,axis=value" (study config ids) or any opaque name
  double score = 0.0;  // mean of the outcome over the cell's values, in the outcome's units
  int64_t n = 0;       // values averaged
  /// Share of answered draws (not api_error) that parsed; nullopt = unknown.
  std::optional<double> parse_rate;
};

/// Options of the envelope analysis (`analyze --analysis envelope=JSON`, or the study's
/// `analyses: envelope:` map; the JSON keys are the member names).
struct EnvelopeOptions {
  std::string outcome;                      // "" = the only outcome, else "correct" if present
  std::string condition;                    // "" = every condition (several become an axis)
  std::vector<double> thresholds{0.5, 0.7};  // CFR_theta pass thresholds (pass = score >= theta)
  double sdi_min_mean = 0.05;               // |mean| below this: SDI flagged unstable
  double parse_clean = 0.95;                // parse-clean rerun: every subject parses >= this
  int resamples = 1000;                     // configuration bootstrap resamples (0 = none)
  uint64_t seed = 1;                        // bootstrap seed
  double level = 0.95;                      // bootstrap percentile level
  std::vector<std::string> axes;            // ANOVA axes (default: every axis with > 1 level)
  std::string scoring_axis = "scoring_path";  // ANOVA keeps only cells where this axis ...
  std::string free_form = "free_form";        // ... has this value (when the axis exists)
  /// An outcome whose cell mean is the parse rate (e.g. `parsed` of scripts/bbq-to-long),
  /// for imported stores whose draws are all "ok"; "" = parse rates from draw statuses.
  std::string parse_outcome;
  /// Scoring paths as an axis: path name -> outcome (e.g. {"free_form": "correct",
  /// "logprob": "correct_logprob"}); each path's cells get ",scoring_path=NAME" appended to
  /// their configuration id. Empty = one outcome (`outcome`).
  std::map<std::string, std::string> scoring_paths;
  /// Axes whose values are pooled into one configuration before the cells are formed, e.g.
  /// ["seed"]: "diverse" decoding = several seeds averaged (seed 003 §3).
  std::vector<std::string> pool_axes;
  /// Scoring paths over stored completions (metrics/rescore.h; docs/xstest-chat.md):
  /// "strmatch", "judge_panel", "judge:NAME". Non-empty: the cells are the stored ok
  /// completions scored by each scorer (not stored outcomes), the scorer the axis `scorer`,
  /// and results gain `scorers` (compliance per stratum, scorer disagreement).
  std::vector<std::string> scorers;
  /// With `scorers`: the items kept for the cells, {meta field: value} (e.g. {"label":
  /// "safe"}); the field's other values are reported in `scorers.compliance`. Empty = all.
  std::map<std::string, std::string> stratum;

  /// Reads the options; InvalidArgument "envelope.KEY: problem" for an unknown key, a
  /// wrong type, a threshold outside [0, 1], a level outside (0, 1) or resamples < 0.
  static Result<EnvelopeOptions> from_json(const nlohmann::json& j);
};

/// Splits a configuration id "temperature=0.7,template=direct" into axis -> value. An id
/// without '=' (e.g. "default" or an imported scorer name) is the single axis "config".
/// InvalidArgument for an empty part, an empty axis name or a repeated axis.
Result<std::map<std::string, std::string>> config_axes(const std::string& config);

/// Envelope cells from outcome rows: the mean of `outcome` per (subject, config[,
/// condition]) over its items and replicates, with the parse rate from `counts` (share of
/// non-api_error draws whose status is not parse_error; nullopt when the store has no
/// draw counts for the cell). Rows of another condition than `condition` ("" = all) are
/// left out; when the kept rows span several conditions, the condition joins the
/// configuration id as the axis `condition`. Errors: InvalidArgument when `outcome` is
/// absent from the rows (naming the outcomes present) or no row is left.
Result<std::vector<EnvelopeCell>> envelope_cells(const std::vector<OutcomeRow>& rows,
                                                 const std::vector<StatusCount>& counts,
                                                 const std::string& outcome, const std::string& condition);

/// The envelope analysis over `cells` (each (subject, config) at most once), as the
/// results.json section documented in docs/envelope.md:
///  - subjects: per subject its cells, range = max - min, SDI = (max - min) / mean (null
///    and `sdi_unstable` when |mean| < sdi_min_mean), CFR_theta = share of its unordered
///    configuration pairs whose pass/fail verdicts (score >= theta) differ;
///  - pairs (a < b by name) over their shared configurations C: n_plus (a > b), n_minus,
///    n_ties (exact equality), rho_flip = min(n+, n-) / |C| (ties stay in |C|),
///    strict_share = min(n+, n-) / (n+ + n-), the certificate rho_flip == 0 (no strict
///    reversal on this grid; not total-order identifiability), the majority and the
///    configurations on the minority side;
///  - rankings over the configurations where every subject has a score: the ordering per
///    configuration with ties ("a > b = c") and its total order (ties broken
///    alphabetically), tau_R = mean Kendall tau-b over configuration pairs (pairs where a
///    configuration ties every subject are undefined and left out; with two subjects tau
///    is the product of the two signs), total-order mismatch rate beside its uniform null
///    1 - 1/k!, reachable total orders (of k!) with the configurations reaching each;
///  - variance: Type-II ANOVA (stats/linear_model.h) of score ~ model + axes + two-way
///    interactions on the free-form slice; shares SS_group / (sum of term SS + RSS) for
///    model, implementation (axis main effects), interaction and residual (sum to 1; equal
///    to raw eta^2 in a balanced grid), rho = implementation / model, per-axis Hays
///    omega^2. When the full two-way model leaves no residual degrees of freedom, the
///    axis x axis interactions and then all interactions are dropped (`dropped` says so);
///  - bootstrap: `resamples` resamples of the configurations with replacement (Rng stream
///    (seed, {b})); percentile ranges of every point metric, `all_equal` flagged;
///  - parse_clean: the point metrics again on the configurations where every subject's
///    parse rate is known and >= parse_clean (skipped when no parse rate is known).
/// Errors: InvalidArgument for an empty input, a duplicated cell, a non-finite score or a
/// malformed configuration id. Source: seed 003 §4, §5, App. D, F, V.
Result<nlohmann::json> envelope_analysis(const std::vector<EnvelopeCell>& cells, const EnvelopeOptions& options);

/// The registry runner (metrics/registry.cc): cells from the store's outcome rows and
/// draw counts, then envelope_analysis; `skipped` when the store has fewer than two
/// subjects or configurations.
Result<nlohmann::json> run_envelope(AnalysisContext& ctx, const nlohmann::json& options);

}  // namespace nf
