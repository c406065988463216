// Checks over the logs of one harness import. See harness_log.h.
#include "data/harness_log.h"

#include <map>

#include <fmt/format.h>

namespace nf {

Status check_distinct_runs(const std::vector<HarnessLog>& logs) {
  std::map<std::string, const HarnessLog*> first;  // run_id -> first log holding it
  for (const HarnessLog& log : logs) {
    if (log.run_id.empty()) continue;
    auto [it, inserted] = first.emplace(log.run_id, &log);
    if (!inserted)
      return InvalidArgument(fmt::format(
          "{} and {} hold the same run ({}): the same log given twice, or a copy; its draws would count twice, as extra "
          "replicates. Give each run once",
          it->second->path, log.path, log.run_id));
  }
  return Status::Ok();
}

}  // namespace nf
