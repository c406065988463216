// Instability floor and majority-vote floor (seed 000 §III.B, §IV.A, §D).
//
// The floor of a cell (subject x config x condition x outcome) is the share of
// replicate pairs of the same item that disagree, over every unordered pair of
// replicates of every item: sum_i discordant_i / sum_i C(n_i, 2), where n_i counts the
// item's ok draws (parse errors and API errors are not outcomes and are left out).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/store.h"
#include "util/status.h"

namespace nf {

/// Bootstrap settings for analyses (study `bootstrap:`).
struct BootstrapOptions {
  int resamples = 2000;
  uint64_t seed = 1;
  double level = 0.95;
};

/// Outcomes of a task that are functions of another outcome of the same draw: derived ->
/// source (core/task_kinds.h TaskKind::derived_outcomes; mcq: correct -> choice). The
/// pooled floor row leaves a derived outcome out of its sums whenever its source outcome
/// is present in the same cell (pooling both would count every replicate pair twice, and
/// average a rate with a subset of itself); its own per-outcome row is kept. Empty (the
/// default, and an imported store) = every outcome is independent.
using DerivedOutcomes = std::map<std::string, std::string>;

/// One row of analyses.floor.rows / analyses.majority_floor.rows (docs/results.md).
struct FloorRow {
  std::string subject, config, condition, outcome;  // outcome "pooled" for the pooled row
  int vote_size = 1;                                 // R' for the majority floor; 1 = plain floor
  int64_t discordant = 0;
  int64_t comparisons = 0;
  double rate = 0.0;           // discordant / comparisons (NaN when comparisons == 0)
  double ci_low = 0.0;         // item-cluster studentized bootstrap interval (stats/cluster_interval.h);
  double ci_high = 0.0;        //   equal to the rate when `degenerate`
  double percentile_low = 0.0; // the percentile interval of the same resamples (under-covers below ~20
  double percentile_high = 0.0;//   clusters; kept for comparison)
  bool degenerate = false;     // every resample gave the same value (0/n, n/n): show the Wilson bound
  std::string ci_method;       // "studentized cluster bootstrap" | "degenerate (all resamples equal)"
  double wilson_low = 0.0;     // Wilson interval treating comparisons as independent
  double wilson_high = 0.0;    //   (too narrow: pairs share draws; shown for reference)
  int64_t items = 0;           // items with at least two replicates (or two vote sets)
  int64_t unanimous_cells = 0; // item x outcome cells whose replicates all agree (seed 000 §IV.A)
  int64_t clusters = 0;
  int64_t items_observed = 0;  // items with at least one valid (ok) draw in the cell
  int64_t valid_draws = 0;     // ok draws of those items (for the pooled row: item x outcome draws)
  // Majority-vote floor (vote_size > 1) only: every unordered pair of disjoint R'-subsets of
  // the items with at least 2R' replicates, and how many of them were left out because one
  // side's vote was a tie (possible_comparisons = comparisons + tie_excluded).
  int64_t possible_comparisons = 0;
  int64_t tie_excluded = 0;
  // Pooled row only: the outcomes summed, and the derived outcomes left out (DerivedOutcomes).
  std::vector<std::string> pooled_over;
  std::vector<std::string> derived_excluded;
};

/// Discordant pairs among `values` (one per replicate): C(n,2) - sum_k C(n_k,2).
/// Values are compared exactly (categorical). Returns {discordant, comparisons}.
std::pair<int64_t, int64_t> pair_disagreement(const std::vector<double>& values);

/// Majority-vote floor counts for one item (seed 000 §D): every unordered pair of
/// disjoint `vote_size`-subsets of the item's replicates; each subset's vote is the
/// value with the unique largest count (for binary outcomes and odd vote sizes the
/// strict majority); a tie is undetermined and the pair is excluded. Returns
/// {discordant, comparisons}. Errors: InvalidArgument if vote_size < 1;
/// FailedPrecondition if exact enumeration would exceed 5e7 subset pairs
/// (C(n, R')^2 / 2; n <= 20 replicates is always fine for R' <= 5).
Result<std::pair<int64_t, int64_t>> majority_vote_disagreement(const std::vector<double>& values, int vote_size);

/// The floor per subject x config x condition x outcome, plus a "pooled" row per
/// subject x config x condition (sums over the independent outcomes: `derived` ones are
/// left out while their source is in the cell; its bootstrap resamples clusters with all
/// their pooled outcomes). `rows` must be the store's ok outcome rows.
/// vote_size 1 = the plain floor; > 1 = the majority-vote floor for R' = vote_size.
/// Errors: from the bootstrap (InvalidArgument) or majority_vote_disagreement.
Result<std::vector<FloorRow>> compute_floor(const std::vector<OutcomeRow>& rows, int vote_size,
                                            const BootstrapOptions& boot, const DerivedOutcomes& derived = {});

/// Whether the pooled row of a cell whose outcomes are `cell_outcomes` sums `outcome`:
/// false only for a derived outcome whose source is in the cell.
bool pools_outcome(const std::string& outcome, const std::set<std::string>& cell_outcomes,
                   const DerivedOutcomes& derived);

/// Unordered pairs of disjoint `vote_size`-subsets of n replicates: C(n, R') C(n - R', R') / 2
/// (0 when 2R' > n); what majority_vote_disagreement compares before ties are left out.
/// Requires n <= 62 (the callers' enumeration guard).
int64_t majority_vote_pairs(int n, int vote_size);

/// Fills the rate, Wilson interval, studentized cluster interval (with its percentile
/// twin and degenerate flag) and cluster count of `fr` from its discordant/comparisons and
/// the per-cluster sums `num`, `den` (clusters in name order). NaN everywhere when
/// comparisons == 0. Shared by compute_floor and compute_floor_frame so both give identical
/// rows. Errors: from stats::wilson or stats::cluster_ratio_interval (InvalidArgument).
Status finish_floor_row(FloorRow& fr, const std::vector<double>& num, const std::vector<double>& den,
                        const BootstrapOptions& boot);

/// finish_floor_row for many rows at once (rows[k] with nums[k], dens[k]): rows with the
/// same cluster count are resampled together from one set of cluster draws
/// (stats::cluster_ratio_intervals), so every row is identical to its own finish_floor_row
/// at a fraction of the random draws; `threads` (>= 1) changes speed only (issue 14).
/// Errors: as finish_floor_row; InvalidArgument if the three lists differ in length.
Status finish_floor_rows(const std::vector<FloorRow*>& rows, const std::vector<std::vector<double>>& nums,
                         const std::vector<std::vector<double>>& dens, const BootstrapOptions& boot, int threads);

nlohmann::json floor_row_to_json(const FloorRow& row);

}  // namespace nf
