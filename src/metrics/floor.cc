#include "metrics/floor.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>

#include "metrics/interval_flags.h"
#include "stats/bootstrap.h"
#include "stats/cluster_interval.h"
#include "stats/proportion.h"

namespace nf {

namespace {

int64_t choose2(int64_t n) { return n * (n - 1) / 2; }

double binom_coeff(int n, int k) {
  if (k < 0 || k > n) return 0;
  double r = 1;
  for (int i = 1; i <= k; ++i) r = r * (n - k + i) / i;
  return r;
}

struct CellKey {
  std::string subject, config, condition;
  bool operator<(const CellKey& o) const {
    return std::tie(subject, config, condition) < std::tie(o.subject, o.config, o.condition);
  }
};

// Per item: cluster and the values of its replicates.
struct ItemValues {
  std::string cluster;
  std::vector<double> values;
};

}  // namespace

std::pair<int64_t, int64_t> pair_disagreement(const std::vector<double>& values) {
  const int64_t n = static_cast<int64_t>(values.size());
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  int64_t same = 0;
  for (size_t i = 0; i < sorted.size();) {
    size_t j = i;
    while (j < sorted.size() && sorted[j] == sorted[i]) ++j;
    same += choose2(static_cast<int64_t>(j - i));
    i = j;
  }
  return {choose2(n) - same, choose2(n)};
}

Result<std::pair<int64_t, int64_t>> majority_vote_disagreement(const std::vector<double>& values, int vote_size) {
  if (vote_size < 1) return InvalidArgument(fmt::format("majority_floor: vote size must be >= 1, got {}", vote_size));
  const int n = static_cast<int>(values.size());
  if (2 * vote_size > n) return std::pair<int64_t, int64_t>{0, 0};
  const double subsets = binom_coeff(n, vote_size);
  if (n > 62 || subsets * subsets / 2 > 5e7) {
    return FailedPrecondition(fmt::format(
        "majority_floor: exact enumeration of disjoint {}-subsets of {} replicates is too large ({:.3g} pairs)",
        vote_size, n, subsets * subsets / 2));
  }
  // Map values to small category ids.
  std::vector<double> cats;
  std::vector<int> cat(n);
  for (int i = 0; i < n; ++i) {
    auto it = std::find(cats.begin(), cats.end(), values[i]);
    if (it == cats.end()) {
      cat[i] = static_cast<int>(cats.size());
      cats.push_back(values[i]);
    } else {
      cat[i] = static_cast<int>(it - cats.begin());
    }
  }
  // Enumerate every vote_size-subset as a bitmask (Gosper's hack) with its vote.
  std::vector<uint64_t> masks;
  std::vector<int> votes;
  std::vector<int> counts(cats.size());
  uint64_t m = (vote_size == 64) ? ~0ULL : ((1ULL << vote_size) - 1);
  const uint64_t limit = 1ULL << n;
  while (m < limit) {
    std::fill(counts.begin(), counts.end(), 0);
    for (int i = 0; i < n; ++i)
      if (m >> i & 1ULL) ++counts[cat[i]];
    int best = -1, best_count = -1;
    bool tie = false;
    for (size_t c = 0; c < counts.size(); ++c) {
      if (counts[c] > best_count) {
        best = static_cast<int>(c);
        best_count = counts[c];
        tie = false;
      } else if (counts[c] == best_count) {
        tie = true;
      }
    }
    masks.push_back(m);
    votes.push_back(tie ? -1 : best);
    const uint64_t c = m & (0 - m);
    const uint64_t r = m + c;
    m = (((r ^ m) >> 2) / c) | r;
  }
  int64_t disc = 0, comp = 0;
  for (size_t i = 0; i < masks.size(); ++i) {
    if (votes[i] < 0) continue;
    for (size_t j = i + 1; j < masks.size(); ++j) {
      if (votes[j] < 0 || (masks[i] & masks[j])) continue;
      ++comp;
      if (votes[i] != votes[j]) ++disc;
    }
  }
  return std::pair<int64_t, int64_t>{disc, comp};
}

int64_t majority_vote_pairs(int n, int vote_size) {
  if (vote_size < 1 || 2 * vote_size > n) return 0;
  return std::llround(binom_coeff(n, vote_size) * binom_coeff(n - vote_size, vote_size) / 2.0);
}

bool pools_outcome(const std::string& outcome, const std::set<std::string>& cell_outcomes,
                   const DerivedOutcomes& derived) {
  const auto it = derived.find(outcome);
  return it == derived.end() || cell_outcomes.count(it->second) == 0;
}

namespace {

/// The rate and Wilson interval of `fr`; false when it has no comparisons (NaN everywhere).
Result<bool> start_floor_row(FloorRow& fr, size_t clusters, const BootstrapOptions& boot) {
  fr.clusters = static_cast<int64_t>(clusters);
  if (fr.comparisons == 0) {
    fr.rate = fr.ci_low = fr.ci_high = fr.wilson_low = fr.wilson_high = fr.percentile_low = fr.percentile_high =
        std::numeric_limits<double>::quiet_NaN();
    return false;
  }
  fr.rate = static_cast<double>(fr.discordant) / static_cast<double>(fr.comparisons);
  NF_ASSIGN_OR_RETURN(auto w, stats::wilson(fr.discordant, fr.comparisons, boot.level));
  fr.wilson_low = w.low;
  fr.wilson_high = w.high;
  return true;
}

void set_interval(FloorRow& fr, const stats::ClusterRatioInterval& b) {
  fr.ci_low = b.low;
  fr.ci_high = b.high;
  fr.percentile_low = b.percentile_low;
  fr.percentile_high = b.percentile_high;
  fr.degenerate = b.degenerate;
  fr.ci_method = b.method;
}

}  // namespace

Status finish_floor_row(FloorRow& fr, const std::vector<double>& num, const std::vector<double>& den,
                        const BootstrapOptions& boot) {
  NF_ASSIGN_OR_RETURN(const bool has_pairs, start_floor_row(fr, num.size(), boot));
  if (!has_pairs) return Status::Ok();
  NF_ASSIGN_OR_RETURN(auto b, stats::cluster_ratio_interval(num, den, boot.resamples, boot.seed, boot.level));
  set_interval(fr, b);
  return Status::Ok();
}

Status finish_floor_rows(const std::vector<FloorRow*>& rows, const std::vector<std::vector<double>>& nums,
                         const std::vector<std::vector<double>>& dens, const BootstrapOptions& boot, int threads) {
  if (rows.size() != nums.size() || rows.size() != dens.size())
    return InvalidArgument("finish_floor_rows: rows, numerators and denominators differ in number");
  // Rows by cluster count: one batch of resamples per count.
  std::map<size_t, std::vector<size_t>> by_clusters;
  for (size_t k = 0; k < rows.size(); ++k) {
    NF_ASSIGN_OR_RETURN(const bool has_pairs, start_floor_row(*rows[k], nums[k].size(), boot));
    if (has_pairs) by_clusters[nums[k].size()].push_back(k);
  }
  std::vector<std::vector<double>> bn, bd;
  for (const auto& [g, ks] : by_clusters) {
    bn.clear();
    bd.clear();
    for (size_t k : ks) {
      bn.push_back(nums[k]);
      bd.push_back(dens[k]);
    }
    NF_ASSIGN_OR_RETURN(auto ivs, stats::cluster_ratio_intervals(bn, bd, boot.resamples, boot.seed, boot.level,
                                                                 std::max(1, threads)));
    for (size_t j = 0; j < ks.size(); ++j) set_interval(*rows[ks[j]], ivs[j]);
  }
  return Status::Ok();
}

Result<std::vector<FloorRow>> compute_floor(const std::vector<OutcomeRow>& rows, int vote_size,
                                            const BootstrapOptions& boot, const DerivedOutcomes& derived) {
  // cell -> outcome -> item -> values
  std::map<CellKey, std::map<std::string, std::map<std::string, ItemValues>>> cells;
  std::map<CellKey, std::set<std::pair<std::string, int>>> draws_of_cell;  // distinct ok draws (item, replicate)
  for (const auto& r : rows) {
    draws_of_cell[{r.subject, r.config, r.condition}].insert({r.item, r.replicate});
    auto& iv = cells[{r.subject, r.config, r.condition}][r.outcome][r.item];
    iv.cluster = r.cluster.empty() ? r.item : r.cluster;
    iv.values.push_back(r.value);
  }
  auto finish = [&](FloorRow& fr, const std::map<std::string, std::pair<double, double>>& clusters) -> Status {
    std::vector<double> num, den;
    for (const auto& [cl, nd] : clusters) {
      num.push_back(nd.first);
      den.push_back(nd.second);
    }
    return finish_floor_row(fr, num, den, boot);
  };

  std::vector<FloorRow> out;
  for (const auto& [cell, outcomes] : cells) {
    FloorRow pooled{cell.subject, cell.config, cell.condition, "pooled", vote_size};
    std::map<std::string, std::pair<double, double>> pooled_by_cluster;
    std::map<std::string, bool> pooled_items;
    std::set<std::string> cell_outcomes;
    for (const auto& [outcome, items] : outcomes) cell_outcomes.insert(outcome);
    for (const auto& [outcome, items] : outcomes) {
      const bool pools = pools_outcome(outcome, cell_outcomes, derived);
      (pools ? pooled.pooled_over : pooled.derived_excluded).push_back(outcome);
      FloorRow row{cell.subject, cell.config, cell.condition, outcome, vote_size};
      std::map<std::string, std::pair<double, double>> by_cluster;
      for (const auto& [item, iv] : items) {
        ++row.items_observed;
        row.valid_draws += static_cast<int64_t>(iv.values.size());
        int64_t d = 0, c = 0;
        if (vote_size <= 1) {
          std::tie(d, c) = pair_disagreement(iv.values);
        } else {
          auto res = majority_vote_disagreement(iv.values, vote_size);
          if (!res.ok()) return res.status().with_context(fmt::format("item {}", item));
          std::tie(d, c) = *res;
          const int64_t possible = majority_vote_pairs(static_cast<int>(iv.values.size()), vote_size);
          row.possible_comparisons += possible;
          row.tie_excluded += possible - c;
        }
        if (c == 0) continue;
        row.discordant += d;
        row.comparisons += c;
        ++row.items;
        if (pair_disagreement(iv.values).first == 0) ++row.unanimous_cells;
        if (!pools) {
          by_cluster[iv.cluster].first += static_cast<double>(d);
          by_cluster[iv.cluster].second += static_cast<double>(c);
          continue;
        }
        pooled_items[item] = true;
        for (auto* m : {&by_cluster, &pooled_by_cluster}) {
          (*m)[iv.cluster].first += static_cast<double>(d);
          (*m)[iv.cluster].second += static_cast<double>(c);
        }
      }
      NF_RETURN_IF_ERROR(finish(row, by_cluster));
      if (pools) {
        pooled.discordant += row.discordant;
        pooled.comparisons += row.comparisons;
        pooled.possible_comparisons += row.possible_comparisons;
        pooled.tie_excluded += row.tie_excluded;
        // Pooled unanimity counts item x outcome cells (seed 000: "75 of 96 vignette-action cells").
        pooled.unanimous_cells += row.unanimous_cells;
      }
      out.push_back(std::move(row));
    }
    pooled.items = static_cast<int64_t>(pooled_items.size());
    {
      std::map<std::string, bool> seen;
      for (const auto& [outcome, items] : outcomes)
        if (pools_outcome(outcome, cell_outcomes, derived))
          for (const auto& [item, iv] : items) seen[item] = true;
      pooled.items_observed = static_cast<int64_t>(seen.size());
      pooled.valid_draws = static_cast<int64_t>(draws_of_cell[cell].size());
    }
    NF_RETURN_IF_ERROR(finish(pooled, pooled_by_cluster));
    out.push_back(std::move(pooled));
  }
  return out;
}

nlohmann::json floor_row_to_json(const FloorRow& r) {
  auto num = [](double x) { return std::isnan(x) ? nlohmann::json(nullptr) : nlohmann::json(x); };
  nlohmann::json j = {{"subject", r.subject},
                      {"config", r.config},
                      {"condition", r.condition},
                      {"outcome", r.outcome},
                      {"discordant", r.discordant},
                      {"comparisons", r.comparisons},
                      {"rate", num(r.rate)},
                      {"ci_low", num(r.ci_low)},
                      {"ci_high", num(r.ci_high)},
                      {"wilson_low", num(r.wilson_low)},
                      {"wilson_high", num(r.wilson_high)},
                      {"items", r.items},
                      {"unanimous_cells", r.unanimous_cells},
                      {"clusters", r.clusters}};
  if (r.vote_size > 1) {
    j["vote_size"] = r.vote_size;
    // Comparisons left out because one side's vote was a tie (undetermined), and their share
    // of every possible comparison: the majority floor is a rate among the rest only.
    j["possible_comparisons"] = r.possible_comparisons;
    j["tie_excluded"] = r.tie_excluded;
    j["tie_excluded_share"] = r.possible_comparisons > 0 ? nlohmann::json(static_cast<double>(r.tie_excluded) /
                                                                          static_cast<double>(r.possible_comparisons))
                                                         : nlohmann::json(nullptr);
  }
  if (r.outcome == "pooled") {
    j["pooled_over"] = r.pooled_over;
    j["derived_excluded"] = r.derived_excluded;
  }
  if (r.comparisons > 0)
    add_interval_flags(j, r.ci_method, r.clusters, r.degenerate, r.percentile_low, r.percentile_high, r.discordant,
                       r.comparisons, r.wilson_low, r.wilson_high, "pairs");
  j["coverage"] = {{"items_contributing", r.items},
                   {"items_observed", r.items_observed},
                   {"valid_draws", r.valid_draws},
                   {"items_planned", nullptr},
                   {"draws_planned", nullptr},
                   {"planned_note", "unknown: set by the analysis from the study (an imported store records no plan)"}};
  return j;
}

}  // namespace nf
