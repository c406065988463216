// Judge votes and human labels from files: the long formats of `noisefloor import votes`
// and `import labels`, and the released files of the missing-information judge study
// (seed 004 §2.6, §3.1, §3.4; ../shared/data/missing-info-judges).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/status.h"

namespace nf {

/// One judge vote: judge `judge` (of provider family `judge_provider`) on subject
/// `subject`'s answer to item `item` (cluster = the prompt it came from). label 1/0, or
/// nullopt for a missing vote (a judge that gave no verdict).
struct VoteRecord {
  std::string subject, subject_provider, item, cluster, judge, judge_provider;
  std::optional<int> label;
};

/// One human rating: rater `rater` on subject `subject`'s answer to item `item`, 1/0.
struct LabelRecord {
  std::string rater, subject, item;
  int label = 0;
};

/// Maps a subject model name to its provider family by name prefix, first match wins.
/// Default rules: "gpt-" -> openai, "o1"/"o3"/"o4" -> openai, "opus-"/"claude-"/
/// "sonnet-"/"haiku-" -> anthropic, "grok-" -> xai, "gemini-" -> google. `overrides`
/// (exact model name -> provider) take precedence; an unmatched name is NotFound.
struct ProviderMap {
  std::vector<std::pair<std::string, std::string>> prefixes = {
      {"gpt-", "openai"},      {"o1", "openai"},       {"o3", "openai"},      {"o4", "openai"},
      {"opus-", "anthropic"},  {"claude-", "anthropic"}, {"sonnet-", "anthropic"}, {"haiku-", "anthropic"},
      {"grok-", "xai"},        {"gemini-", "google"}};
  std::map<std::string, std::string> overrides;

  /// The provider of `model`, or NotFound naming it (add an override).
  Result<std::string> provider_of(const std::string& model) const;
};

/// Reads the long vote format: CSV (header row, any column order, RFC 4180 quoting) or
/// JSONL (by extension .csv / .jsonl / .json) with columns subject, subject_provider,
/// item, cluster, judge, judge_provider, label. label is 1/0/true/false; empty (CSV) or
/// null (JSONL) = missing vote (an absent label field is an error: a misspelt header must
/// not turn every vote into a missing one). cluster may be empty (= item).
/// Errors: InvalidArgument "path:line: column: problem" for a missing column (a CSV's at
/// the header's line, listing the header and the closest name; a JSONL object's at its
/// line), an empty key field, a bad label, or a second vote of one judge on one (subject,
/// item) (naming the first one's line); in JSONL also a key
/// repeated in one object (data/json_line.h parse_json_line); two values of one key
/// column (subject, subject_provider, item, cluster after its default, judge,
/// judge_provider) that differ only by surrounding whitespace ("q1", "q1 "), naming both
/// spellings and their first lines, and a key value that is only whitespace
/// (data/key_spellings.h). A key value with surrounding whitespace and no twin is kept as
/// written. Warnings (appended to `*warnings` when given; the votes are still read): two
/// values of one key column that differ only by letter case, naming both.
Result<std::vector<VoteRecord>> read_votes(const std::string& path, std::vector<std::string>* warnings = nullptr);

/// Reads the long label format (CSV or JSONL): rater, subject, item, label (1/0/true/false).
/// Errors: as read_votes() (key columns rater, subject, item); an empty label ("FILE:LINE:
/// label: empty: a human label is 1 (criterion met) or 0 (not met) ..."); a second label of
/// one rater on one (subject, item), naming the first one's line. Warnings: as read_votes().
Result<std::vector<LabelRecord>> read_labels(const std::string& path, std::vector<std::string>* warnings = nullptr);

/// Reads the released votes.jsonl: one object per line with subject_model, item
/// (integer probe index), prompt_id, theme, votes {judge provider: true/false/null}.
/// The item key is the probe index as text ("0".."49"), rated per subject; cluster =
/// prompt_id; the judge is named by its provider (the released file names judges by
/// provider). Subject providers come from `providers`.
/// Errors: InvalidArgument "path:line: field: problem"; NotFound for an unknown subject
/// provider (with the line).
Result<std::vector<VoteRecord>> read_released_votes(const std::string& path, const ProviderMap& providers = {});

/// One entry of key.json: annotation id -> the subject's answer it shows.
struct AnnotationKey {
  std::string subject, item, prompt_id;
};
/// Reads key.json: {"A001": {"subject_model", "item", "prompt_id", ...}, ...}.
/// Errors: InvalidArgument "path: A001: field: problem".
Result<std::map<std::string, AnnotationKey>> read_annotation_key(const std::string& path);

/// Reads a labels_<RATER>.csv: header annotation_id,human_label; labels 0/1.
/// Returns (annotation id, label) in file order. Errors: InvalidArgument "path:line: ...".
Result<std::vector<std::pair<std::string, int>>> read_annotation_labels(const std::string& path);

/// Reads perturbation_audit.csv: prompt_id -> {theme, trunc_form, determinacy,
/// task_type, ...} (every column but prompt_id, as strings). Errors: InvalidArgument.
Result<std::map<std::string, nlohmann::json>> read_perturbation_audit(const std::string& path);

/// Everything `import missing-info DIR` stores.
struct MissingInfoData {
  std::vector<VoteRecord> votes;
  std::vector<LabelRecord> labels;    // raters named from labels_<RATER>.csv
  std::vector<std::string> raters;    // sorted
  /// item id -> (cluster, metadata: prompt_id, theme, and the audit strata when the
  /// prompt is in perturbation_audit.csv).
  std::map<std::string, std::pair<std::string, nlohmann::json>> items;
};

/// Reads votes.jsonl, key.json, every labels_*.csv and perturbation_audit.csv (optional)
/// from `dir`. Errors: NotFound if votes.jsonl or key.json is missing; NotFound if a
/// label's annotation id is not in key.json; the readers' errors.
Result<MissingInfoData> read_missing_info_dir(const std::string& dir, const ProviderMap& providers = {});

}  // namespace nf
