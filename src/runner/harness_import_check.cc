// See harness_import_check.h.
#include "runner/harness_import_check.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

namespace nf {

namespace {

constexpr int64_t kMaxProbes = 1000;

std::string text_field(const nlohmann::json& extra, const char* key) {
  return extra.is_object() && extra.contains(key) && extra[key].is_string() ? extra[key].get<std::string>()
                                                                             : std::string();
}

}  // namespace

Status check_cells_not_stored(const std::vector<HarnessLog>& logs, Store& store) {
  NF_ASSIGN_OR_RETURN(std::vector<StatusCount> counts, store.status_counts());
  using Cell = std::tuple<std::string, std::string, std::string>;  // subject, condition, config
  std::map<Cell, int64_t> stored;
  for (const auto& c : counts) stored[{c.subject, c.condition, c.config}] += c.count;
  for (const HarnessLog& log : logs) {
    const Cell cell{log.subject, log.condition, log.config};
    auto it = stored.find(cell);
    if (it == stored.end() || it->second == 0) continue;
    const std::string file = std::filesystem::path(log.path).filename().string();
    bool same = false;
    std::set<std::string> other_files;
    if (!log.draws.empty()) {
      const std::string& item = log.draws.front().item;
      const int64_t probes = std::min(it->second, kMaxProbes);
      for (int64_t r = 0; r < probes && !same; ++r) {
        auto d = store.get_draw({log.subject, item, log.condition, log.config, static_cast<int>(r)});
        if (!d.ok()) {
          if (d.status().code() == StatusCode::kNotFound) continue;
          return d.status();
        }
        const std::string run = text_field(d->extra, "run");
        std::string from = text_field(d->extra, "log");
        if (from.empty()) from = text_field(d->extra, "file");
        same = run.empty() ? (!from.empty() && from == file) : run == log.run_id;
        if (!same && !from.empty()) other_files.insert(from);
      }
    }
    const std::string where = fmt::format("({}, {}, {})", log.subject, log.condition, log.config);
    if (same)
      return AlreadyExists(fmt::format(
          "{}: {} already holds this run ({}) of {}: it was imported before; nothing written", log.path,
          store.path(), log.run_id, where));
    std::string froms;
    for (const auto& f : other_files) froms += (froms.empty() ? "" : ", ") + f;
    return AlreadyExists(fmt::format(
        "{}: {} already holds {} draws of {}{}: a later import does not add a run to a stored cell (the replicates "
        "of a cell are numbered across the logs of one command). Import every run of the cell in one command into "
        "a new store (noisefloor import ... RUN1 RUN2 ... --store NEW); nothing written",
        log.path, store.path(), it->second, where,
        froms.empty() ? std::string(" from another run") : " from another run (" + froms + ")"));
  }
  return Status::Ok();
}

}  // namespace nf
