// Inspect AI evaluation logs -> harness draws (`noisefloor import inspect LOG...`).
//
// Both log formats are read: `.eval` (a zip archive: header.json, one
// samples/<id>_epoch_<n>.json per sample and epoch, summaries.json, reductions.json;
// read with libzip) and `.json` (one document with a `samples` array), log format
// versions 1 and 2 (version 1 keeps one `score` per sample instead of a `scores` map).
// docs/import-inspect.md has the field mapping and a worked example.
#pragma once

#include <string>
#include <vector>

#include "data/harness_log.h"
#include "util/status.h"

namespace nf {

struct InspectReadOptions {
  /// The sample metadata field that names an item's cluster (for the cluster bootstrap);
  /// "" = every sample is its own cluster [""].
  std::string cluster_field;
};

/// Maps one Inspect score value to outcomes named after its scorer, as Inspect's
/// value_to_float (inspect_ai scorer/_metric.py) does where it converts: "C" -> 1, "I" -> 0,
/// "P" -> 0.5, "N" -> 0 (exactly as written: "c" and "C " are not these), "yes"/"true" -> 1
/// and "no"/"false" -> 0 in any letter case (not trimmed), a string Python's float() reads
/// as a finite number -> that number (surrounding whitespace allowed; decimal digits, point
/// and exponent only), a number as it is, a boolean 1/0. Any other non-empty string
/// ("correct", "c", "NaN") is a label: an outcome with value NaN (the category is coded by
/// read_inspect_log / code_label_scores) and the string as label. A dict value gives one
/// outcome per key ("scorer.key"), a list one per position ("scorer[i]"); null gives none.
/// `answer` (the score's extracted answer) becomes the label of a score when it is a string
/// (else the value string for C/I/P/N/yes/no). Error: InvalidArgument "OUTCOME: value ""
/// is empty ..." for an empty (or blank) string.
Result<std::vector<Outcome>> inspect_score_outcomes(const std::string& scorer, const nlohmann::json& value,
                                                    const nlohmann::json& answer);

/// Reads one Inspect log (.eval or .json) into draws: subject = eval.model, condition =
/// eval.task, config = harness_config_id(eval.model_generate_config merged with
/// plan.config), item = sample id, cluster = the sample id or metadata[cluster_field],
/// replicate = epoch - 1, run_id = "eval_id <eval.eval_id>" (or "sha256 <hex>" of the file
/// when the log has none), item_identity[sample id] = "input sha256" and "target sha256"
/// (ItemIdentity) of the sample's first record, one outcome per scorer (inspect_score_outcomes); an outcome whose
/// values are all labels is coded as categories (first seen = 0; score_kinds says which;
/// code_label_scores recodes them across the logs of one import); a sample with
/// an `error` is an api_error draw without outcomes; a sample without scores is left out
/// (with a warning). Warnings (not errors): the log declares more epochs (eval.config.epochs)
/// than it holds for some sample; its status is not "success"; samples without scores.
/// Errors (InvalidArgument naming the file, the zip member or sample, and the field):
/// not a zip / unreadable member / malformed JSON, a version other than 1 or 2, missing
/// eval.model or eval.task, a sample without id or with an epoch < 1, a missing cluster
/// field, a log without samples, two epochs of one sample with a different input or target
/// (identity_mismatch_message), an empty score value, an outcome that mixes scores and
/// labels (mixed_scores_message: "scores.match: mixes scores and labels: FILE:
/// samples/1_epoch_1.json (sample 1, epoch 1) has "C" (a score ...), but FILE:
/// samples/2_epoch_3.json (sample 2, epoch 3) has "C " (a label). ..."); NotFound if the
/// file is missing.
Result<HarnessLog> read_inspect_log(const std::string& path, const InspectReadOptions& options);

}  // namespace nf
