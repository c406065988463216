#include "data/medagentbench.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "data/json_type.h"
#include "util/file.h"
#include "util/json_depth.h"

namespace nf {

const std::vector<std::string>& medagentbench_write_families() {
  static const std::vector<std::string> k{"task3", "task5", "task8", "task9", "task10"};
  return k;
}

namespace {

bool parse_task_id(const std::string& id, std::string* family, int* family_no, int* index) {
  if (id.rfind("task", 0) != 0) return false;
  const size_t us = id.find('_');
  if (us == std::string::npos || us == 4 || us + 1 >= id.size()) return false;
  for (size_t i = 4; i < id.size(); ++i)
    if (i != us && !std::isdigit(static_cast<unsigned char>(id[i]))) return false;
  *family = id.substr(0, us);
  *family_no = std::stoi(id.substr(4, us - 4));
  *index = std::stoi(id.substr(us + 1));
  return true;
}

Result<nlohmann::json> read_array(const std::string& path) {
  NF_ASSIGN_OR_RETURN(std::string text, read_file(path));
  NF_RETURN_IF_ERROR(check_json_depth(text, path));
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) return InvalidArgument(fmt::format("{}: not valid JSON", path));
  if (!j.is_array()) return InvalidArgument(fmt::format("{}: expected a JSON array, found {}", path, json_type(j)));
  return j;
}

}  // namespace

Result<std::vector<MedAgentTask>> read_medagentbench_tasks(const std::string& path, const std::vector<std::string>& families,
                                                           int64_t per_family) {
  NF_ASSIGN_OR_RETURN(auto j, read_array(path));
  std::vector<std::pair<int, MedAgentTask>> all;
  std::set<std::string> ids;
  for (size_t i = 0; i < j.size(); ++i) {
    const auto& r = j[i];
    auto bad = [&](const std::string& field, const std::string& what) {
      return InvalidArgument(fmt::format("{}: [{}] {}: {}", path, i, field, what));
    };
    if (!r.is_object()) return bad("task", "expected an object, found " + json_type(r));
    for (const char* k : {"id", "instruction"}) {
      if (!r.contains(k)) return bad(k, "required field is missing");
      if (!r[k].is_string()) return bad(k, "expected a string, found " + json_type(r[k]));
    }
    if (r.contains("eval_MRN") && !r["eval_MRN"].is_string())
      return bad("eval_MRN", "expected a string, found " + json_type(r["eval_MRN"]));
    if (r.contains("context") && !r["context"].is_string()) return bad("context", "expected a string, found " + json_type(r["context"]));
    MedAgentTask t;
    t.id = r["id"].get<std::string>();
    int fno = 0;
    if (!parse_task_id(t.id, &t.family, &fno, &t.index)) return bad("id", fmt::format("'{}' is not of the form taskF_N", t.id));
    if (!ids.insert(t.id).second) return bad("id", fmt::format("duplicate id '{}'", t.id));
    t.instruction = r["instruction"].get<std::string>();
    t.context = r.value("context", "");
    t.mrn = r.value("eval_MRN", "");
    t.sol = r.contains("sol") ? r["sol"] : nlohmann::json(nullptr);
    all.emplace_back(fno, std::move(t));
  }
  std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : a.second.index < b.second.index;
  });
  std::vector<MedAgentTask> out;
  std::map<std::string, int64_t> taken;
  for (auto& [fno, t] : all) {
    if (!families.empty() && std::find(families.begin(), families.end(), t.family) == families.end()) continue;
    if (per_family > 0 && taken[t.family] >= per_family) continue;
    ++taken[t.family];
    out.push_back(std::move(t));
  }
  for (const auto& f : families)
    if (!taken.count(f)) return InvalidArgument(fmt::format("{}: family '{}' has no task", path, f));
  return out;
}

Result<std::map<std::string, std::string>> read_medagentbench_mrns(const std::string& path) {
  NF_ASSIGN_OR_RETURN(auto tasks, read_medagentbench_tasks(path));
  std::map<std::string, std::string> out;
  for (const auto& t : tasks)
    if (!t.mrn.empty()) out[t.id] = t.mrn;
  return out;
}

Result<nlohmann::json> read_medagentbench_funcs(const std::string& path) {
  NF_ASSIGN_OR_RETURN(auto j, read_array(path));
  for (size_t i = 0; i < j.size(); ++i) {
    if (!j[i].is_object()) return InvalidArgument(fmt::format("{}: [{}] function: expected an object", path, i));
    for (const char* k : {"name", "description"})
      if (!j[i].contains(k) || !j[i][k].is_string())
        return InvalidArgument(fmt::format("{}: [{}] {}: required string field is missing", path, i, k));
  }
  return j;
}

}  // namespace nf
