// Dataset readers for multiple-choice items.
#pragma once

#include <string>
#include <vector>

#include "core/types.h"
#include "util/status.h"

namespace nf {

/// Reads MedQA-style JSONL: one object per line with "question" (string), "options"
/// (object letter -> text, letters A.. in order) and "answer_idx" (a letter among the
/// options). Optional id_field / cluster_field name fields holding the item id and the
/// cluster; without them the id is "medqa-<line>" (1-based line number) and the cluster
/// is the id. Blank lines are skipped. `limit` > 0 keeps the first `limit` items.
/// Errors (InvalidArgument, naming "path:line: field: problem"): malformed JSON, a
/// missing or non-string question, missing/empty options, missing answer_idx, an
/// answer_idx that is not one of the options, duplicate item ids. NotFound if the file
/// does not exist.
Result<std::vector<McqItem>> read_medqa_jsonl(const std::string& path, int64_t limit = 0,
                                              const std::string& id_field = "",
                                              const std::string& cluster_field = "");

}  // namespace nf
