// MCQ robustness (seed 004 §2.4, §3.5): accuracy none vs shuffle with an exact McNemar
// test, and the inappropriate-confident rate under answer and context removal.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "metrics/floor.h"
#include "store/store.h"
#include "util/status.h"

namespace nf {

/// One row of analyses.mcq_robustness.rows (docs/results.md). Fields not applicable to
/// a metric are absent from the JSON.
struct McqRobustnessRow {
  std::string subject, config, metric;
  // metric: accuracy_none | accuracy_shuffle | shuffle_mcnemar |
  //         inappropriate_remove_answer | inappropriate_remove_context
  std::optional<int64_t> x, n;
  double rate = 0.0;                // accuracy / inappropriate rate / paired difference none - shuffle
  std::optional<double> ci_low, ci_high;
  std::optional<int64_t> b, c;      // McNemar discordant counts (none right & shuffle wrong, and the reverse)
  std::optional<double> p_value;
  int replicate = 0;                // the lowest replicate used (one draw per item and condition)
  // How many items' draws came from each replicate: one entry when every item used the
  // same one; more when a failed draw (parse or API error) sent an item to a later one.
  std::map<int, int64_t> replicate_items;
  // shuffle_mcnemar: the correct counts of the paired draws themselves (of n), so the two
  // accuracies beside the test are the test's own (tester s11 finding 9).
  std::optional<int64_t> none_correct, shuffle_correct;
  // accuracy_* and inappropriate_*: the same rate over every ok draw of every replicate
  // (x_all of n_all), so a one-replicate figure is never read as the mean.
  std::optional<int64_t> x_all, n_all;
};

/// Computes the MCQ robustness rows from the `correct` outcome of ok draws. Each metric
/// uses one draw per item and condition: the lowest replicate index that every compared
/// condition has for that item (seed 000 S12: one draw per case keeps the exact test
/// valid). Items with a parse error in either condition are left out of the pair.
///  accuracy_*: x correct of n, Wilson 95% interval;
///  shuffle_mcnemar: paired items n, b = none correct & shuffle wrong, c = the reverse,
///    rate = (b - c) / n, exact two-sided McNemar p (b + c = 0 gives 1), and the two
///    accuracies on exactly those pairs (none_correct, shuffle_correct of n);
///  inappropriate_remove_*: x = confident answers other than the appended correct
///    option, of n parsed answers, Wilson interval.
/// Cells without the needed conditions are skipped.
Result<std::vector<McqRobustnessRow>> compute_mcq_robustness(const std::vector<OutcomeRow>& rows,
                                                             double level = 0.95);

nlohmann::json mcq_robustness_row_to_json(const McqRobustnessRow& row);

}  // namespace nf
