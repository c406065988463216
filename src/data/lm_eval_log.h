// lm-evaluation-harness `--log_samples` files -> harness draws (`noisefloor import lm-eval`).
//
// lm-eval writes one `samples_<task>_<timestamp>.jsonl` per task and run under
// <output_path>/<model name with "/" as "__">/, one JSON object per document and filter:
// doc_id, doc, target, arguments, resps, filtered_resps, filter, metrics (the metric
// names), doc_hash, prompt_hash, target_hash and one field per metric (lm_eval/evaluator.py,
// loggers/evaluation_tracker.py). docs/import-lm-eval.md has the mapping.
#pragma once

#include <string>

#include "data/harness_log.h"
#include "util/status.h"

namespace nf {

struct LmEvalReadOptions {
  std::string subject;        // the model; "" = the file's folder name with "__" read as "/"
  std::string task;           // "" = from the file name samples_<task>_<timestamp>.jsonl
  std::string config = "default";
  std::string cluster_field;  // a `doc` field naming the item's cluster; "" = the doc_id
};

/// Reads one samples file (one run) into draws: subject and task as in LmEvalReadOptions,
/// item = doc_id, condition = task, outcome "<metric>,<filter>" = each metric field of
/// the line (numbers as they are, booleans 1/0; the filtered response is the label).
/// Several lines of one doc_id (one per filter) add their outcomes to one draw. run_id =
/// "<file name> sha256 <hex of the file>" (harness_log.h). item_identity[doc_id] = the
/// line's doc_hash and target_hash (same: check_same_items refuses runs that differ) and
/// prompt_hash (warn), those the line carries, from the document's first line.
/// With `repeats: K` (one request whose resps hold K > 1 generations) lm-eval keeps one
/// metric per document, not per generation: the K generations become K draws
/// (replicates 0..K-1) scored by noisefloor as outcome "draw_exact_match,<filter>" =
/// 1 if the generation's filtered response (filtered_resps[0][k] when the filter kept
/// all K, else the raw generation), trimmed, equals the trimmed target; the per-document
/// metrics are not imported and a warning says so.
/// Errors (InvalidArgument "file:line: field: problem"): malformed JSON, a missing or
/// non-integer doc_id, a metric that is neither a number nor a boolean, a metric written
/// as a bare NaN, Infinity or -Infinity (Python's json writes them; lm-eval's NaN is a
/// metric it could not compute for the document): "file:line: bleu: NaN is not a number
/// this import accepts (...)"; the same literals elsewhere (in `doc`, in loglikelihood
/// `resps`) are read as null, not errors; no metric field,
/// a doc_id given twice for one filter, a missing cluster field, an empty file, two lines
/// (filters) of one doc_id with a different doc_hash or target_hash
/// (identity_mismatch_message); a subject
/// or task that cannot be inferred from the path; NotFound for a missing file.
Result<HarnessLog> read_lm_eval_samples(const std::string& path, const LmEvalReadOptions& options);

}  // namespace nf
