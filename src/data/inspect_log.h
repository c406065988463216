// Inspect AI evaluation logs -> harness draws (`noisefloor import inspect LOG...`).
//
// Both log formats are read: `.eval` (a zip archive: header.json, one
// samples/<id>_epoch_<n>.json per sample and epoch, summaries.json, reductions.json;
// read with libzip) and `.json` (one document with a `samples` array), log format
// versions 1 and 2 (version 1 keeps one `score` per sample instead of a `scores` map).
// docs/import-inspect.md has the field mapping and a worked example.
#pragma once

#include <map>
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
/// value_to_float does: "C" -> 1, "I" -> 0, "P" -> 0.5, "N" -> 0, "yes"/"true" -> 1,
/// "no"/"false" -> 0, a numeric string -> its number, a number as it is, a boolean 1/0.
/// Any other string becomes a category index per outcome (first seen = 0, kept in
/// `categories`) with the string as its label. A dict value gives one outcome per key
/// ("scorer.key"), a list one per position ("scorer[i]"); null gives none. `answer`
/// (the score's extracted answer) becomes the label when it is a string.
std::vector<Outcome> inspect_score_outcomes(const std::string& scorer, const nlohmann::json& value,
                                            const nlohmann::json& answer,
                                            std::map<std::string, std::map<std::string, int>>& categories);

/// Reads one Inspect log (.eval or .json) into draws: subject = eval.model, condition =
/// eval.task, config = harness_config_id(eval.model_generate_config merged with
/// plan.config), item = sample id, cluster = the sample id or metadata[cluster_field],
/// replicate = epoch - 1, one outcome per scorer (inspect_score_outcomes); a sample with
/// an `error` is an api_error draw without outcomes; a sample without scores is left out
/// (with a warning). Warnings (not errors): the log declares more epochs (eval.config.epochs)
/// than it holds for some sample; its status is not "success"; samples without scores.
/// `categories` carries string-score categories across the logs of one import.
/// Errors (InvalidArgument naming the file, the zip member or sample, and the field):
/// not a zip / unreadable member / malformed JSON, a version other than 1 or 2, missing
/// eval.model or eval.task, a sample without id or with an epoch < 1, a missing cluster
/// field, a log without samples; NotFound if the file is missing.
Result<HarnessLog> read_inspect_log(const std::string& path, const InspectReadOptions& options,
                                    std::map<std::string, std::map<std::string, int>>& categories);

}  // namespace nf
