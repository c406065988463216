// Planning and executing draws (DESIGN.md "Data flow"): Study -> DrawPlan -> Backend ->
// Task -> Store. Resumable: a re-run executes only draws the store does not hold (or holds
// as api_error), so a SIGKILL loses at most the draws in flight and never duplicates one.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/backend.h"
#include "core/types.h"
#include "spec/study.h"
#include "store/store.h"
#include "task/task.h"
#include "util/clock.h"
#include "util/status.h"

namespace nf {

/// One draw to execute.
struct PlannedDraw {
  DrawKey key;
  size_t subject_index = 0;
  size_t item_index = 0;
  size_t config_index = 0;
};

/// Every draw of the study, in the order subject, config, condition, item, replicate.
std::vector<PlannedDraw> plan_draws(const Study& study, const std::vector<TaskItem>& items,
                                    const std::vector<Config>& configs);

/// The seed sent with a replicate's request: a 31-bit value mixed from the config seed
/// and the replicate index (so replicates differ, and a replicate is reproducible), or
/// nullopt when the config seed is null (no seed sent).
std::optional<int64_t> request_seed(const Config& config, int replicate);

/// The response-cache key: SHA-256 over the backend identity, the request body and the
/// draw key (which includes the replicate), so a cached response never stands in for
/// another replicate.
std::string cache_key(const std::string& backend_identity, const nlohmann::json& request_body, const DrawKey& key);

/// Builds the study's task and loads its items from the dataset. Errors: the dataset
/// reader's (naming file, line and field); InvalidArgument for an unknown task.
Result<std::unique_ptr<Task>> make_task(const Study& study);

/// Builds the backend for a subject. openai: reads the API key from the environment
/// variable the subject names. Errors: InvalidArgument for a bad sim parameter, an
/// unknown backend, or a named key variable that is unset.
Result<std::unique_ptr<Backend>> make_backend(const SubjectSpec& subject);

/// The study as JSON for the store's study record (analyses as [{name, options}]).
nlohmann::json study_to_json(const Study& study);

struct RunOptions {
  bool use_cache = true;       // look up the response cache before calling a backend
  bool progress = true;        // print a progress line with rate and ETA on stderr
  int threads = 0;             // worker threads; 0 = the largest subject concurrency
  int64_t max_draws = -1;      // stop after this many executed draws (tests); -1 = all
  const std::atomic<bool>* stop = nullptr;  // set by a signal handler to stop cleanly
  Clock* clock = nullptr;      // nullptr = real_clock()
};

struct RunSummary {
  int64_t planned = 0;
  int64_t already_done = 0;    // finished draws found in the store at start
  int64_t executed = 0;        // draws completed and committed by this run
  int64_t ok = 0, parse_error = 0, api_error = 0, refused = 0, cached = 0;
  bool interrupted = false;
  std::string first_api_error;
  double seconds = 0.0;
};

/// Loads the dataset, records study/items/subjects/configs in the store, and executes
/// every planned draw the store does not hold yet, committing each before counting it.
/// Errors: dataset/backend construction errors (InvalidArgument/NotFound); a store
/// write failure (DataLoss). API failures are not errors of the run: they are stored
/// as api_error draws and counted.
Result<RunSummary> run_study(const Study& study, Store& store, const RunOptions& options);

}  // namespace nf
