#include "metrics/option_probs.h"

#include <algorithm>
#include <set>
#include <tuple>

#include <fmt/format.h>

namespace nf {

namespace {

std::string shown_letter(size_t k) { return std::string(1, static_cast<char>('A' + k)); }

}  // namespace

std::vector<OptionProbRow> compute_option_probs(const std::vector<OptionProbDraw>& draws) {
  std::map<std::tuple<std::string, std::string, std::string>, OptionProbRow> cells;
  std::map<std::tuple<std::string, std::string, std::string>, double> gold_sum;
  for (const auto& d : draws) {
    if (d.probs.empty()) continue;
    const auto key = std::make_tuple(d.subject, d.config, d.condition);
    OptionProbRow& row = cells[key];
    row.subject = d.subject;
    row.config = d.config;
    row.condition = d.condition;
    ++row.draws;
    std::string best;
    double best_p = -1.0;
    for (const auto& [letter, p] : d.probs) {  // std::map: letters in order, ties to the first
      ++row.options_total;
      if (!p) {
        ++row.options_unknown;
        continue;
      }
      if (*p > best_p) {
        best_p = *p;
        best = letter;
      }
    }
    if (auto g = d.probs.find(d.gold); g != d.probs.end() && g->second) {
      ++row.gold_known;
      gold_sum[key] += *g->second;
    }
    if (!best.empty()) {
      ++row.argmax_defined;
      if (best == d.answer) ++row.argmax_matches;
    }
  }
  std::vector<OptionProbRow> out;
  for (auto& [key, row] : cells) {
    if (row.gold_known > 0) row.mean_gold_prob = gold_sum[key] / static_cast<double>(row.gold_known);
    if (row.argmax_defined > 0)
      row.argmax_match_share = static_cast<double>(row.argmax_matches) / static_cast<double>(row.argmax_defined);
    out.push_back(row);
  }
  return out;
}

Result<std::vector<std::string>> shown_to_original(const nlohmann::json& item_data, const nlohmann::json& detail,
                                                   std::string* gold_shown) {
  std::vector<std::string> original;
  if (item_data.contains("options") && item_data["options"].is_object())
    for (auto it = item_data["options"].begin(); it != item_data["options"].end(); ++it) original.push_back(it.key());
  const std::string answer = item_data.value("answer", "");
  std::vector<std::string> shown;
  bool sentinel_is_gold = false;
  if (detail.is_object() && detail.contains("permutation")) {
    const auto& perm = detail["permutation"];
    if (!perm.is_array() || perm.size() != original.size())
      return InvalidArgument(fmt::format("option_probs: permutation {} does not fit {} options", perm.dump(),
                                         original.size()));
    for (const auto& x : perm) {
      if (!x.is_number_integer() || x.get<int64_t>() < 0 || x.get<size_t>() >= original.size())
        return InvalidArgument(fmt::format("option_probs: bad permutation entry {}", x.dump()));
      shown.push_back(original[x.get<size_t>()]);
    }
  } else if (detail.is_object() && detail.contains("removed")) {
    for (const auto& l : original)
      if (l != answer) shown.push_back(l);
    shown.emplace_back();
    sentinel_is_gold = true;
  } else if (detail.is_object() && detail.contains("removed_chars")) {
    shown = original;
    shown.emplace_back();
    sentinel_is_gold = true;
  } else {
    shown = original;
  }
  if (gold_shown) {
    gold_shown->clear();
    for (size_t k = 0; k < shown.size(); ++k)
      if (sentinel_is_gold ? shown[k].empty() : shown[k] == answer) *gold_shown = shown_letter(k);
  }
  return shown;
}

Result<std::vector<OptionProbDraw>> read_option_prob_draws(Store& store, const std::vector<std::string>& subjects,
                                                           bool include_cached) {
  std::vector<OptionProbDraw> out;
  if (subjects.empty()) return out;
  const std::set<std::string> wanted(subjects.begin(), subjects.end());
  NF_ASSIGN_OR_RETURN(auto items, store.items());
  std::map<std::string, nlohmann::json> item_data;
  for (auto& it : items) item_data[it.item] = std::move(it.data);
  NF_ASSIGN_OR_RETURN(auto rows, store.outcome_rows(include_cached));
  for (const auto& r : rows) {
    if (r.outcome != "choice" || !wanted.count(r.subject)) continue;
    NF_ASSIGN_OR_RETURN(Draw d, store.get_draw(DrawKey{r.subject, r.item, r.condition, r.config, r.replicate}));
    const auto probs = d.extra.find("option_probs");
    if (probs == d.extra.end() || !probs->is_object() || probs->empty()) continue;
    OptionProbDraw o{r.subject, r.config, r.condition, r.item, r.replicate, {}, "", ""};
    for (auto it = probs->begin(); it != probs->end(); ++it)
      o.probs[it.key()] = it.value().is_number() ? std::optional<double>(it.value().get<double>()) : std::nullopt;
    const nlohmann::json detail = d.extra.value("condition", nlohmann::json::object());
    NF_ASSIGN_OR_RETURN(auto shown, shown_to_original(item_data[r.item], detail, &o.gold));
    // The free-form answer's original letter ("appended" = the sentinel) -> its shown letter.
    for (size_t k = 0; k < shown.size(); ++k)
      if (r.label == (shown[k].empty() ? std::string("appended") : shown[k])) o.answer = shown_letter(k);
    out.push_back(std::move(o));
  }
  return out;
}

nlohmann::json option_prob_row_to_json(const OptionProbRow& r) {
  auto opt = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  return {{"subject", r.subject},
          {"config", r.config},
          {"condition", r.condition},
          {"draws", r.draws},
          {"gold_known", r.gold_known},
          {"gold_unknown", r.draws - r.gold_known},
          {"mean_gold_prob", opt(r.mean_gold_prob)},
          {"argmax_defined", r.argmax_defined},
          {"argmax_matches", r.argmax_matches},
          {"argmax_match_share", opt(r.argmax_match_share)},
          {"options_total", r.options_total},
          {"options_unknown", r.options_unknown}};
}

}  // namespace nf
