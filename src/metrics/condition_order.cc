#include "metrics/condition_order.h"

#include <algorithm>
#include <tuple>

namespace nf {

namespace {

bool is_condition_rows(const nlohmann::json& a) {
  if (!a.is_array() || a.empty()) return false;
  return std::all_of(a.begin(), a.end(), [](const nlohmann::json& e) {
    return e.is_object() && e.contains("condition") && e["condition"].is_string();
  });
}

}  // namespace

void order_by_study_conditions(nlohmann::json& results, const std::vector<std::string>& study_conditions) {
  if (study_conditions.empty()) return;
  auto rank = [&](const nlohmann::json& e) {
    const std::string c = e["condition"].get<std::string>();
    const auto it = std::find(study_conditions.begin(), study_conditions.end(), c);
    return static_cast<size_t>(it - study_conditions.begin());
  };
  auto field = [](const nlohmann::json& e, const char* k) {
    return e.contains(k) && e[k].is_string() ? e[k].get<std::string>() : std::string();
  };
  if (is_condition_rows(results)) {
    std::vector<nlohmann::json> rows(results.begin(), results.end());
    std::stable_sort(rows.begin(), rows.end(), [&](const nlohmann::json& a, const nlohmann::json& b) {
      const auto ka = std::make_tuple(field(a, "subject"), field(a, "config"), rank(a));
      const auto kb = std::make_tuple(field(b, "subject"), field(b, "config"), rank(b));
      return ka < kb;
    });
    results = nlohmann::json(rows);
  }
  if (results.is_object() || results.is_array())
    for (auto& child : results) order_by_study_conditions(child, study_conditions);
}

}  // namespace nf
