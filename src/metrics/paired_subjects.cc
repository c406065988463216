#include "metrics/paired_subjects.h"

#include <cmath>
#include <limits>
#include <map>
#include <tuple>

#include "stats/multiplicity.h"
#include "stats/paired.h"

namespace nf {

namespace {

using Cell = std::tuple<std::string, std::string, std::string>;  // config, condition, outcome

/// Strict majority of 0/1 values: 1, 0, or -1 for a tie.
int majority(const std::vector<double>& v) {
  int64_t ones = 0;
  for (double x : v) ones += x == 1.0 ? 1 : 0;
  const int64_t zeros = static_cast<int64_t>(v.size()) - ones;
  if (ones > zeros) return 1;
  if (zeros > ones) return 0;
  return -1;
}

nlohmann::json num(double x) { return std::isnan(x) ? nlohmann::json(nullptr) : nlohmann::json(x); }

/// A mean that does not overflow when the sum of finite values would (values near
/// DBL_MAX): the plain sum when it is finite (bit-identical to sum / n), else the sum of
/// the values scaled by 2^-64 (exact for all but subnormal results, which cannot matter
/// next to a sum that overflowed; n * DBL_MAX * 2^-64 fits for any int64 n), divided by
/// n and scaled back. NaN for no values; inf / NaN inputs give inf / NaN as before.
struct SafeMean {
  double sum = 0.0, scaled = 0.0;
  int64_t n = 0;
  void add(double x) {
    sum += x;
    scaled += std::ldexp(x, -64);
    ++n;
  }
  double mean() const {
    if (n == 0) return std::numeric_limits<double>::quiet_NaN();
    if (std::isfinite(sum)) return sum / static_cast<double>(n);
    return std::ldexp(scaled / static_cast<double>(n), 64);
  }
};

}  // namespace

Result<PairedSubjectsResult> compute_paired_subjects(const std::vector<OutcomeRow>& rows) {
  // cell -> subject -> item -> values
  std::map<Cell, std::map<std::string, std::map<std::string, std::vector<double>>>> data;
  for (const auto& r : rows) data[{r.config, r.condition, r.outcome}][r.subject][r.item].push_back(r.value);
  PairedSubjectsResult out;
  for (const auto& [cell, by_subject] : data) {
    const auto& [config, condition, outcome] = cell;
    std::map<std::string, bool> binary;
    for (const auto& [subject, items] : by_subject) {
      SubjectMean m{subject, config, condition, outcome};
      SafeMean sum;
      bool bin = true;
      for (const auto& [item, v] : items) {
        for (double x : v) {
          sum.add(x);
          ++m.draws;
          if (x == 1.0) ++m.successes;
          if (x != 0.0 && x != 1.0) bin = false;
        }
      }
      m.items = static_cast<int64_t>(items.size());
      m.mean = sum.mean();
      m.binary = bin;
      if (!bin) m.successes = 0;
      binary[subject] = bin;
      out.subjects.push_back(m);
    }
    for (auto ia = by_subject.begin(); ia != by_subject.end(); ++ia) {
      for (auto ib = std::next(ia); ib != by_subject.end(); ++ib) {
        SubjectPair p{config, condition, outcome, ia->first, ib->first};
        p.binary = binary[ia->first] && binary[ib->first];
        SafeMean sa, sb;
        for (const auto& [item, va] : ia->second) {
          auto jt = ib->second.find(item);
          if (jt == ib->second.end()) continue;
          const auto& vb = jt->second;
          ++p.items;
          for (double x : va) sa.add(x);
          for (double x : vb) sb.add(x);
          if (!p.binary) continue;
          const int ma = majority(va), mb = majority(vb);
          if (ma < 0 || mb < 0) ++p.undetermined;
          else if (ma == 1 && mb == 0) ++p.b_count;
          else if (ma == 0 && mb == 1) ++p.c_count;
        }
        if (p.items == 0) continue;  // nothing in common: no comparison
        p.mean_a = sa.mean();
        p.mean_b = sb.mean();
        p.difference = p.mean_a - p.mean_b;
        if (p.binary) {
          NF_ASSIGN_OR_RETURN(p.p_value, stats::mcnemar_exact(p.b_count, p.c_count));
        } else {
          p.p_value = std::numeric_limits<double>::quiet_NaN();
        }
        out.pairs.push_back(p);
      }
    }
  }
  std::vector<double> ps;
  for (const auto& p : out.pairs) ps.push_back(p.p_value);
  NF_ASSIGN_OR_RETURN(auto adj, stats::holm(ps));
  for (size_t i = 0; i < out.pairs.size(); ++i) out.pairs[i].p_holm = adj[i];
  return out;
}

nlohmann::json paired_subjects_to_json(const PairedSubjectsResult& r) {
  nlohmann::json j;
  j["subjects"] = nlohmann::json::array();
  for (const auto& m : r.subjects) {
    nlohmann::json s = {{"subject", m.subject}, {"config", m.config},   {"condition", m.condition},
                        {"outcome", m.outcome}, {"draws", m.draws},     {"items", m.items},
                        {"mean", num(m.mean)},  {"binary", m.binary}};
    if (m.binary) s["successes"] = m.successes;
    j["subjects"].push_back(s);
  }
  j["rows"] = nlohmann::json::array();
  for (const auto& p : r.pairs)
    j["rows"].push_back({{"config", p.config},
                         {"condition", p.condition},
                         {"outcome", p.outcome},
                         {"a", p.a},
                         {"b", p.b},
                         {"items", p.items},
                         {"mean_a", num(p.mean_a)},
                         {"mean_b", num(p.mean_b)},
                         {"difference", num(p.difference)},
                         {"binary", p.binary},
                         {"b_count", p.b_count},
                         {"c_count", p.c_count},
                         {"undetermined", p.undetermined},
                         // Items left out of McNemar because a majority was a tie, of the items in common.
                         {"undetermined_share", p.binary && p.items > 0 ? nlohmann::json(static_cast<double>(p.undetermined) /
                                                                                          static_cast<double>(p.items))
                                                                        : nlohmann::json(nullptr)},
                         {"p_value", num(p.p_value)},
                         {"p_holm", num(p.p_holm)}});
  return j;
}

}  // namespace nf
