// noisefloor import inspect | lm-eval: other harnesses' logs into a store.
#include <cstdio>
#include <map>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/common.h"
#include "data/inspect_log.h"
#include "data/lm_eval_log.h"
#include "runner/harness_import_check.h"
#include "runner/import.h"
#include "store/store.h"

namespace nf::cli {

int import_harness(const HarnessImportArgs& args) {
  const bool inspect = args.format == "inspect";
  if (inspect && (!args.subject.empty() || !args.task.empty()))
    return fail("import", InvalidArgument("--subject and --task apply to lm-eval (an Inspect log names its model and "
                                          "task)"));
  std::vector<HarnessLog> logs;
  for (const auto& f : args.files) {
    Result<HarnessLog> log = inspect ? read_inspect_log(f, {args.cluster_field})
                                     : read_lm_eval_samples(f, {args.subject, args.task, "default", args.cluster_field});
    if (!log.ok()) return fail("import", log.status());
    for (const auto& w : log->warnings) std::fprintf(stderr, "import: warning: %s\n", w.c_str());
    logs.push_back(std::move(*log));
  }
  if (Status st = check_distinct_runs(logs); !st.ok()) return fail("import", st);
  // Replicates must have answered the same input; runs missing items are said.
  auto same = check_same_items(logs);
  if (!same.ok()) return fail("import", same.status());
  for (const auto& w : *same) std::fprintf(stderr, "import: warning: %s\n", w.c_str());
  if (Status st = code_label_scores(logs); !st.ok()) return fail("import", st);  // one code per label across logs
  auto store = Store::open(args.store_path);
  if (!store.ok()) return fail("import", store.status());
  if (Status st = check_cells_not_stored(logs, **store); !st.ok()) return fail("import", st);
  {  // the items already stored (another model's runs of the task, imported before)
    auto items = (*store)->items();
    if (!items.ok()) return fail("import", items.status());
    std::map<std::string, nlohmann::json> stored;
    for (auto& row : *items) stored.emplace(row.item, std::move(row.data));
    if (Status st = check_same_items_as_stored(logs, stored, args.store_path); !st.ok()) return fail("import", st);
  }
  std::string name = args.study_name;
  if (name == "imported") name = inspect ? "inspect-import" : "lm-eval-import";
  auto sum = import_harness_logs(logs, **store, name, args.format, {"floor", "paired_subjects"});
  if (!sum.ok()) return fail("import", sum.status());
  for (const auto& n : sum->notes) std::fprintf(stderr, "import: %s\n", n.c_str());
  std::fprintf(stderr, "import: %lld %s log(s) -> %lld draws (%lld api_error, never scored) of %lld items, %lld "
               "subject(s) into %s\nnext: noisefloor analyze --store %s --out DIR\n",
               static_cast<long long>(sum->logs), args.format.c_str(), static_cast<long long>(sum->draws),
               static_cast<long long>(sum->api_errors), static_cast<long long>(sum->items),
               static_cast<long long>(sum->subjects), args.store_path.c_str(), args.store_path.c_str());
  return 0;
}

}  // namespace nf::cli
