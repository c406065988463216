// One read of a store for what `analyze` needs before its floors (issue 14): the status
// counts, the answers (reply languages) and the ok outcomes' codes.
#pragma once

#include <functional>
#include <string_view>
#include <vector>

#include "store/store.h"
#include "util/status.h"

namespace nf {

/// store.status_counts_and_answers(answer_fn) and store.scan_outcome_codes(include_cached,
/// dict, fn) from one read: the same counts, answers and outcome codes in the same orders.
/// The SQLite store reads the draws table once instead of twice, in one transaction with
/// the outcomes; other stores make the two calls. Returns the counts, or their read error;
/// the outcome scan's own error goes to *outcome_status (the counts are still returned).
/// Threads: answer_fn runs on the calling thread; `fn` may run on a second thread that the
/// SQLite store starts for a store whose outcomes are all chunks (it decodes and reads the
/// draws while `fn` consumes the values, issue 14). Either way `fn` is called one call at a
/// time, with the same values in the same order, and has returned for the last time when
/// this function returns; an exception from `fn` is rethrown here.
Result<std::vector<StatusCount>> status_counts_answers_and_outcome_codes(
    Store& store,
    const std::function<void(std::string_view subject, std::string_view config, std::string_view status,
                             std::string_view content)>& answer_fn,
    bool include_cached, OutcomeDictionaries* dict, const std::function<void(const OutcomeCodes&)>& fn,
    Status* outcome_status);

}  // namespace nf
