// Floors from integer-coded outcomes (see floor_frame.h). Mirrors compute_floor
// (floor.cc) step by step; what differs is only the representation: groups keyed by
// integer codes, each item's replicates kept as category counts, sorted once by the
// strings' ranks so rows, items and clusters come out in compute_floor's (name) order.
#include "metrics/floor_frame.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <map>
#include <memory>
#include <set>
#include <system_error>
#include <thread>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "stats/bootstrap.h"
#include "stats/proportion.h"
#include "store/combined_scan.h"
#include "util/prefault.h"
#include "util/strings.h"

namespace nf {
namespace {

int64_t choose2(int64_t n) { return n * (n - 1) / 2; }

// Exact C(n, k) for n <= 62 (C(62, 31) < 2^63).
const std::array<std::array<int64_t, 63>, 63>& pascal() {
  static const auto table = [] {
    std::array<std::array<int64_t, 63>, 63> t{};
    for (int n = 0; n < 63; ++n) {
      t[n][0] = 1;
      for (int k = 1; k <= n; ++k) t[n][k] = t[n - 1][k - 1] + (k <= n - 1 ? t[n - 1][k] : 0);
    }
    return t;
  }();
  return table;
}

// As floor.cc's binom_coeff (the guard must round the same way).
double binom_coeff(int n, int k) {
  if (k < 0 || k > n) return 0;
  double r = 1;
  for (int i = 1; i <= k; ++i) r = r * (n - k + i) / i;
  return r;
}

/// Calls f(a, ways) for every way to pick r of the replicates by category: a[j] <= cap[j],
/// sum a = r, ways = prod C(cap[j], a[j]).
template <class F>
void for_each_composition(const std::vector<int>& cap, int r, F&& f) {
  const int m = static_cast<int>(cap.size());
  if (m == 0) return;
  const auto& C = pascal();
  std::vector<int> a(m);
  auto rec = [&](auto&& self, int j, int left, int64_t w) -> void {
    if (j == m - 1) {
      if (left <= cap[j]) {
        a[j] = left;
        f(a, w * C[cap[j]][left]);
      }
      return;
    }
    for (int x = 0; x <= std::min(left, cap[j]); ++x) {
      a[j] = x;
      self(self, j + 1, left - x, w * C[cap[j]][x]);
    }
  };
  rec(rec, 0, r, 1);
}

/// The unique modal category of a subset's counts, or -1 on a tie.
int vote_of(const std::vector<int>& a) {
  int best = -1, best_count = -1;
  bool tie = false;
  for (size_t c = 0; c < a.size(); ++c) {
    if (a[c] > best_count) {
      best = static_cast<int>(c);
      best_count = a[c];
      tie = false;
    } else if (a[c] == best_count) {
      tie = true;
    }
  }
  return tie ? -1 : best;
}

/// One cell (subject, config, condition) by its codes.
using CellId = std::array<uint32_t, 3>;

/// One item of one cell and outcome: its cluster and its values as category counts. The
/// first two distinct values are kept inline (binary outcomes need no allocation); an item
/// with more moves all its counts to FloorInput::Impl::spill.
struct Group {
  // (Field order keeps it at 48 bytes: ~10M of them at 100M outcome values.)
  uint32_t series = 0;  // (cell, outcome), an index into FloorInput::Impl::series
  uint32_t item = 0;
  uint32_t cluster = 0;
  int32_t cluster_replicate = -1;  // compute_floor keeps the cluster of the last row (highest replicate)
  int32_t n = 0;
  uint32_t spilled = UINT32_MAX;   // index into spill, or UINT32_MAX while inline
  double value[2] = {0.0, 0.0};    // distinct values (compared exactly) ...
  int32_t count[2] = {0, 0};       // ... and their replicates (0 = slot unused); 48 bytes in all
};

static_assert(sizeof(Group) == 48, "Group grew");

/// The groups, in creation order until FloorInput is finished, in pages of 4,096: growing
/// never copies every group into a twice-as-large block (at 100M outcome values, ~10M
/// groups: a vector's last growth held 0.5 GB and 1 GB at once), and indexing is a shift
/// and a mask into a page table small enough to stay cached (a std::deque's 10-group blocks
/// need a 1M-entry map at that size).
class GroupList {
 public:
  size_t size() const { return size_; }
  Group& operator[](size_t i) { return pages_[i >> kShift].get()[i & kMask]; }
  const Group& operator[](size_t i) const { return pages_[i >> kShift].get()[i & kMask]; }
  void push_back(const Group& g) {
    if ((size_ >> kShift) == pages_.size()) {
      // A page's 192 KiB made present in one call, not a fault per 4 KiB on first touch;
      // each group is constructed when pushed (positions below size() only are read).
      Group* p = static_cast<Group*>(::operator new(kPage * sizeof(Group)));
      prefault_for_write(p, kPage * sizeof(Group));
      pages_.emplace_back(p);
    }
    ::new (static_cast<void*>(&(*this)[size_])) Group(g);
    ++size_;
  }
  /// Forward iteration in index order.
  class const_iterator {
   public:
    const_iterator(const GroupList* l, size_t i) : l_(l), i_(i) {}
    const Group& operator*() const { return (*l_)[i_]; }
    const Group* operator->() const { return &(*l_)[i_]; }
    const_iterator& operator++() {
      ++i_;
      return *this;
    }
    bool operator==(const const_iterator& o) const { return i_ == o.i_; }
    bool operator!=(const const_iterator& o) const { return i_ != o.i_; }

   private:
    const GroupList* l_;
    size_t i_;
  };
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size_}; }

 private:
  static constexpr size_t kShift = 12, kPage = size_t{1} << kShift, kMask = kPage - 1;
  static_assert(std::is_trivially_destructible_v<Group>, "pages are freed without destructors");
  struct PageFree {
    void operator()(Group* p) const { ::operator delete(p); }
  };
  std::vector<std::unique_ptr<Group, PageFree>> pages_;
  size_t size_ = 0;
};

/// Moves groups[i] to position dest[i] for every i (dest a permutation of 0..n-1), in
/// place: each cycle is followed, swapping a group into its place. `dest` is consumed.
void permute_groups(GroupList& groups, std::vector<uint32_t>& dest, size_t first = 0) {
  for (size_t i = 0; i < dest.size(); ++i) {
    while (dest[i] != i) {
      const uint32_t j = dest[i];
      std::swap(groups[first + i], groups[first + j]);
      std::swap(dest[i], dest[j]);
    }
  }
}

/// Open-addressing index from a group's key (series, item) to its position in a GroupList:
/// each slot is the position + 1 (0 = empty), 4 bytes, and the key is read from the group
/// itself (which the caller then updates anyway). At ~10M groups: 128 MB instead of the
/// 400 MB of a table holding 64-bit keys beside 32-bit values.
class GroupIndex {
 public:
  /// The position of the group (series, item), or `value_if_new` (to be pushed at that
  /// position by the caller) when absent; second = inserted.
  std::pair<uint32_t, bool> find_or_insert(uint32_t series, uint32_t item, const GroupList& groups,
                                           uint32_t value_if_new) {
    if (2 * (size_ + 1) > slots_.size()) grow(groups);
    const size_t mask = slots_.size() - 1;
    for (size_t i = hash(series, item) & mask;; i = (i + 1) & mask) {
      const uint32_t slot = slots_[i];
      if (slot == 0) {
        slots_[i] = value_if_new + 1;
        ++size_;
        return {value_if_new, true};
      }
      const Group& g = groups[slot - 1];
      if (g.series == series && g.item == item) return {slot - 1, false};
    }
  }

 private:
  static size_t hash(uint32_t series, uint32_t item) {
    uint64_t k = (static_cast<uint64_t>(series) << 32) | item;
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    return static_cast<size_t>(k);
  }
  void grow(const GroupList& groups) {
    const size_t n = std::max<size_t>(1024, slots_.size() * 2);
    std::vector<uint32_t> slots;
    slots.reserve(n);
    prefault_for_write(slots.data(), n * sizeof(uint32_t));  // one call, not a fault per page
    slots.resize(n, 0);
    const size_t mask = slots.size() - 1;
    for (uint32_t slot : slots_) {
      if (slot == 0) continue;
      const Group& g = groups[slot - 1];
      size_t i = hash(g.series, g.item) & mask;
      while (slots[i] != 0) i = (i + 1) & mask;
      slots[i] = slot;
    }
    slots_.swap(slots);
  }
  std::vector<uint32_t> slots_;
  size_t size_ = 0;
};

}  // namespace

struct FloorInput::Impl {
  OutcomeDictionaries dict;
  /// (subject, config, condition, outcome) codes of each series id.
  std::vector<std::array<uint32_t, 4>> series;
  /// Sorted by (subject, config, condition, outcome, item) names once aggregation ends.
  GroupList groups;
  /// Category counts of the groups with more than two distinct values.
  std::vector<std::vector<std::pair<double, int>>> spill;
  /// Distinct (item, replicate) ok draws per cell: the pooled row's valid_draws.
  std::map<CellId, int64_t> cell_draws;
  int max_replicates = 0;

  /// The group's category counts (replicates per distinct value) into `out`.
  void counts_of(const Group& g, std::vector<int>* out) const {
    out->clear();
    if (g.spilled != UINT32_MAX) {
      for (const auto& vc : spill[g.spilled]) out->push_back(vc.second);
    } else {
      for (int j = 0; j < 2 && g.count[j] > 0; ++j) out->push_back(g.count[j]);
    }
  }
};

namespace {

/// Sorts `groups` by (srank[series], ri[item]) (both ranks distinct per key) with 4 bytes
/// of extra memory per group: a stable counting sort by series rank into a permutation,
/// applied in place, then a comparison sort only of the series whose items did not arrive
/// in rank order (a store's draws are usually item by item, so usually none). The result
/// equals std::sort's with that comparator: the keys are unique.
void sort_groups(GroupList* groups_in, const std::vector<uint32_t>& srank, const std::vector<uint32_t>& ri) {
  GroupList& groups = *groups_in;
  const size_t n_series = srank.size();
  std::vector<size_t> start(n_series + 1, 0);
  for (const Group& g : groups) ++start[srank[g.series] + 1];
  for (size_t s = 0; s < n_series; ++s) start[s + 1] += start[s];
  std::vector<char> ordered(n_series, 1);
  std::vector<uint32_t> last_item_rank(n_series, 0);
  std::vector<uint32_t> dest(groups.size());
  {
    std::vector<size_t> next(start.begin(), start.end() - 1);
    size_t i = 0;
    for (auto it = groups.begin(); it != groups.end(); ++it, ++i) {
      const uint32_t s = srank[it->series];
      const uint32_t r = ri[it->item];
      if (next[s] > start[s] && r < last_item_rank[s]) ordered[s] = 0;
      last_item_rank[s] = r;
      dest[i] = static_cast<uint32_t>(next[s]++);
    }
  }
  permute_groups(groups, dest);
  for (size_t s = 0; s < n_series; ++s) {
    if (ordered[s]) continue;
    // This series' items arrived out of name order: sort its run by item rank.
    const size_t first = start[s], len = start[s + 1] - start[s];
    std::vector<uint32_t> order(len);
    std::iota(order.begin(), order.end(), 0u);
    std::sort(order.begin(), order.end(),
              [&](uint32_t a, uint32_t b) { return ri[groups[first + a].item] < ri[groups[first + b].item]; });
    std::vector<uint32_t> to(len);
    for (uint32_t t = 0; t < len; ++t) to[order[t]] = t;
    permute_groups(groups, to, first);
  }
}

class Aggregator {
 public:
  Aggregator() : in_(std::make_unique<FloorInput::Impl>()) {}
  OutcomeDictionaries& dict() { return in_->dict; }

  void add(const OutcomeCodes& c) {
    const CellId cell{c.subject, c.config, c.condition};
    if (!have_last_ || cell != last_cell_ || c.item != last_item_ || c.replicate != last_replicate_) {
      // A new draw (the store's scan gives a draw's outcomes together); repeats of a draw
      // whose outcomes arrive apart are removed when aggregation ends.
      if (!have_last_ || cell != last_cell_) cell_keys_ = &cell_draws_[cell];
      cell_keys_->push_back((static_cast<uint64_t>(c.item) << 32) | static_cast<uint32_t>(c.replicate));
      have_last_ = true;
      last_cell_ = cell;
      last_item_ = c.item;
      last_replicate_ = c.replicate;
    }
    const uint32_t series = series_of(c);
    // The series' last group first: replicates of an item are usually adjacent.
    if (series >= last_group_.size()) last_group_.resize(series + 1, {kNoItem, 0});
    uint32_t gi;
    auto& last = last_group_[series];
    if (last.first == c.item) {
      gi = last.second;
    } else {
      const uint32_t at = static_cast<uint32_t>(in_->groups.size());
      bool fresh;
      if (!indexed_ && (last.first == kNoItem || c.item > last.first)) {
        // Every series' items have so far come in increasing code order (a store's draws
        // item by item), so the series' last item is its largest and a larger one is new:
        // no index needed (issue 14: the index probe missed the cache once per group).
        gi = at;
        fresh = true;
      } else {
        if (!indexed_) index_groups();
        std::tie(gi, fresh) = index_.find_or_insert(series, c.item, in_->groups, at);
      }
      if (fresh) {
        Group g;
        g.series = series;
        g.item = c.item;
        in_->groups.push_back(g);
      }
      last = {c.item, gi};
    }
    Group& g = in_->groups[gi];
    if (c.replicate >= g.cluster_replicate) {
      g.cluster = c.cluster;
      g.cluster_replicate = c.replicate;
    }
    ++g.n;
    if (g.spilled == UINT32_MAX) {
      for (int j = 0; j < 2; ++j) {
        if (g.count[j] == 0) {
          g.value[j] = c.value;
          g.count[j] = 1;
          return;
        }
        if (g.value[j] == c.value) {
          ++g.count[j];
          return;
        }
      }
      g.spilled = static_cast<uint32_t>(in_->spill.size());
      in_->spill.push_back({{g.value[0], g.count[0]}, {g.value[1], g.count[1]}});
    }
    auto& counts = in_->spill[g.spilled];
    for (auto& [v, k] : counts)
      if (v == c.value) {
        ++k;
        return;
      }
    counts.emplace_back(c.value, 1);
  }

  /// Sorts the groups into name order and drops the lookup structures.
  FloorInput finish() {
    index_ = {};
    series_index_ = {};
    last_group_ = {};
    FloorInput::Impl& in = *in_;
    for (auto& [cell, keys] : cell_draws_) {
      std::sort(keys.begin(), keys.end());
      in.cell_draws[cell] = static_cast<int64_t>(std::unique(keys.begin(), keys.end()) - keys.begin());
      keys = {};
    }
    cell_draws_ = {};
    for (const Group& g : in.groups) in.max_replicates = std::max(in.max_replicates, static_cast<int>(g.n));
    const auto rs = sorted_ranks(in.dict.subjects), rcf = sorted_ranks(in.dict.configs), rcd = sorted_ranks(in.dict.conditions),
               ro = sorted_ranks(in.dict.outcomes), ri = sorted_ranks(in.dict.items);
    std::vector<std::array<uint32_t, 4>> series_rank(in.series.size());
    for (size_t i = 0; i < in.series.size(); ++i) {
      const auto& s = in.series[i];
      series_rank[i] = {rs[s[0]], rcf[s[1]], rcd[s[2]], ro[s[3]]};
    }
    // One rank per series, then sort groups by (series rank, item rank).
    std::vector<uint32_t> order(in.series.size());
    std::iota(order.begin(), order.end(), 0u);
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return series_rank[a] < series_rank[b]; });
    std::vector<uint32_t> srank(in.series.size());
    for (uint32_t r = 0; r < order.size(); ++r) srank[order[r]] = r;
    sort_groups(&in.groups, srank, ri);
    return FloorInput(std::move(in_));
  }

 private:
  uint32_t series_of(const OutcomeCodes& c) {
    // Series ids of the current cell by outcome code (a draw's outcomes are consecutive).
    const CellId cell{c.subject, c.config, c.condition};
    if (cell != series_cell_) {
      series_cell_ = cell;
      series_by_outcome_.clear();
    }
    if (c.outcome < series_by_outcome_.size() && series_by_outcome_[c.outcome] != UINT32_MAX)
      return series_by_outcome_[c.outcome];
    const std::array<uint32_t, 4> key{c.subject, c.config, c.condition, c.outcome};
    auto [it, inserted] = series_index_.try_emplace(key, static_cast<uint32_t>(in_->series.size()));
    if (inserted) in_->series.push_back(key);
    if (c.outcome >= series_by_outcome_.size()) series_by_outcome_.resize(c.outcome + 1, UINT32_MAX);
    series_by_outcome_[c.outcome] = it->second;
    return it->second;
  }

  /// Puts every group so far into the index; from then on every new (series, item) is
  /// looked up there.
  void index_groups() {
    indexed_ = true;
    for (uint32_t i = 0; i < in_->groups.size(); ++i) {
      const Group& g = in_->groups[i];
      index_.find_or_insert(g.series, g.item, in_->groups, i);
    }
  }

  static constexpr uint32_t kNoItem = UINT32_MAX;
  std::unique_ptr<FloorInput::Impl> in_;
  std::map<std::array<uint32_t, 4>, uint32_t> series_index_;
  CellId series_cell_{UINT32_MAX, UINT32_MAX, UINT32_MAX};
  std::vector<uint32_t> series_by_outcome_;
  GroupIndex index_;                                      // (series, item) -> group, once indexed_
  bool indexed_ = false;                                  // false: every series' items so far increasing
  std::vector<std::pair<uint32_t, uint32_t>> last_group_;  // series -> (item, group) last used
  std::map<CellId, std::vector<uint64_t>> cell_draws_;    // (item << 32 | replicate) per new draw
  std::vector<uint64_t>* cell_keys_ = nullptr;
  bool have_last_ = false;
  CellId last_cell_{};
  uint32_t last_item_ = 0;
  int32_t last_replicate_ = 0;
};

/// Per-cluster sums of discordant and comparisons, in cluster-name order on read-out.
class ClusterSums {
 public:
  ClusterSums(size_t n, const std::vector<uint32_t>& rank) : num_(n), den_(n), seen_(n), rank_(rank) {}
  void add(uint32_t cluster, double d, double c) {
    if (!seen_[cluster]) {
      seen_[cluster] = 1;
      touched_.push_back(cluster);
    }
    num_[cluster] += d;
    den_[cluster] += c;
  }
  size_t size() const { return touched_.size(); }
  /// The sums in cluster-name order; resets for the next row.
  void take(std::vector<double>* num, std::vector<double>* den) {
    std::sort(touched_.begin(), touched_.end(), [&](uint32_t a, uint32_t b) { return rank_[a] < rank_[b]; });
    num->clear();
    den->clear();
    for (uint32_t c : touched_) {
      num->push_back(num_[c]);
      den->push_back(den_[c]);
      num_[c] = den_[c] = 0;
      seen_[c] = 0;
    }
    touched_.clear();
  }

 private:
  std::vector<double> num_, den_;
  std::vector<char> seen_;
  std::vector<uint32_t> touched_;
  const std::vector<uint32_t>& rank_;
};

/// Threads for the bootstrap: the machine's cores, at most 8 (the result does not depend on it).
int bootstrap_threads() {
  const unsigned hw = std::thread::hardware_concurrency();
  return static_cast<int>(std::clamp(hw, 1u, 8u));
}

/// One vote size's rows before their intervals, with each row's per-cluster sums (in
/// cluster-name order) for the bootstrap.
struct PendingRows {
  std::vector<FloorRow> rows;
  std::vector<std::vector<double>> nums, dens;
};

/// Per series (cell, outcome): whether the cell's pooled row sums it (pools_outcome).
std::vector<char> pooling_series(const FloorInput::Impl& in, const DerivedOutcomes& derived) {
  std::vector<char> pools(in.series.size(), 1);
  if (derived.empty()) return pools;
  std::map<CellId, std::set<std::string>> cell_outcomes;
  for (const auto& s : in.series) cell_outcomes[{s[0], s[1], s[2]}].insert(in.dict.outcomes[s[3]]);
  for (size_t k = 0; k < in.series.size(); ++k) {
    const auto& s = in.series[k];
    pools[k] = pools_outcome(in.dict.outcomes[s[3]], cell_outcomes[{s[0], s[1], s[2]}], derived) ? 1 : 0;
  }
  return pools;
}

Status pending_rows_of(const FloorInput::Impl& in, int vote_size, const DerivedOutcomes& derived,
                       PendingRows* pending) {
  const std::vector<char> series_pools = pooling_series(in, derived);
  const OutcomeDictionaries& dict = in.dict;
  const auto rcl = sorted_ranks(dict.clusters);
  const auto& groups = in.groups;

  std::vector<FloorRow>& out = pending->rows;
  // The rows' per-cluster sums; every interval is computed at the end, rows with the same
  // cluster count from one set of resamples (finish_floor_rows).
  std::vector<std::vector<double>>& nums = pending->nums;
  std::vector<std::vector<double>>& dens = pending->dens;
  auto finish_row = [&](ClusterSums& clusters) {
    nums.emplace_back();
    dens.emplace_back();
    clusters.take(&nums.back(), &dens.back());
  };
  ClusterSums by_cluster(dict.clusters.size(), rcl), pooled_by_cluster(dict.clusters.size(), rcl);
  std::vector<char> item_seen(dict.items.size()), observed_seen(dict.items.size());
  std::vector<uint32_t> items_touched, observed_touched;
  std::vector<int> counts;
  std::map<std::vector<int>, std::pair<int64_t, int64_t>> majority_memo;  // counts -> {discordant, comparisons}
  auto i = groups.begin();
  const auto end = groups.end();
  while (i != end) {
    const auto& first = in.series[i->series];
    const CellId cell{first[0], first[1], first[2]};
    auto same_cell = [&](const Group& g) {
      const auto& s = in.series[g.series];
      return s[0] == cell[0] && s[1] == cell[1] && s[2] == cell[2];
    };
    FloorRow pooled{dict.subjects[cell[0]], dict.configs[cell[1]], dict.conditions[cell[2]], "pooled", vote_size};
    while (i != end && same_cell(*i)) {
      const uint32_t series = i->series;
      const bool pools = series_pools[series] != 0;
      FloorRow row{pooled.subject, pooled.config, pooled.condition, dict.outcomes[in.series[series][3]], vote_size};
      (pools ? pooled.pooled_over : pooled.derived_excluded).push_back(row.outcome);
      for (; i != end && i->series == series; ++i) {
        const Group& g = *i;
        ++row.items_observed;
        row.valid_draws += g.n;
        if (pools && !observed_seen[g.item]) {
          observed_seen[g.item] = 1;
          observed_touched.push_back(g.item);
        }
        in.counts_of(g, &counts);
        int64_t d = 0, c = 0;
        if (vote_size <= 1) {
          int64_t same = 0;
          for (int k : counts) same += choose2(k);
          c = choose2(g.n);
          d = c - same;
        } else if (2 * vote_size <= g.n) {
          const double subsets = binom_coeff(g.n, vote_size);
          if (g.n > 62 || subsets * subsets / 2 > 5e7)
            return FailedPrecondition(fmt::format("majority_floor: exact enumeration of disjoint {}-subsets of {} "
                                                  "replicates is too large ({:.3g} pairs)",
                                                  vote_size, g.n, subsets * subsets / 2))
                .with_context(fmt::format("item {}", dict.items[g.item]));
          // Groups share few count vectors (binary outcomes with n replicates: n + 1), so each
          // distinct one is counted once.
          auto [memo, fresh] = majority_memo.try_emplace(counts);
          if (fresh) memo->second = majority_vote_disagreement_counts(counts, vote_size);
          std::tie(d, c) = memo->second;
          const int64_t possible = majority_vote_pairs(g.n, vote_size);
          row.possible_comparisons += possible;
          row.tie_excluded += possible - c;
        }
        if (c == 0) continue;
        row.discordant += d;
        row.comparisons += c;
        ++row.items;
        if (counts.size() == 1) ++row.unanimous_cells;
        by_cluster.add(g.cluster, static_cast<double>(d), static_cast<double>(c));
        if (!pools) continue;
        if (!item_seen[g.item]) {
          item_seen[g.item] = 1;
          items_touched.push_back(g.item);
        }
        pooled_by_cluster.add(g.cluster, static_cast<double>(d), static_cast<double>(c));
      }
      finish_row(by_cluster);
      if (pools) {  // a derived outcome's pairs are its source's pairs again: not pooled
        pooled.discordant += row.discordant;
        pooled.comparisons += row.comparisons;
        pooled.possible_comparisons += row.possible_comparisons;
        pooled.tie_excluded += row.tie_excluded;
        pooled.unanimous_cells += row.unanimous_cells;
      }
      out.push_back(std::move(row));
    }
    pooled.items = static_cast<int64_t>(items_touched.size());
    for (uint32_t it : items_touched) item_seen[it] = 0;
    items_touched.clear();
    pooled.items_observed = static_cast<int64_t>(observed_touched.size());
    for (uint32_t it : observed_touched) observed_seen[it] = 0;
    observed_touched.clear();
    {  // distinct ok draws (item, replicate) of the cell, as compute_floor counts them
      const auto dit = in.cell_draws.find(cell);
      pooled.valid_draws = dit == in.cell_draws.end() ? 0 : dit->second;
    }
    finish_row(pooled_by_cluster);
    out.push_back(std::move(pooled));
  }
  return Status::Ok();
}

/// The intervals of every pending row, all vote sizes in one finish_floor_rows call (rows
/// with equal cluster counts share one set of resamples). Each row's interval depends only
/// on its own sums, the seed and the resample count (stats::cluster_ratio_intervals), so it
/// is the same as from a call per vote size.
Status finish_pending(std::vector<PendingRows*> pending, const BootstrapOptions& boot) {
  std::vector<FloorRow*> ptrs;
  std::vector<std::vector<double>> nums, dens;
  for (PendingRows* p : pending) {
    for (auto& r : p->rows) ptrs.push_back(&r);
    for (auto& v : p->nums) nums.push_back(std::move(v));
    for (auto& v : p->dens) dens.push_back(std::move(v));
  }
  return finish_floor_rows(ptrs, nums, dens, boot, bootstrap_threads());
}

Result<std::vector<FloorRow>> rows_of(const FloorInput::Impl& in, int vote_size, const BootstrapOptions& boot,
                                      const DerivedOutcomes& derived) {
  PendingRows p;
  NF_RETURN_IF_ERROR(pending_rows_of(in, vote_size, derived, &p));
  NF_RETURN_IF_ERROR(finish_pending({&p}, boot));
  return std::move(p.rows);
}

}  // namespace

std::pair<int64_t, int64_t> majority_vote_disagreement_counts(const std::vector<int>& counts, int vote_size) {
  int64_t disc = 0, comp = 0;
  std::vector<int> rest(counts.size());
  for_each_composition(counts, vote_size, [&](const std::vector<int>& a, int64_t wa) {
    const int va = vote_of(a);
    if (va < 0 || wa == 0) return;
    for (size_t j = 0; j < counts.size(); ++j) rest[j] = counts[j] - a[j];
    for_each_composition(rest, vote_size, [&](const std::vector<int>& b, int64_t wb) {
      const int vb = vote_of(b);
      if (vb < 0 || wb == 0) return;
      comp += wa * wb;
      if (va != vb) disc += wa * wb;
    });
  });
  return {disc / 2, comp / 2};  // ordered pairs (A, B) -> unordered
}

FloorInput::FloorInput() : impl_(std::make_unique<Impl>()) {}
FloorInput::FloorInput(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
FloorInput::FloorInput(FloorInput&&) noexcept = default;
FloorInput& FloorInput::operator=(FloorInput&&) noexcept = default;
FloorInput::~FloorInput() = default;
int FloorInput::max_item_replicates() const { return impl_->max_replicates; }
size_t FloorInput::groups() const { return impl_->groups.size(); }

FloorInput floor_input_of(const OutcomeFrame& f) {
  Aggregator agg;
  agg.dict() = f.dict;
  OutcomeCodes c;
  for (size_t r = 0; r < f.size(); ++r) {
    c.subject = f.subject[r];
    c.config = f.config[r];
    c.condition = f.condition[r];
    c.item = f.item[r];
    c.cluster = f.cluster[r];
    c.outcome = f.outcome[r];
    c.replicate = f.replicate[r];
    c.value = f.value[r];
    agg.add(c);
  }
  return agg.finish();
}

Result<FloorInput> read_floor_input(Store& store, bool include_cached) {
  Aggregator agg;
  NF_RETURN_IF_ERROR(store.scan_outcome_codes(include_cached, &agg.dict(), [&](const OutcomeCodes& c) { agg.add(c); }));
  return agg.finish();
}

Result<std::vector<StatusCount>> read_status_and_floor_input(
    Store& store, bool include_cached,
    const std::function<void(std::string_view, std::string_view, std::string_view, std::string_view)>& answer_fn,
    std::optional<FloorInput>* input, Status* input_status) {
  Aggregator agg;
  Status scan = Status::Ok();
  NF_ASSIGN_OR_RETURN(auto counts, status_counts_answers_and_outcome_codes(
                                       store, answer_fn, include_cached, &agg.dict(),
                                       [&](const OutcomeCodes& c) { agg.add(c); }, &scan));
  if (scan.ok()) {
    *input = agg.finish();
  } else {
    *input_status = scan;
  }
  return counts;
}

Result<std::vector<FloorRow>> compute_floor_frame(const FloorInput& input, int vote_size,
                                                  const BootstrapOptions& boot, const DerivedOutcomes& derived) {
  return rows_of(*input.impl_, vote_size, boot, derived);
}

std::vector<Result<std::vector<FloorRow>>> compute_floor_frames(const FloorInput& input,
                                                                 const std::vector<int>& vote_sizes,
                                                                 const BootstrapOptions& boot,
                                                                 const DerivedOutcomes& derived) {
  std::vector<Result<std::vector<FloorRow>>> out;
  std::vector<PendingRows> pending(vote_sizes.size());
  std::vector<Status> status(vote_sizes.size());
  std::vector<PendingRows*> batch;
  // Each vote size's rows on its own thread (they only read the input; ~3 ms each at 1M
  // values), the first on this one; the results do not depend on it.
  {
    std::vector<std::thread> others;
    for (size_t k = 1; k < vote_sizes.size(); ++k) {
      try {
        others.emplace_back([&, k] { status[k] = pending_rows_of(*input.impl_, vote_sizes[k], derived, &pending[k]); });
      } catch (const std::system_error&) {  // no thread: this one
        status[k] = pending_rows_of(*input.impl_, vote_sizes[k], derived, &pending[k]);
      }
    }
    if (!vote_sizes.empty()) status[0] = pending_rows_of(*input.impl_, vote_sizes[0], derived, &pending[0]);
    for (auto& t : others) t.join();
  }
  for (size_t k = 0; k < vote_sizes.size(); ++k)
    if (status[k].ok()) batch.push_back(&pending[k]);
  if (!finish_pending(batch, boot).ok()) {
    // A bootstrap error: give each vote size the result of its own call (rows_of).
    for (int v : vote_sizes) out.push_back(rows_of(*input.impl_, v, boot, derived));
    return out;
  }
  for (size_t k = 0; k < vote_sizes.size(); ++k) {
    if (status[k].ok()) {
      out.push_back(std::move(pending[k].rows));
    } else {
      out.push_back(status[k]);
    }
  }
  return out;
}

Result<std::vector<FloorRow>> compute_floor_frame(const OutcomeFrame& f, int vote_size, const BootstrapOptions& boot) {
  return compute_floor_frame(floor_input_of(f), vote_size, boot);
}

Result<std::vector<FloorRow>> compute_floor_frame(Store& store, bool include_cached, int vote_size,
                                                  const BootstrapOptions& boot) {
  NF_ASSIGN_OR_RETURN(FloorInput in, read_floor_input(store, include_cached));
  return compute_floor_frame(in, vote_size, boot);
}

Result<int> max_item_replicates(Store& store, bool include_cached) {
  NF_ASSIGN_OR_RETURN(FloorInput in, read_floor_input(store, include_cached));
  return in.max_item_replicates();
}

}  // namespace nf
