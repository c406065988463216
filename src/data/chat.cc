// Chat JSONL and probe-sheet readers (seed 004 §2.3, §2.6, §2.7). See chat.h for the
// contract.
#include "data/chat.h"

#include <cctype>
#include <filesystem>
#include <map>
#include <string_view>

#include <fmt/format.h>

#include "data/json_type.h"
#include "util/file.h"
#include "util/json_depth.h"
#include "util/strings.h"

namespace nf {
namespace {

/// An id or cluster field: a non-empty string or an integer.
Result<std::string> id_value(const nlohmann::json& v, const std::string& field, const std::string& where) {
  if (v.is_string()) {
    std::string s = v.get<std::string>();
    if (trim(s).empty()) return InvalidArgument(fmt::format("{}: {}: empty", where, field));
    return s;
  }
  if (v.is_number_integer()) return v.dump();
  return InvalidArgument(fmt::format("{}: {}: expected a string or an integer, found {}", where, field, json_type(v)));
}

/// Splits text into lines (without '\n', without a trailing '\r').
std::vector<std::string_view> lines_of(const std::string& text) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    std::string_view line(text.data() + pos, nl - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    out.push_back(line);
    if (nl == text.size()) break;
    pos = nl + 1;
  }
  return out;
}

/// "## A001" -> "A001": a level-2 heading whose text is one token of letters then digits.
std::string section_id(std::string_view line) {
  if (!starts_with(line, "## ")) return "";
  const std::string id = trim(line.substr(3));
  if (id.empty()) return "";
  size_t i = 0;
  while (i < id.size() && std::isalpha(static_cast<unsigned char>(id[i]))) ++i;
  if (i == 0 || i == id.size()) return "";
  for (size_t j = i; j < id.size(); ++j)
    if (!std::isdigit(static_cast<unsigned char>(id[j]))) return "";
  return id;
}

/// The role of a turn-marker line ("**USER:** text" -> "user"), and the text after it.
bool turn_marker(std::string_view line, std::string* role, std::string_view* rest) {
  static const std::pair<std::string_view, std::string_view> kMarkers[] = {
      {"**USER:**", "user"}, {"**ASSISTANT:**", "assistant"}, {"**SYSTEM:**", "system"}};
  for (const auto& [marker, r] : kMarkers) {
    if (starts_with(line, marker)) {
      *role = std::string(r);
      *rest = line.substr(marker.size());
      return true;
    }
  }
  return false;
}

struct SheetSection {
  std::string id;
  size_t heading_line = 0;
  size_t conversation_line = 0;  // 0 = no conversation heading
  size_t response_line = 0;      // 0 = no response heading
  size_t label_line = 0;         // 0 = no "**YOUR LABEL" line
  std::vector<ChatMessage> messages;
  std::vector<size_t> message_lines;
  std::string response;
};

/// Reads key.json: annotation id -> its entry (an object with a string prompt_id).
Result<std::map<std::string, nlohmann::json>> read_key_entries(const std::string& key_path) {
  NF_ASSIGN_OR_RETURN(std::string text, read_file(key_path));
  NF_RETURN_IF_ERROR(check_json_depth(text, key_path));
  nlohmann::json key;
  try {
    key = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& ex) {
    return InvalidArgument(fmt::format("{}: malformed JSON: {}", key_path, ex.what()));
  }
  if (!key.is_object())
    return InvalidArgument(fmt::format("{}: expected an object keyed by annotation id, found {}", key_path, json_type(key)));
  std::map<std::string, nlohmann::json> out;
  for (const auto& [id, entry] : key.items()) {
    if (!entry.is_object())
      return InvalidArgument(fmt::format("{}: {}: expected an object, found {}", key_path, id, json_type(entry)));
    auto p = entry.find("prompt_id");
    if (p == entry.end()) return InvalidArgument(fmt::format("{}: {}: prompt_id: missing", key_path, id));
    if (!p->is_string() || p->get<std::string>().empty())
      return InvalidArgument(fmt::format("{}: {}: prompt_id: expected a non-empty string", key_path, id));
    out[id] = entry;
  }
  return out;
}

}  // namespace

Result<std::vector<ChatItem>> read_chat_jsonl(const std::string& path, int64_t limit, const std::string& id_field,
                                              const std::string& cluster_field) {
  if (limit < 0) return InvalidArgument(fmt::format("{}: limit must be >= 0 (0 = all), got {}", path, limit));
  const std::string idf = id_field.empty() ? "id" : id_field;
  const std::string clf = cluster_field.empty() ? "cluster" : cluster_field;
  NF_ASSIGN_OR_RETURN(std::string text, read_file(path));

  std::vector<ChatItem> items;
  std::map<std::string, size_t> first_line;  // item id -> line
  const auto lines = lines_of(text);
  for (size_t li = 0; li < lines.size(); ++li) {
    if (limit > 0 && static_cast<int64_t>(items.size()) >= limit) break;
    const std::string_view line = lines[li];
    if (trim(line).empty()) continue;
    const std::string where = fmt::format("{}:{}", path, li + 1);
    NF_RETURN_IF_ERROR(check_json_depth(line, where));
    nlohmann::json row;
    try {
      row = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception& ex) {
      return InvalidArgument(fmt::format("{}: malformed JSON: {}", where, ex.what()));
    }
    if (!row.is_object())
      return InvalidArgument(fmt::format("{}: expected a JSON object, found {}", where, json_type(row)));

    ChatItem item;
    auto idv = row.find(idf);
    if (idv == row.end()) return InvalidArgument(fmt::format("{}: {}: missing", where, idf));
    NF_ASSIGN_OR_RETURN(item.id, id_value(*idv, idf, where));
    if (auto [it, fresh] = first_line.emplace(item.id, li + 1); !fresh)
      return InvalidArgument(fmt::format("{}: {}: duplicate id '{}' (first on line {})", where, idf, item.id, it->second));
    auto clv = row.find(clf);
    if (clv != row.end() && !clv->is_null()) {
      NF_ASSIGN_OR_RETURN(item.cluster, id_value(*clv, clf, where));
    } else {
      item.cluster = item.id;
    }

    auto msgs = row.find("messages");
    if (msgs == row.end()) return InvalidArgument(fmt::format("{}: messages: missing", where));
    if (!msgs->is_array())
      return InvalidArgument(fmt::format("{}: messages: expected an array, found {}", where, json_type(*msgs)));
    if (msgs->empty()) return InvalidArgument(fmt::format("{}: messages: empty", where));
    for (size_t m = 0; m < msgs->size(); ++m) {
      const auto& msg = (*msgs)[m];
      const std::string f = fmt::format("messages[{}]", m);
      if (!msg.is_object())
        return InvalidArgument(fmt::format("{}: {}: expected an object, found {}", where, f, json_type(msg)));
      auto role = msg.find("role");
      if (role == msg.end()) return InvalidArgument(fmt::format("{}: {}.role: missing", where, f));
      if (!role->is_string())
        return InvalidArgument(fmt::format("{}: {}.role: expected a string, found {}", where, f, json_type(*role)));
      const std::string r = role->get<std::string>();
      static const std::vector<std::string> kRoles{"system", "user", "assistant"};
      if (r != "system" && r != "user" && r != "assistant")
        return InvalidArgument(fmt::format("{}: {}.role: unknown role '{}' (expected system, user or assistant){}", where,
                                           f, r, did_you_mean(r, kRoles)));
      auto content = msg.find("content");
      if (content == msg.end()) return InvalidArgument(fmt::format("{}: {}.content: missing", where, f));
      if (!content->is_string())
        return InvalidArgument(
            fmt::format("{}: {}.content: expected a string, found {}", where, f, json_type(*content)));
      item.messages.push_back({r, content->get<std::string>()});
    }
    if (item.messages.back().role != "user")
      return InvalidArgument(fmt::format("{}: messages[{}].role: the last turn must be 'user', found '{}'", where,
                                         item.messages.size() - 1, item.messages.back().role));
    for (const auto& [k, v] : row.items()) {
      if (k == idf || k == clf || k == "messages") continue;
      item.meta[k] = v;
    }
    items.push_back(std::move(item));
  }
  return items;
}

Result<std::vector<ChatItem>> read_probe_sheet(const std::string& path, const std::string& key_path) {
  NF_ASSIGN_OR_RETURN(std::string text, read_file(path));
  std::map<std::string, nlohmann::json> key;
  if (!key_path.empty()) {
    NF_ASSIGN_OR_RETURN(key, read_key_entries(key_path));
  }

  enum class Part { kPreamble, kHeader, kConversation, kResponse, kAfterLabel };
  std::vector<SheetSection> sections;
  std::map<std::string, size_t> first_line;
  Part part = Part::kPreamble;
  std::string response_text;
  const auto lines = lines_of(text);

  auto where = [&](size_t line_no) {
    return fmt::format("{}:{}: {}", path, line_no, sections.empty() ? std::string("sheet") : sections.back().id);
  };
  auto append = [](std::string& s, std::string_view line) {
    if (!s.empty()) s += '\n';
    s.append(line);
  };

  for (size_t li = 0; li < lines.size(); ++li) {
    const std::string_view line = lines[li];
    const size_t line_no = li + 1;
    if (const std::string id = section_id(line); !id.empty() && part != Part::kResponse) {
      if (auto [it, fresh] = first_line.emplace(id, line_no); !fresh)
        return InvalidArgument(fmt::format("{}:{}: {}: duplicate annotation id (first on line {})", path, line_no, id,
                                           it->second));
      sections.push_back({});
      sections.back().id = id;
      sections.back().heading_line = line_no;
      part = Part::kHeader;
      continue;
    }
    if (part == Part::kPreamble || part == Part::kAfterLabel) continue;
    SheetSection& sec = sections.back();
    if (part == Part::kResponse) {
      if (starts_with(line, "**YOUR LABEL")) {
        sec.response = trim(response_text);
        sec.label_line = line_no;
        part = Part::kAfterLabel;
        continue;
      }
      if (!section_id(line).empty())
        return InvalidArgument(fmt::format("{}: the response (from line {}) runs into the next section without a "
                                           "'**YOUR LABEL' line",
                                           where(line_no), sec.response_line));
      append(response_text, line);
      continue;
    }
    if (starts_with(line, "### Conversation")) {
      if (sec.conversation_line != 0)
        return InvalidArgument(fmt::format("{}: a second '### Conversation' heading (first on line {})",
                                           where(line_no), sec.conversation_line));
      sec.conversation_line = line_no;
      part = Part::kConversation;
      continue;
    }
    if (starts_with(line, "### Assistant response")) {
      if (sec.conversation_line == 0)
        return InvalidArgument(fmt::format("{}: '### Assistant response' before any '### Conversation' heading",
                                           where(line_no)));
      sec.response_line = line_no;
      response_text.clear();
      part = Part::kResponse;
      continue;
    }
    if (part == Part::kHeader) {
      if (!trim(line).empty())
        return InvalidArgument(
            fmt::format("{}: unexpected text before '### Conversation': '{}'", where(line_no), trim(line)));
      continue;
    }
    // Conversation: turn markers start a turn; other lines continue the current one.
    std::string role;
    std::string_view rest;
    if (turn_marker(line, &role, &rest)) {
      sec.messages.push_back({role, std::string(rest)});
      sec.message_lines.push_back(line_no);
      continue;
    }
    if (sec.messages.empty()) {
      if (!trim(line).empty())
        return InvalidArgument(fmt::format("{}: text before the first turn marker (**USER:** / **ASSISTANT:**): '{}'",
                                           where(line_no), trim(line)));
      continue;
    }
    append(sec.messages.back().content, line);
  }
  if (part == Part::kResponse)
    return InvalidArgument(fmt::format("{}: the response (from line {}) has no '**YOUR LABEL' line before the end "
                                       "of the file",
                                       where(lines.size()), sections.back().response_line));

  std::vector<ChatItem> items;
  items.reserve(sections.size());
  for (auto& sec : sections) {
    const std::string at = fmt::format("{}:{}: {}", path, sec.heading_line, sec.id);
    if (sec.conversation_line == 0)
      return InvalidArgument(fmt::format("{}: no '### Conversation (information partially removed)' heading", at));
    if (sec.messages.empty())
      return InvalidArgument(fmt::format("{}:{}: {}: the conversation has no turns", path, sec.conversation_line, sec.id));
    for (size_t m = 0; m < sec.messages.size(); ++m) {
      sec.messages[m].content = trim(sec.messages[m].content);
    }
    if (sec.messages.back().role != "user")
      return InvalidArgument(fmt::format("{}:{}: {}: the conversation must end with a **USER:** turn, found {}", path,
                                         sec.message_lines.back(), sec.id, sec.messages.back().role));
    if (sec.response_line == 0) return InvalidArgument(fmt::format("{}: no '### Assistant response' heading", at));
    // An empty response is kept: the released sheet has one (A047), and its judges voted on it.

    ChatItem item;
    item.id = sec.id;
    item.cluster = sec.id;
    item.messages = std::move(sec.messages);
    item.response = std::move(sec.response);
    item.meta["source_line"] = sec.heading_line;
    if (!key_path.empty()) {
      auto k = key.find(sec.id);
      if (k == key.end()) return NotFound(fmt::format("{} has no entry for {}", key_path, sec.id));
      for (const auto& [f, v] : k->second.items()) item.meta[f] = v;
      item.cluster = k->second["prompt_id"].get<std::string>();
    }
    items.push_back(std::move(item));
  }
  return items;
}

std::string probe_sheet_key_path(const std::string& sheet_path) {
  const size_t slash = sheet_path.rfind('/');
  const std::string key = slash == std::string::npos ? "key.json" : sheet_path.substr(0, slash + 1) + "key.json";
  std::error_code ec;
  return std::filesystem::is_regular_file(key, ec) && !ec ? key : "";
}

}  // namespace nf
