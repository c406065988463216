// The instability floor and majority-vote floor from integer-coded outcomes (issue 14):
// the same FloorRow values as compute_floor (metrics/floor.h), computed from
// per-(cell, outcome, item) category counts instead of per-row strings. Memory is bounded
// by the number of groups (item x outcome x cell) and their distinct values, not by rows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "metrics/floor.h"
#include "store/store.h"
#include "util/status.h"

namespace nf {

/// Majority-vote floor counts for one item from its category counts (how many
/// replicates gave each distinct value; zero counts allowed): every unordered pair of
/// disjoint `vote_size`-subsets of the replicates, each subset voting its unique modal
/// category (a tie is undetermined and the pair excluded). Counted exactly in closed form
/// (sum over the subsets' category compositions of products of binomials) rather than by
/// enumerating subsets, so the cost depends on the categories, not on C(n, R'). Returns
/// {discordant, comparisons}, equal to majority_vote_disagreement on the expanded values.
/// Requires 1 <= vote_size and sum(counts) <= 62 (the caller checks, as
/// majority_vote_disagreement does). Source: seed 000 §D.
std::pair<int64_t, int64_t> majority_vote_disagreement_counts(const std::vector<int>& counts, int vote_size);

/// The ok outcomes aggregated once for the floors (issue 14): per (cell, outcome, item)
/// category counts and cluster, sorted into name order, plus each cell's distinct ok draws.
/// Memory is bounded by those groups, not by rows; the plain and every majority floor
/// (and max_item_replicates) are computed from one instance without reading the store again.
class FloorInput {
 public:
  struct Impl;
  FloorInput();
  explicit FloorInput(std::unique_ptr<Impl> impl);
  FloorInput(FloorInput&&) noexcept;
  FloorInput& operator=(FloorInput&&) noexcept;
  ~FloorInput();
  /// The most ok replicates any item has for one outcome in one cell (what majority_floor
  /// warns about); 0 when there are no outcomes.
  int max_item_replicates() const;
  /// Number of (cell, outcome, item) groups held.
  size_t groups() const;

 private:
  friend Result<std::vector<FloorRow>> compute_floor_frame(const FloorInput&, int, const BootstrapOptions&,
                                                           const DerivedOutcomes&);
  friend std::vector<Result<std::vector<FloorRow>>> compute_floor_frames(const FloorInput&, const std::vector<int>&,
                                                                        const BootstrapOptions&,
                                                                        const DerivedOutcomes&);
  std::unique_ptr<Impl> impl_;
};

/// Aggregates the store's ok outcomes (cached draws left out unless `include_cached`) in one
/// streaming scan (Store::scan_outcome_codes). Errors: the store's read errors.
Result<FloorInput> read_floor_input(Store& store, bool include_cached);

/// store.status_counts_and_answers(answer_fn) and read_floor_input(store, include_cached)
/// from one read of the store (status_counts_answers_and_outcome_codes in
/// store/combined_scan.h; analyze needs both, issue 14): returns the counts (or their read
/// error); the aggregation goes to *input, or, when only the outcome scan failed, its error
/// to *input_status (input left empty).
Result<std::vector<StatusCount>> read_status_and_floor_input(
    Store& store, bool include_cached,
    const std::function<void(std::string_view subject, std::string_view config, std::string_view status,
                             std::string_view content)>& answer_fn,
    std::optional<FloorInput>* input, Status* input_status);

/// The same aggregation from an in-memory frame (any row order).
FloorInput floor_input_of(const OutcomeFrame& frame);

/// compute_floor(rows, vote_size, boot, derived) for the outcomes `input` holds: identical FloorRow
/// values (rows in the same order, same bootstrap: clusters in name order, same seed; rows
/// with equal cluster counts share one set of resamples, stats::cluster_ratio_intervals,
/// over the machine's cores) and the same errors (FailedPrecondition "item X:
/// majority_floor: ..." when exact enumeration would be too large).
Result<std::vector<FloorRow>> compute_floor_frame(const FloorInput& input, int vote_size,
                                                  const BootstrapOptions& boot, const DerivedOutcomes& derived = {});

/// compute_floor_frame(input, v, boot) for each v in `vote_sizes` (element k: vote_sizes[k]'s
/// rows or its error), with the intervals of every vote size's rows from one batch of
/// resamples (rows with equal cluster counts share their cluster draws,
/// stats::cluster_ratio_intervals): the same FloorRow values as separate calls, for a
/// fraction of the random draws when floor and majority_floor run together (issue 14).
std::vector<Result<std::vector<FloorRow>>> compute_floor_frames(const FloorInput& input,
                                                                 const std::vector<int>& vote_sizes,
                                                                 const BootstrapOptions& boot,
                                                                 const DerivedOutcomes& derived = {});

/// compute_floor(rows, vote_size, boot) for the rows `frame` holds (any row order):
/// identical FloorRow values (rows in the same order, same bootstrap: clusters in name
/// order, same seed), and the same errors (FailedPrecondition "item X: majority_floor:
/// ..." when exact enumeration would be too large).
Result<std::vector<FloorRow>> compute_floor_frame(const OutcomeFrame& frame, int vote_size,
                                                  const BootstrapOptions& boot);

/// The same, streaming the store's ok outcomes (Store::scan_outcome_codes) straight into
/// the per-group counts: compute_floor(store.outcome_rows(include_cached), ...) without
/// materialising the rows. Errors: the store's read errors, and compute_floor's.
Result<std::vector<FloorRow>> compute_floor_frame(Store& store, bool include_cached, int vote_size,
                                                  const BootstrapOptions& boot);

/// The most ok replicates any item has for one outcome in one cell (what
/// majority_floor warns about), from the store's coded outcomes.
Result<int> max_item_replicates(Store& store, bool include_cached);

}  // namespace nf
