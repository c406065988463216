// Dataset readers for open-ended chat items (seed 004 §2.3, the missing-information
// probe): conversations a subject answers in free text, later scored by a judge panel.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/types.h"
#include "util/status.h"

namespace nf {

/// One open-ended item: a conversation ending with a user turn. `response` is empty for
/// items to be answered; a probe-sheet item carries the released answer it shows
/// (seed 004 §2.6: the saved completion that was judged). `meta` holds any other fields
/// of the source line (theme, audit strata, ...), and for probe-sheet items the entry of
/// key.json when one was found (subject_model, item, prompt_id).
struct ChatItem {
  std::string id;
  std::string cluster;  // cluster for bootstrap (defaults to the id)
  std::vector<ChatMessage> messages;
  std::string response;
  nlohmann::json meta = nlohmann::json::object();
};

/// Reads chat JSONL: one object per line with "id" (string or integer), optional
/// "cluster" (string; default the id) and "messages" (non-empty array of {"role",
/// "content"}, roles system|user|assistant, the last one "user"). Other fields go to
/// `meta`. `id_field` / `cluster_field` override the field names ("" = "id" / "cluster").
/// Blank lines are skipped; `limit` > 0 keeps the first `limit` items.
/// Errors: NotFound if the file is missing; InvalidArgument "path:line: field: problem"
/// for malformed JSON, a missing/empty id, missing/empty messages, an unknown role, a
/// non-string content, a last turn that is not "user", duplicate ids.
Result<std::vector<ChatItem>> read_chat_jsonl(const std::string& path, int64_t limit = 0,
                                              const std::string& id_field = "",
                                              const std::string& cluster_field = "");

/// Reads the blinded annotation sheet of seed 004 (missing-info-judges/annotation_sheet.md,
/// read in place, never copied): sections "## A001" ... each with "### Conversation
/// (information partially removed)" holding turns "**USER:** ..." / "**ASSISTANT:** ..."
/// (a turn runs until the next turn marker or heading, multi-line, trimmed) and
/// "### Assistant response" holding the judged answer (up to the "**YOUR LABEL" line).
/// The conversation is already truncated; the response goes to ChatItem::response (it may
/// be empty: A047 of the released sheet shows an empty answer, which its judges scored).
/// When `key_path` is non-empty (key.json beside the sheet), each item's key entry is
/// stored in meta and the cluster is its prompt_id (33 unique prompts behind the 50
/// items, seed 004 §2.7); otherwise the cluster is the annotation id.
/// Errors: NotFound for a missing file; InvalidArgument "path:line: A007: problem" for a
/// section without a conversation or response, a conversation not ending with a USER
/// turn, duplicate ids; NotFound "key.json has no entry for A007" when the key lacks one.
Result<std::vector<ChatItem>> read_probe_sheet(const std::string& path, const std::string& key_path = "");

/// The key.json beside a probe sheet ("dir/annotation_sheet.md" -> "dir/key.json") when
/// that file exists, else "". Never fails.
std::string probe_sheet_key_path(const std::string& sheet_path);

}  // namespace nf
