// The instability floor and majority-vote floor from integer-coded outcomes (issue 14):
// the same FloorRow values as compute_floor (metrics/floor.h), computed from
// per-(cell, outcome, item) category counts instead of per-row strings. Memory is bounded
// by the number of groups (item x outcome x cell) and their distinct values, not by rows.
#pragma once

#include <cstdint>
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
