#include "metrics/interval_flags.h"

#include <cmath>
#include <set>

#include <fmt/format.h>

#include "stats/cluster_interval.h"

namespace nf {

void add_interval_flags(nlohmann::json& j, const std::string& method, int64_t clusters, bool degenerate,
                        double percentile_low, double percentile_high, int64_t x, int64_t n, double wilson_low,
                        double wilson_high, const std::string& unit) {
  auto num = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
  j["clusters"] = clusters;
  j["few_clusters"] = clusters < stats::kFewClusters;
  j["ci_method"] = method;
  j["degenerate"] = degenerate;
  j["percentile_low"] = num(percentile_low);
  j["percentile_high"] = num(percentile_high);
  if (!degenerate) return;
  j["exact_interval"] = {
      {"method", "wilson"},
      {"lo", num(wilson_low)},
      {"hi", num(wilson_high)},
      {"x", x},
      {"n", n},
      {"note", fmt::format("every bootstrap resample gave {}/{}: the cluster interval has no width, which is not "
                           "certainty; the Wilson score bound treats the {} {} as independent, but {} within an "
                           "item are not, so the true uncertainty is wider",
                           x, n, n, unit, unit)}};
}

void add_agreement_interval_flags(nlohmann::json& j, bool degenerate, const std::vector<std::string>& cluster_of_unit) {
  const int64_t clusters = static_cast<int64_t>(std::set<std::string>(cluster_of_unit.begin(), cluster_of_unit.end()).size());
  j["clusters"] = clusters;
  j["few_clusters"] = clusters < stats::kFewClusters;
  j["degenerate"] = degenerate;
  if (degenerate)
    j["degenerate_note"] =
        "every bootstrap resample gave (almost) the same value, so the percentile interval has no width; that is not "
        "certainty: the units within a prompt are not independent and the sample may simply lack disagreement";
}

}  // namespace nf
