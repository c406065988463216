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
#include <string_view>
#include <utility>
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

/// The seed sent with the requests of draw `key`: core/draw_seed.h draw_request_seed over
/// the config seed, the study seed and the whole draw key (subject, item, condition,
/// config, replicate), so no two draws share a sampler stream on a server that honours
/// `seed` and every draw stays reproducible; nullopt when the config seed is null (no
/// seed sent). Issue 13 item 0: a seed of (config seed, replicate) alone made replicate r
/// of every item and condition repeat one stream.
std::optional<int64_t> request_seed(const Config& config, uint64_t study_seed, const DrawKey& key);

/// The response-cache key: SHA-256 over the backend identity, the request body and the
/// draw key (which includes the replicate), so a cached response never stands in for
/// another replicate.
std::string cache_key(const std::string& backend_identity, const nlohmann::json& request_body, const DrawKey& key);
/// The same key from the request body already dumped (`request_body_text`: compact, as
/// nlohmann dumps it): equal to cache_key(identity, body, key) for a body whose strings are
/// valid UTF-8 (a body that is not cannot be dumped strictly, so it had no key before).
std::string cache_key_text(const std::string& backend_identity, std::string_view request_body_text, const DrawKey& key);

/// Builds the study's task and loads its items from the dataset. Errors: the dataset
/// reader's (naming file, line and field); InvalidArgument for an unknown task.
Result<std::unique_ptr<Task>> make_task(const Study& study);

/// Builds the backend for a subject. openai / anthropic: reads the API key from the
/// environment variable the subject names and passes the subject's timeouts, retry
/// settings (max_retries, retry_after_cap_s), budgets (rpm, tpm) and its concurrency as
/// the ceiling of the adaptive in-flight limit after 429s (off when the subject sets
/// adaptive_429: false); `abandon` (not owned, may be null) cuts every call in flight once
/// set (backend/openai.h OpenAiOptions::abandon; in-process sim calls are not cut).
/// Errors: InvalidArgument for a bad sim parameter, an unknown backend, or a named key
/// variable that is unset.
Result<std::unique_ptr<Backend>> make_backend(const SubjectSpec& subject,
                                              const std::atomic<bool>* abandon = nullptr);

/// The study as JSON for the store's study record (analyses as [{name, options}]; subjects
/// with their provider family; the judge block, panel included, when the study has one).
/// Base URLs are recorded without credentials (strip_url_userinfo); keys never appear.
nlohmann::json study_to_json(const Study& study);

/// The study's provenance card (issue 6 item 8): tool version, git commit of the study
/// file's directory (null outside a git work tree), SHA-256 of the dataset file and of the
/// study file, and each subject's backend identity (URL with credentials stripped).
nlohmann::json provenance_card(const Study& study);

/// The request body `subject` sends for `extra_body`: the subject's extra_body plus, for
/// an openai subject with logprobs > 0, {"logprobs": true, "top_logprobs": N}.
nlohmann::json effective_extra_body(const SubjectSpec& subject);

struct RunOptions {
  bool use_cache = true;       // look up the response cache before calling a backend
  bool refresh = false;        // re-run every planned draw (ignoring the cache), replacing
                               //   stored draws transactionally (`run --refresh`)
  bool progress = true;        // print a progress line with rate and ETA on stderr
  int threads = 0;             // worker threads; 0 = the largest subject concurrency
  int64_t max_draws = -1;      // stop after this many executed draws (tests); -1 = all
  const std::atomic<bool>* stop = nullptr;  // set by a signal handler to stop cleanly
  Clock* clock = nullptr;      // nullptr = real_clock()
  // A worker's batch (runner/worker.h): run exactly these planned draws, without the
  // finished-keys scan (the caller claimed them as not done). InvalidArgument if a key is
  // not in the study's plan. nullptr = every planned draw the store does not hold.
  const std::vector<DrawKey>* keys = nullptr;
  // A source of batches (a worker, runner/worker.h): when set, run_study prepares once
  // (dataset, task, backends, plan) and then runs batch after batch, calling next_keys()
  // whenever the draws it has are handed out (one caller at a time; the other threads keep
  // running). An empty batch ends the run; an error stops it. `keys` is ignored.
  std::function<Result<std::vector<DrawKey>>()> next_keys;
  bool record_study = true;    // write the study record, items, subjects and configs first
  // Circuit breaker (docs/backends.md "A server that goes down mid-run"): after this many
  // draws of one subject IN A ROW (in the order they finish, cache hits not counted) ended
  // as api_error because the server could not be reached or failed -- the last attempt a
  // transport error (connection refused or reset, timeout, transfer cut off) or an HTTP
  // 5xx, after the retries -- the run stops as on an interrupt: no new draw starts, the
  // draws in flight finish and every finished draw is committed (the failed ones as
  // api_error, which a resume runs again), the unrun draws stay for a resume, and
  // RunSummary::breaker says why. HTTP 4xx (429 included) never counts: the server
  // answered. Any other ending of a draw that made a call resets the count. 0 = off.
  // A hung server trips it at the first draw whose last attempt was silent (backend.h
  // ChatResponse::endpoint_silent: the attempt waited its whole timeout_s and no HTTP
  // response came from that endpoint to any call meanwhile), whatever the streak.
  int max_consecutive_api_errors = 16;
  // The grace of a stop (a signal through `stop`, the circuit breaker, a failed commit):
  // the draws in flight get this many seconds to finish and be committed; then every HTTP
  // call still in flight is cut (within about a second on the thread path) and its draw
  // abandoned: not stored, so a resume runs it (RunSummary::abandoned). In-process (sim)
  // calls always finish. --max-draws never abandons.
  double stop_grace_s = 5.0;
  // A single-call task (Task::single_call, MCQ) whose subjects are all HTTP backends runs
  // on one event-loop thread driving up to `threads` calls (libcurl multi); false = one
  // blocking worker thread per call in flight (the path every other task takes). Same
  // draws, same store contents (tests/runner/event_loop_test.cc).
  bool event_loop = true;
  // Event-loop threads sharing the calls in flight (each drives about threads / event_loops
  // transfers; 2 = the cores of the dev box, as `wrk -t2`). >= 1.
  int event_loops = 2;
  // Stores one finished draw with its new cache entries; default Store::put_draw_grouped
  // (replace_draw under `refresh`). AlreadyExists is not an error of the run.
  std::function<Status(const Draw&, const std::vector<Store::CacheEntry>&)> commit;
  // Stores a group of finished draws for the committing thread (one transaction; statuses
  // as Store::put_draw_group; `worker`: Store::put_claimed_draw_group). Default (empty):
  // Store::put_draw_group. Not used when `commit` is set or under `refresh`.
  std::function<Status(const std::vector<std::pair<const Draw*, const std::vector<Store::CacheEntry>*>>&,
                       std::vector<Status>*)>
      commit_group;
};

struct RunSummary {
  int64_t planned = 0;
  int64_t already_done = 0;    // finished draws found in the store at start
  int64_t executed = 0;        // draws completed and committed by this run
  int64_t ok = 0, parse_error = 0, api_error = 0, refused = 0, cached = 0;
  bool interrupted = false;
  int64_t abandoned = 0;       // draws in flight cut at the end of a stop's grace (not stored)
  std::string first_api_error;
  // Of api_error: the server answered HTTP 4xx other than 408 / 429, refusing the request
  // itself (a prompt longer than its context, a bad parameter): not an outage.
  int64_t api_error_refused_request = 0;
  // Non-empty when the circuit breaker stopped the run (RunOptions::max_consecutive_api_errors):
  // "subject 'S' (openai:http://...): 16 draws in a row failed at the API; last: connect: ...".
  // `interrupted` is then true when draws were left unrun.
  std::string breaker;
  bool event_loop = false;     // the draws ran on the event loop (RunOptions::event_loop)
  double seconds = 0.0;
  /// Where `run --refresh` stands (tester s10 finding 13). A refresh records itself in the
  /// store's meta table (key "refresh": {id, started_at, study_hash, finished_at}) and
  /// marks each draw written from then on (extra.refresh = id, plain runs included), so
  /// an interrupted refresh is seen by the next `run` / `audit`, and a `run --refresh` of
  /// the same study file resumes it, re-running only the planned draws that still hold
  /// answers from before it. Set when this run started, resumed or found an unfinished
  /// refresh (not for a worker's batches).
  struct Refresh {
    int64_t started_at = 0;   // unix seconds, when the refresh started
    bool resumed = false;     // this `--refresh` resumed it (it had not finished)
    bool restarted = false;   // an unfinished one existed, but the study file changed: started anew
    int64_t planned = 0;      // planned draws
    int64_t left = 0;         // planned draws still holding answers from before it (api_error ones count)
    bool finished = false;    // left == 0 after this run: the refresh is complete
  };
  std::optional<Refresh> refresh;
};

/// What `run` / `audit` say about a refresh after the run (RunSummary::refresh), "" when
/// there is nothing to say: an unfinished refresh ("a `run --refresh` started
/// 2026-12-02 05:40:12 UTC did not finish: 30 of 48 planned draws still hold answers from
/// before it (or none); run `noisefloor run STUDY --refresh` again to finish it: it
/// re-runs only those"), or a resumed one that is now complete. `study_path` names the
/// study file in the command.
std::string refresh_note(const RunSummary::Refresh& refresh, const std::string& study_path);

/// Loads the dataset, records study/items/subjects/configs in the store, and executes
/// every planned draw the store does not hold yet, committing each before counting it.
/// Errors: FailedPrecondition for a judging-only study (no subjects or no dataset);
/// dataset/backend construction errors (InvalidArgument/NotFound); a store
/// write failure (DataLoss). API failures are not errors of the run: they are stored
/// as api_error draws and counted.
Result<RunSummary> run_study(const Study& study, Store& store, const RunOptions& options);

/// Serving-stack noise control (seed 002 §5, App. B; issue 6 item 9; study key
/// `noise_control`): for each subject and each of the first `items` items under condition
/// "none", builds the draw's greedy request (temperature 0, the first config's other
/// settings and seed, replicate 0) and sends it `requests` times one after another, then
/// `requests` times again with `concurrency` requests in flight across all items. No
/// cache, no store. Returns
///   {"requests", "items", "concurrency",
///    "subjects": [{"subject", "serial_distinct_max", "concurrent_distinct_max",
///                  "serial_nondeterministic_items", "concurrent_nondeterministic_items",
///                  "api_errors", "cells": [{"item", "serial_distinct", "concurrent_distinct"}]}]}
/// where *_distinct counts distinct completion texts among the ok replies of a cell (1 =
/// deterministic). Errors: task/backend construction errors as run_study.
Result<nlohmann::json> run_noise_control(const Study& study);

}  // namespace nf
