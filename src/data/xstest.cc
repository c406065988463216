// XSTest prompt reader. See xstest.h.
#include "data/xstest.h"

#include <map>
#include <set>

#include <fmt/format.h>

#include "util/csv.h"
#include "util/file.h"
#include "util/strings.h"

namespace nf {

Result<std::vector<ChatItem>> read_xstest_prompts(const std::string& path, int64_t limit) {
  NF_ASSIGN_OR_RETURN(const std::string text, read_file(path));
  NF_ASSIGN_OR_RETURN(const CsvTable csv, parse_csv(path, text));
  const std::vector<std::string> required{"id", "prompt", "type", "label"};
  std::map<std::string, size_t> col;
  for (const auto& name : required) {
    const size_t c = csv.column(name);
    if (c == std::string::npos)
      return InvalidArgument(fmt::format("{}:{}: {}: missing column (header has {}){}", path, csv.header_line, name,
                                         join(csv.header, ", "), did_you_mean(name, csv.header)));
    col[name] = c;
  }
  const size_t focus = csv.column("focus"), note = csv.column("note");
  std::vector<ChatItem> out;
  std::set<std::string> seen;
  std::map<std::string, int64_t> kept;  // per label
  for (const auto& [line, f] : csv.records) {
    const auto where = [&, line = line](const std::string& field) { return fmt::format("{}:{}: {}", path, line, field); };
    const std::string id = trim(f[col["id"]]);
    if (id.empty()) return InvalidArgument(where("id") + ": empty");
    if (!seen.insert(id).second) return InvalidArgument(where("id") + ": duplicate id '" + id + "'");
    const std::string& prompt = f[col["prompt"]];
    if (trim(prompt).empty()) return InvalidArgument(where("prompt") + ": empty (item " + id + ")");
    const std::string type = trim(f[col["type"]]);
    if (type.empty()) return InvalidArgument(where("type") + ": empty (item " + id + ")");
    const std::string label = trim(f[col["label"]]);
    if (label != "safe" && label != "unsafe")
      return InvalidArgument(where("label") + ": '" + label + "' is not safe or unsafe (item " + id + ")");
    if (limit > 0 && kept[label] >= limit) continue;
    ++kept[label];
    ChatItem it;
    it.id = id;
    it.cluster = id;
    it.messages.push_back({"user", prompt});
    it.meta = {{"type", type}, {"label", label}};
    if (focus != std::string::npos) it.meta["focus"] = f[focus];
    if (note != std::string::npos) it.meta["note"] = f[note];
    out.push_back(std::move(it));
  }
  if (out.empty()) return InvalidArgument(fmt::format("{}: no prompts (only a header row)", path));
  return out;
}

}  // namespace nf
