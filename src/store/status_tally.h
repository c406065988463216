// Internal to the stores: the draw counts per (subject, config, condition, status) of
// Store::status_counts, tallied row by row from a scan of the draws (used by the SQLite
// store's status_counts_and_answers and by analyze's combined draws read, issue 14).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "store/store.h"

namespace nf::store_internal {

/// Draw counts by (subject, config, condition, status). add() once per draw, in any order;
/// while the key repeats (a store's draws come cell by cell) it increments the last key's
/// counter without a map lookup. counts() gives them in byte order of the four strings, as
/// status_counts' GROUP BY does.
class StatusCounter {
 public:
  void add(std::string_view subject, std::string_view config, std::string_view condition, std::string_view status) {
    if (last_ == nullptr || subject != last_subject_ || config != last_config_ || condition != last_condition_ ||
        status != last_status_) {
      last_subject_.assign(subject);
      last_config_.assign(config);
      last_condition_.assign(condition);
      last_status_.assign(status);
      last_ = &counts_[{last_subject_, last_config_, last_condition_, last_status_}];
    }
    ++*last_;
  }
  /// One StatusCount per distinct key, in key order.
  std::vector<StatusCount> counts() const {
    std::vector<StatusCount> out;
    out.reserve(counts_.size());
    for (const auto& [k, n] : counts_)
      out.push_back({std::get<0>(k), std::get<1>(k), std::get<2>(k), std::get<3>(k), n});
    return out;
  }

 private:
  std::map<std::tuple<std::string, std::string, std::string, std::string>, int64_t> counts_;
  int64_t* last_ = nullptr;
  std::string last_subject_, last_config_, last_condition_, last_status_;
};

}  // namespace nf::store_internal
