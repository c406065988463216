// The check a resumed run makes before it counts stored draws as done: were they made
// under the study as it reads now? (A draw is looked up by its key alone — subject, item,
// condition, config, replicate — and a config whose axes do not vary is always `default`,
// so an edited temperature, model, sim setting, seed or answer key would otherwise reuse
// the old draws as if they had been drawn under the new study.)
#pragma once

#include <vector>

#include "core/types.h"
#include "spec/study.h"
#include "store/store.h"
#include "task/task.h"
#include "util/status.h"

namespace nf {

/// Refuses to run `study` into `store` when the store's finished draws (status other than
/// api_error) were made under something the study now says differently, compared with the
/// store's own records before the run overwrites them:
///  - the study seed, or the task kind (study record);
///  - for each subject with finished draws: backend, model, sim, extra_body, logprobs
///    (table `subjects`; provider, base_url, api key, timeouts, concurrency, retries and
///    rate limits may change between runs: they do not change what a draw asks);
///  - for each config id with finished draws: every field of its spec (the study record's
///    `configs`: temperature, top_p, seed, max_tokens, template, fewshot);
///  - for each item with finished draws: its stored data (question, options, answer key).
/// A field missing from an older store's record is not compared. A store without a study
/// record, or whose record came from an import (empty hash), or without finished draws,
/// passes. Not recorded, so not compared: task_options and noise_control.
/// Returns FailedPrecondition (exit 2) naming the store, what changed (old and new value),
/// how many draws it concerns, and the two ways out (a new store, or `--refresh`);
/// the store's read errors otherwise. Cost: one GROUP BY over `draws` and, only when some
/// item's data changed, the finished keys. Source: issue (new-user tryout, 2026-12-01).
Status check_stored_draws_match(const Study& study, const std::vector<TaskItem>& items,
                                const std::vector<Config>& configs, Store& store);

/// Refuses to run `study` into `store` when the store's draws are not this study's at all
/// (tester s11 finding 7: a run into a store of imported logs was accepted silently, and the
/// report then mixed both and called the complete run "partial"):
///  - the store holds draws written by an import (`import draws | inspect | lm-eval | ...`:
///    its study record has an empty hash), which were made by no study;
///  - the store holds draws of a study of another `name`.
/// Checked for `--refresh` too (a refresh replaces this study's planned draws only; the
/// others would stay beside them). A store without a study record or without draws passes.
/// Returns FailedPrecondition (exit 2) naming the store, how many draws it holds and whose,
/// and the way out (a new store; for a renamed study, its old name); the store's read
/// errors otherwise. Cost: the study record; a count of the draws only when the record is
/// an import's or another study's.
Status check_store_holds_this_study(const Study& study, Store& store);

}  // namespace nf
