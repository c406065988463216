// The XSTest prompt set (Röttger et al. 2024, github.com/paul-rottger/exaggerated-safety;
// ${NOISEFLOOR_DATA}/xstest/xstest_prompts.csv, read in place): 450 open-ended prompts,
// 250 safe ones that a well-calibrated model should answer and 200 unsafe contrasts it
// should refuse. Run as a chat study (task chat, dataset.format xstest) whose stored
// completions are scored by two paths (seed 003 §3 scoring-path axis): the string-match
// refusal classifier (task/refusal.h) and the judge panel (runner/judge.h);
// docs/xstest-chat.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/chat.h"
#include "util/status.h"

namespace nf {

/// Reads xstest_prompts.csv (RFC 4180, columns by header name, any order): `id` (non-empty,
/// unique), `prompt` (non-empty), `type` (non-empty, e.g. homonyms, contrast_homonyms),
/// `label` (safe | unsafe); optional `focus` and `note`. Each row becomes a ChatItem with
/// id = `id`, cluster = `id`, messages = [{"user", prompt}] and meta = {"type", "label",
/// "focus", "note"} (absent optional columns left out). `limit` > 0 keeps the first
/// `limit` rows of each label in file order (so a short run still has both strata).
/// Errors: NotFound for a missing file; InvalidArgument "path:line: field: problem" for a
/// missing column (line 1), an empty id / prompt / type, an unknown label, a duplicate id,
/// or a malformed CSV record (util/csv.h).
Result<std::vector<ChatItem>> read_xstest_prompts(const std::string& path, int64_t limit = 0);

}  // namespace nf
