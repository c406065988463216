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
  struct Sums {
    double gold = 0, gold_listed = 0;
    int64_t listed = 0, sampled_only = 0;
  };
  std::map<std::tuple<std::string, std::string, std::string>, OptionProbRow> cells;
  std::map<std::tuple<std::string, std::string, std::string>, Sums> sums;
  for (const auto& d : draws) {
    if (d.probs.empty()) continue;
    const auto key = std::make_tuple(d.subject, d.config, d.condition);
    OptionProbRow& row = cells[key];
    Sums& sum = sums[key];
    row.subject = d.subject;
    row.config = d.config;
    row.condition = d.condition;
    ++row.draws;
    if (d.ignores_constraint) ++row.constraint_ignored;
    std::string best;
    double best_p = -1.0;
    int known = 0;
    for (const auto& [letter, p] : d.probs) {  // std::map: letters in order, ties to the first
      ++row.options_total;
      if (!p) {
        ++row.options_unknown;
        continue;
      }
      ++known;
      if (*p > best_p) {
        best_p = *p;
        best = letter;
      }
    }
    const auto g = d.probs.find(d.gold);
    const bool gold_known = g != d.probs.end() && g->second.has_value();
    if (gold_known) {
      ++row.gold_known;
      sum.gold += *g->second;
      if (d.answer == d.gold) ++row.gold_known_answered;
    }
    if (d.listed) {
      ++row.listed_recorded;
      if (gold_known && d.listed->count(d.gold)) {
        ++sum.listed;
        sum.gold_listed += *g->second;
      } else if (gold_known) {
        ++sum.sampled_only;
      }
    }
    // One known option is the argmax by construction (tester s10 finding 7): undefined.
    if (known >= 2) {
      ++row.argmax_defined;
      if (best == d.answer) ++row.argmax_matches;
    } else {
      ++row.argmax_undefined;
    }
  }
  std::vector<OptionProbRow> out;
  for (auto& [key, row] : cells) {
    const Sums& sum = sums[key];
    if (row.gold_known > 0) row.mean_gold_prob = sum.gold / static_cast<double>(row.gold_known);
    if (row.listed_recorded == row.draws) {
      row.gold_listed = sum.listed;
      row.gold_sampled_only = sum.sampled_only;
      if (sum.listed > 0) row.mean_gold_prob_listed = sum.gold_listed / static_cast<double>(sum.listed);
    }
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
    OptionProbDraw o;
    o.subject = r.subject;
    o.config = r.config;
    o.condition = r.condition;
    o.item = r.item;
    o.replicate = r.replicate;
    for (auto it = probs->begin(); it != probs->end(); ++it)
      o.probs[it.key()] = it.value().is_number() ? std::optional<double>(it.value().get<double>()) : std::nullopt;
    if (const auto at = d.extra.find("answer_token"); at != d.extra.end() && at->is_object()) {
      o.ignores_constraint = at->value("top_logprobs_ignore_constraint", false);
      if (const auto l = at->find("listed"); l != at->end() && l->is_array()) {
        o.listed.emplace();
        for (const auto& x : *l)
          if (x.is_string()) o.listed->insert(x.get<std::string>());
      }
    }
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
  auto opt = [](const auto& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  return {{"subject", r.subject},
          {"config", r.config},
          {"condition", r.condition},
          {"draws", r.draws},
          {"gold_known", r.gold_known},
          {"gold_unknown", r.draws - r.gold_known},
          {"gold_known_answered", r.gold_known_answered},
          {"mean_gold_prob", opt(r.mean_gold_prob)},
          {"listed_recorded", r.listed_recorded},
          {"gold_listed", opt(r.gold_listed)},
          {"gold_sampled_only", opt(r.gold_sampled_only)},
          {"mean_gold_prob_listed", opt(r.mean_gold_prob_listed)},
          {"argmax_defined", r.argmax_defined},
          {"argmax_undefined", r.argmax_undefined},
          {"argmax_matches", r.argmax_matches},
          {"argmax_match_share", opt(r.argmax_match_share)},
          {"options_total", r.options_total},
          {"options_unknown", r.options_unknown},
          {"constraint_ignored", r.constraint_ignored}};
}

std::vector<std::string> option_prob_warnings(const std::vector<OptionProbRow>& rows) {
  struct Subject {
    int64_t draws = 0, constraint = 0, argmax_defined = 0, gold_known = 0, sampled_only = 0, listed = 0,
            unrecorded = 0, unrecorded_answered = 0;
  };
  std::map<std::string, Subject> by;
  for (const auto& r : rows) {
    Subject& s = by[r.subject];
    s.draws += r.draws;
    s.constraint += r.constraint_ignored;
    s.argmax_defined += r.argmax_defined;
    if (r.gold_listed) {
      s.gold_known += r.gold_known;
      s.sampled_only += r.gold_sampled_only.value_or(0);
      s.listed += *r.gold_listed;
    } else {
      s.unrecorded += r.draws - r.listed_recorded;
      s.unrecorded_answered += r.gold_known_answered;
    }
  }
  std::vector<std::string> out;
  for (const auto& [name, s] : by) {
    if (s.constraint > 0)
      out.push_back(fmt::format(
          "subject '{}': {} of {} draws carry top_logprobs_ignore_constraint: the request constrained the answer "
          "(grammar, guided choice or response_format) but the server's top logprobs are the model's distribution "
          "BEFORE that constraint (llama.cpp reports them so). The option probabilities are the unconstrained "
          "model's, not those the constrained sampler drew from: a letter the constraint forced can show a "
          "probability near 0 (docs/backends.md \"Logprobs\")",
          name, s.constraint, s.draws));
    if (s.sampled_only > 0)
      out.push_back(fmt::format(
          "subject '{}': in {} of the {} draws whose gold probability is known, it is known only because the model "
          "wrote the gold letter (the sampled token's own probability; the top list did not carry it), so "
          "`mean P(gold), known` is conditioned on a right answer; `mean P(gold), listed` ({} draws) is not",
          name, s.sampled_only, s.gold_known, s.listed));
    if (s.unrecorded > 0 && s.unrecorded_answered > 0)
      out.push_back(fmt::format(
          "subject '{}': {} draws do not record which letters the top list carried (stored before 2026-12-02, or "
          "imported), so `mean P(gold), listed` is n/a for their cells and `mean P(gold), known` may be conditioned "
          "on a right answer ({} of its draws answered the gold letter, whose probability may be only the sampled "
          "token's own)",
          name, s.unrecorded, s.unrecorded_answered));
    if (s.argmax_defined == 0)
      out.push_back(fmt::format(
          "subject '{}': none of its {} draws has two known options, so `argmax = answer` is undefined (a single "
          "known option, usually the sampled one, is its own argmax): raise `logprobs`, or use a server whose top "
          "list carries the option letters",
          name, s.draws));
  }
  return out;
}

}  // namespace nf
