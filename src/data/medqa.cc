// MedQA-style JSONL reader (seed 004 §2.4 uses the MedQA-USMLE 4-option test split of
// Jin et al. 2021). See medqa.h for the contract.
#include "data/medqa.h"

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
Result<std::string> id_value(const nlohmann::json& row, const std::string& field, const std::string& where) {
  auto it = row.find(field);
  if (it == row.end()) return InvalidArgument(fmt::format("{}: {}: missing", where, field));
  if (it->is_string()) {
    std::string s = it->get<std::string>();
    if (s.empty()) return InvalidArgument(fmt::format("{}: {}: empty", where, field));
    return s;
  }
  if (it->is_number_integer()) return it->dump();
  return InvalidArgument(fmt::format("{}: {}: expected a string or an integer, found {}", where, field, json_type(*it)));
}

}  // namespace

Result<std::vector<McqItem>> read_medqa_jsonl(const std::string& path, int64_t limit, const std::string& id_field,
                                              const std::string& cluster_field) {
  if (limit < 0) return InvalidArgument(fmt::format("{}: limit must be >= 0 (0 = all), got {}", path, limit));
  NF_ASSIGN_OR_RETURN(std::string text, read_file(path));

  std::vector<McqItem> items;
  std::map<std::string, size_t> first_line;  // item id -> line
  size_t line_no = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    if (limit > 0 && static_cast<int64_t>(items.size()) >= limit) break;
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    std::string_view line(text.data() + pos, nl - pos);
    pos = nl + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (trim(line).empty()) continue;
    const std::string where = fmt::format("{}:{}", path, line_no);

    NF_RETURN_IF_ERROR(check_json_depth(line, where));
    nlohmann::json row;
    try {
      row = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception& ex) {
      return InvalidArgument(fmt::format("{}: malformed JSON: {}", where, ex.what()));
    }
    if (!row.is_object()) return InvalidArgument(fmt::format("{}: expected a JSON object, found {}", where, json_type(row)));

    McqItem item;
    auto q = row.find("question");
    if (q == row.end()) return InvalidArgument(fmt::format("{}: question: missing", where));
    if (!q->is_string())
      return InvalidArgument(fmt::format("{}: question: expected a string, found {}", where, json_type(*q)));
    item.question = q->get<std::string>();
    if (trim(item.question).empty()) return InvalidArgument(fmt::format("{}: question: empty", where));

    auto o = row.find("options");
    if (o == row.end()) return InvalidArgument(fmt::format("{}: options: missing", where));
    if (!o->is_object())
      return InvalidArgument(
          fmt::format("{}: options: expected an object of letter -> text, found {}", where, json_type(*o)));
    if (o->empty()) return InvalidArgument(fmt::format("{}: options: empty", where));
    if (o->size() > 26) return InvalidArgument(fmt::format("{}: options: more than 26 options", where));
    // nlohmann::json keeps object keys sorted, so the letters come out A, B, C...; they
    // must be exactly A.. without gaps.
    char expect = 'A';
    for (auto it = o->begin(); it != o->end(); ++it, ++expect) {
      const std::string& letter = it.key();
      if (letter.size() != 1 || letter[0] != expect)
        return InvalidArgument(fmt::format("{}: options: letters must be A, B, C... without gaps, found '{}' "
                                           "where '{}' was expected",
                                           where, letter, expect));
      if (!it->is_string())
        return InvalidArgument(
            fmt::format("{}: options.{}: expected a string, found {}", where, letter, json_type(*it)));
      item.options.push_back(McqOption{letter, it->get<std::string>()});
    }

    auto a = row.find("answer_idx");
    if (a == row.end()) return InvalidArgument(fmt::format("{}: answer_idx: missing", where));
    if (!a->is_string())
      return InvalidArgument(fmt::format("{}: answer_idx: expected a letter string, found {}", where, json_type(*a)));
    item.answer = a->get<std::string>();
    if (!o->contains(item.answer)) {
      std::vector<std::string> letters;
      for (const auto& opt : item.options) letters.push_back(opt.letter);
      return InvalidArgument(fmt::format("{}: answer_idx: '{}' is not one of the options ({})", where, item.answer,
                                         join(letters, ", ")));
    }

    const std::string id_name = id_field.empty() ? "id" : id_field;
    if (id_field.empty()) {
      item.id = fmt::format("medqa-{}", line_no);
    } else {
      NF_ASSIGN_OR_RETURN(item.id, id_value(row, id_field, where));
    }
    if (cluster_field.empty()) {
      item.cluster = item.id;
    } else {
      NF_ASSIGN_OR_RETURN(item.cluster, id_value(row, cluster_field, where));
    }
    if (auto d = first_line.find(item.id); d != first_line.end())
      return InvalidArgument(fmt::format("{}: {}: duplicate item id '{}' (first on line {}, again on line {})", where,
                                         id_name, item.id, d->second, line_no));
    first_line[item.id] = line_no;

    item.meta = nlohmann::json::object();
    for (auto it = row.begin(); it != row.end(); ++it) {
      if (it.key() == "question" || it.key() == "options" || it.key() == "answer_idx") continue;
      item.meta[it.key()] = *it;
    }
    item.meta["line"] = line_no;
    items.push_back(std::move(item));
  }
  return items;
}

}  // namespace nf
