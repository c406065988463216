// Draws read from another evaluation harness's logs (Inspect AI, lm-evaluation-harness),
// in the shape `noisefloor import inspect | lm-eval` writes into a store.
#pragma once

#include <map>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/types.h"
#include "util/status.h"

namespace nf {

/// One draw of a harness log: one sample (item) in one epoch / run / repeat of one model.
/// `status` is kOk (with outcomes) or kApiError (the harness recorded an error for the
/// sample: never scored, no outcomes). `replicate` counts from 0 within its log; the
/// import offsets it when several logs hold the same (subject, condition, config).
struct HarnessDraw {
  std::string item, cluster;
  int replicate = 0;
  DrawStatus status = DrawStatus::kOk;
  std::vector<Outcome> outcomes;
  std::string content;  // the model's final answer text, when the log has it
  std::string error;    // the harness's error message for an api_error draw
  std::string served_model, finish_reason;
  int64_t prompt_tokens = -1, completion_tokens = -1;
  nlohmann::json extra = nlohmann::json::object();  // where it came from (log, member, epoch ...)
};

/// How one outcome's values are written in one log: all scores (what Inspect's
/// value_to_float converts: C, I, P, N, yes/no/true/false, numbers, booleans) or all
/// labels (any other string: a category), and the first value met, for messages.
struct ScoreKind {
  bool labels = false;
  std::string first_where;  // "samples/2_epoch_1.json (sample 2, epoch 1)"
  std::string first_value;  // as written in the log (JSON): "C", 0.5, "correct"
};

/// What one log says about the input of one item, so that the replicates of an item across
/// the logs of one import can be checked to have answered the same input
/// (check_same_items). Fields a log does not carry are absent, and only fields both
/// records carry are compared.
struct ItemIdentity {
  std::string where;  // the item's first record in its log: "FILE:LINE" (lm-eval), "FILE: MEMBER (sample S, epoch E)"
  std::string label;  // how messages name the item: "doc_id 3", "sample 3"
  /// Field -> value that every record of the item in one task must share; a difference is
  /// a different dataset version: lm-eval "doc_hash", "target_hash" (as written); Inspect
  /// "input sha256", "target sha256" (sha256_hex of the value's JSON, keys sorted, a chat
  /// message's generated `id` left out).
  std::map<std::string, std::string> same;
  /// Field -> value whose difference between runs of one cell is only a warning: lm-eval
  /// "prompt_hash" (the same document under another prompt: few-shot examples or template).
  std::map<std::string, std::string> warn;
};

/// One log file (one model x task x configuration run) as read.
struct HarnessLog {
  std::string path;
  std::string source;     // "inspect" | "lm-eval"
  std::string subject;    // the model
  std::string condition;  // the task
  std::string config;     // stable id of the generation settings ("default" when none)
  /// What identifies the run this log holds, so the same run given twice (the same file
  /// twice, or a copy) is refused instead of becoming extra replicates: Inspect
  /// "eval_id <id>" (eval.eval_id, globally unique per eval; a retry gets a new one), or
  /// "sha256 <hex>" of the file for an older log without one; lm-eval "<file name>
  /// sha256 <hex>" (the name carries the run's timestamp; two runs that answered alike
  /// keep distinct names). Kept with every draw as extra.run.
  std::string run_id;
  nlohmann::json subject_spec = nlohmann::json::object();
  nlohmann::json config_spec = nlohmann::json::object();
  nlohmann::json item_data = nlohmann::json::object();  // item id -> data kept with the item
  /// Item id -> what its first record says about its input (check_same_items). The readers
  /// refuse a log whose own records of one item disagree (InvalidArgument,
  /// identity_mismatch_message).
  std::map<std::string, ItemIdentity> item_identity;
  std::vector<HarnessDraw> draws;
  std::vector<std::string> warnings;  // said on stderr by the CLI ("declares 4 epochs, holds 1")
  /// Outcome name -> whether its values are scores or labels (Inspect; empty for lm-eval).
  /// A label outcome's draws carry the label in Outcome::label and its category code in
  /// Outcome::value (code_label_scores).
  std::map<std::string, ScoreKind> score_kinds;
};

/// "k=v,k=v" over the keys of a JSON object in sorted order (strings unquoted, other
/// values as compact JSON), or "default" for an empty/null object: the config id of a
/// harness's generation settings, e.g. {"reasoning_tokens": 16000} -> "reasoning_tokens=16000".
std::string harness_config_id(const nlohmann::json& settings);

/// InvalidArgument "scores.OUTCOME: mixes scores and labels: FILE: WHERE has VALUE (a score
/// ...), but FILE: WHERE has VALUE (a label). ..." for an outcome whose first values `a`
/// (in file `a_path`) and `b` (in `b_path`) are of different kinds, saying what to do.
std::string mixed_scores_message(const std::string& outcome, const ScoreKind& a, const std::string& a_path,
                                 const ScoreKind& b, const std::string& b_path);

/// Codes the label outcomes of `logs` (score_kinds[name].labels) as categories, one code
/// per distinct label, numbered 0, 1, ... in the order first met (logs in order, draws in
/// order), the same code for the same label in every log (as `import draws` codes a label
/// column); Outcome::value becomes the code, Outcome::label keeps the label. Errors:
/// InvalidArgument (mixed_scores_message) when an outcome is all scores in one log and all
/// labels in another. For `import inspect` after every log is read (read_inspect_log codes
/// each log alone).
Status code_label_scores(std::span<HarnessLog> logs);

/// InvalidArgument when two of `logs` hold the same run (equal run_id), naming both
/// paths and what they share ("... and ... hold the same run (eval_id X): give each run
/// once"); OK otherwise. For `import inspect | lm-eval` before anything is written.
Status check_distinct_runs(const std::vector<HarnessLog>& logs);

/// "WHERE_B: LABEL: FIELD VALUE_B differs from WHERE_A (FIELD VALUE_A): ..." for two
/// records of one item (`a` first met, `b` later) whose `same` field `field` differs,
/// saying what it means (a different dataset version under the same id) and what to do
/// (write it to another store or import one version). `what` names the harness's unit:
/// "document" (lm-eval) or "sample" (Inspect).
std::string identity_mismatch_message(const ItemIdentity& a, const ItemIdentity& b, const std::string& field,
                                      const std::string& what);

/// Checks that `logs` (one import, in command-line order) answered the same inputs where
/// they share an item, before anything is written. Within one task (condition), every
/// log's record of an item must carry the same ItemIdentity::same fields as the first
/// log holding the item (across models too: the store pairs models on the item);
/// otherwise InvalidArgument (identity_mismatch_message, naming both files and both
/// values). On success, the warnings to say on stderr: per log, the number of items
/// whose `warn` fields (lm-eval prompt_hash) differ from the first earlier log of the
/// same (subject, condition, config) holding them; per log of a cell with several logs
/// that holds draws of fewer items than the cell's logs together: "run FILE holds 3 of
/// the 4 documents the runs of (S, T, K) hold (missing: doc_id 2): 1 item has fewer
/// replicates than the others". Logs without identities (fields absent) add nothing.
Result<std::vector<std::string>> check_same_items(const std::vector<HarnessLog>& logs);

/// Keeps each item's identity with the data stored with the item, so that a later import
/// into the same store can be compared (check_same_items_as_stored): for every item of
/// log->item_data that has an item_identity with `same` fields, item_data[item]["identity"]
/// = {"task": condition, "where": ItemIdentity::where, FIELD: VALUE...}. The readers call it
/// last.
void keep_item_identity(HarnessLog* log);

/// Compares `logs` with the items a store already holds (`stored`: item id -> the item's
/// data, as Store::items() gives it; `store_name` for messages): an item whose stored
/// "identity" (keep_item_identity) is of the same task and has a `same` field that the log's
/// record of the item carries with another value is refused (InvalidArgument "WHERE: LABEL:
/// FIELD VALUE differs from the item stored in STORE (FIELD VALUE, from WHERE_STORED): ...").
/// Items stored without an identity (other imports, stores written before it was kept) are
/// not compared. OK otherwise.
Status check_same_items_as_stored(const std::vector<HarnessLog>& logs,
                                  const std::map<std::string, nlohmann::json>& stored, const std::string& store_name);

}  // namespace nf
