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
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "stats/bootstrap.h"
#include "stats/proportion.h"

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

struct GroupKey {
  uint32_t subject, config, condition, outcome, item;
  bool operator==(const GroupKey& o) const {
    return subject == o.subject && config == o.config && condition == o.condition && outcome == o.outcome &&
           item == o.item;
  }
};

struct GroupKeyHash {
  size_t operator()(const GroupKey& k) const {
    uint64_t h = k.subject;
    for (uint32_t x : {k.config, k.condition, k.outcome, k.item}) h = (h ^ x) * 0x9E3779B97F4A7C15ULL + (h >> 29);
    return static_cast<size_t>(h ^ (h >> 32));
  }
};

/// One cell (subject, config, condition) by its codes.
using CellId = std::array<uint32_t, 3>;

/// One item of one cell and outcome: its cluster and its values as category counts.
struct Group {
  GroupKey key;
  uint32_t cluster = 0;
  int32_t cluster_replicate = -1;  // compute_floor keeps the cluster of the last row (highest replicate)
  int n = 0;
  std::vector<std::pair<double, int>> counts;  // distinct value (compared exactly) -> replicates
};

class Aggregator {
 public:
  void add(const OutcomeCodes& c) {
    cell_draws_[CellId{c.subject, c.config, c.condition}].insert((static_cast<uint64_t>(c.item) << 32) |
                                                                  static_cast<uint32_t>(c.replicate));
    const GroupKey key{c.subject, c.config, c.condition, c.outcome, c.item};
    auto [it, inserted] = index_.try_emplace(key, static_cast<uint32_t>(groups_.size()));
    if (inserted) groups_.push_back(Group{key});
    Group& g = groups_[it->second];
    if (c.replicate >= g.cluster_replicate) {
      g.cluster = c.cluster;
      g.cluster_replicate = c.replicate;
    }
    ++g.n;
    for (auto& [v, k] : g.counts)
      if (v == c.value) {
        ++k;
        return;
      }
    g.counts.emplace_back(c.value, 1);
  }

  Result<std::vector<FloorRow>> finish(const OutcomeDictionaries& dict, int vote_size, const BootstrapOptions& boot);

 private:
  std::unordered_map<GroupKey, uint32_t, GroupKeyHash> index_;
  std::vector<Group> groups_;
  /// Distinct (item, replicate) ok draws per cell: the pooled row's valid_draws.
  std::map<CellId, std::unordered_set<uint64_t>> cell_draws_;
};

std::vector<uint32_t> ranks_of(const std::vector<std::string>& names) {
  std::vector<uint32_t> order(names.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return names[a] < names[b]; });
  std::vector<uint32_t> rank(names.size());
  for (uint32_t r = 0; r < order.size(); ++r) rank[order[r]] = r;
  return rank;
}

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

Result<std::vector<FloorRow>> Aggregator::finish(const OutcomeDictionaries& dict, int vote_size,
                                                 const BootstrapOptions& boot) {
  index_ = {};
  const auto rs = ranks_of(dict.subjects), rcf = ranks_of(dict.configs), rcd = ranks_of(dict.conditions),
             ro = ranks_of(dict.outcomes), ri = ranks_of(dict.items), rcl = ranks_of(dict.clusters);
  auto sort_key = [&](const Group& g) {
    return std::array<uint32_t, 5>{rs[g.key.subject], rcf[g.key.config], rcd[g.key.condition], ro[g.key.outcome],
                                   ri[g.key.item]};
  };
  std::sort(groups_.begin(), groups_.end(), [&](const Group& a, const Group& b) { return sort_key(a) < sort_key(b); });

  std::vector<double> num, den;
  auto finish_row = [&](FloorRow& fr, ClusterSums& clusters) -> Status {
    clusters.take(&num, &den);
    return finish_floor_row(fr, num, den, boot);
  };

  std::vector<FloorRow> out;
  ClusterSums by_cluster(dict.clusters.size(), rcl), pooled_by_cluster(dict.clusters.size(), rcl);
  std::vector<char> item_seen(dict.items.size()), observed_seen(dict.items.size());
  std::vector<uint32_t> items_touched, observed_touched;
  std::vector<int> counts;
  size_t i = 0;
  while (i < groups_.size()) {
    const GroupKey cell = groups_[i].key;
    auto same_cell = [&](const Group& g) {
      return g.key.subject == cell.subject && g.key.config == cell.config && g.key.condition == cell.condition;
    };
    FloorRow pooled{dict.subjects[cell.subject], dict.configs[cell.config], dict.conditions[cell.condition], "pooled",
                    vote_size};
    while (i < groups_.size() && same_cell(groups_[i])) {
      const uint32_t outcome = groups_[i].key.outcome;
      FloorRow row{pooled.subject, pooled.config, pooled.condition, dict.outcomes[outcome], vote_size};
      for (; i < groups_.size() && same_cell(groups_[i]) && groups_[i].key.outcome == outcome; ++i) {
        const Group& g = groups_[i];
        ++row.items_observed;
        row.valid_draws += g.n;
        if (!observed_seen[g.key.item]) {
          observed_seen[g.key.item] = 1;
          observed_touched.push_back(g.key.item);
        }
        counts.clear();
        for (const auto& vc : g.counts) counts.push_back(vc.second);
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
                .with_context(fmt::format("item {}", dict.items[g.key.item]));
          std::tie(d, c) = majority_vote_disagreement_counts(counts, vote_size);
        }
        if (c == 0) continue;
        row.discordant += d;
        row.comparisons += c;
        ++row.items;
        if (counts.size() == 1) ++row.unanimous_cells;
        if (!item_seen[g.key.item]) {
          item_seen[g.key.item] = 1;
          items_touched.push_back(g.key.item);
        }
        by_cluster.add(g.cluster, static_cast<double>(d), static_cast<double>(c));
        pooled_by_cluster.add(g.cluster, static_cast<double>(d), static_cast<double>(c));
      }
      NF_RETURN_IF_ERROR(finish_row(row, by_cluster));
      pooled.discordant += row.discordant;
      pooled.comparisons += row.comparisons;
      pooled.unanimous_cells += row.unanimous_cells;
      out.push_back(std::move(row));
    }
    pooled.items = static_cast<int64_t>(items_touched.size());
    for (uint32_t it : items_touched) item_seen[it] = 0;
    items_touched.clear();
    pooled.items_observed = static_cast<int64_t>(observed_touched.size());
    for (uint32_t it : observed_touched) observed_seen[it] = 0;
    observed_touched.clear();
    {  // distinct ok draws (item, replicate) of the cell, as compute_floor counts them
      const auto dit = cell_draws_.find(CellId{cell.subject, cell.config, cell.condition});
      pooled.valid_draws = dit == cell_draws_.end() ? 0 : static_cast<int64_t>(dit->second.size());
    }
    NF_RETURN_IF_ERROR(finish_row(pooled, pooled_by_cluster));
    out.push_back(std::move(pooled));
  }
  return out;
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

Result<std::vector<FloorRow>> compute_floor_frame(const OutcomeFrame& f, int vote_size, const BootstrapOptions& boot) {
  Aggregator agg;
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
  return agg.finish(f.dict, vote_size, boot);
}

Result<std::vector<FloorRow>> compute_floor_frame(Store& store, bool include_cached, int vote_size,
                                                  const BootstrapOptions& boot) {
  Aggregator agg;
  OutcomeDictionaries dict;
  NF_RETURN_IF_ERROR(store.scan_outcome_codes(include_cached, &dict, [&](const OutcomeCodes& c) { agg.add(c); }));
  return agg.finish(dict, vote_size, boot);
}

Result<int> max_item_replicates(Store& store, bool include_cached) {
  std::unordered_map<GroupKey, int, GroupKeyHash> count;
  OutcomeDictionaries dict;
  int best = 0;
  NF_RETURN_IF_ERROR(store.scan_outcome_codes(include_cached, &dict, [&](const OutcomeCodes& c) {
    best = std::max(best, ++count[GroupKey{c.subject, c.config, c.condition, c.outcome, c.item}]);
  }));
  return best;
}

}  // namespace nf
