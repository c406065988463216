#include "spec/study_where.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

namespace nf {

std::string study_key_where(const Study& study, std::string_view key) {
  const std::string path = study.source_path.empty() ? std::string("study") : study.source_path;
  if (study.source_text.empty()) return fmt::format("{}: {}", path, key);
  try {
    YAML::Node node = YAML::Load(study.source_text);
    std::string_view rest = key;
    while (!rest.empty() && node && node.IsMap()) {
      const size_t dot = rest.find('.');
      const std::string part(rest.substr(0, dot));
      YAML::Node next = node[part];
      if (!next) break;
      node = next;
      rest = dot == std::string_view::npos ? std::string_view() : rest.substr(dot + 1);
    }
    if (rest.empty() && node && !node.Mark().is_null() && node.Mark().line >= 0)
      return fmt::format("{}:{}: {}", path, node.Mark().line + 1, key);
  } catch (const YAML::Exception&) {
    // The text parsed once already; a failure here only loses the line number.
  }
  return fmt::format("{}: {}", path, key);
}

}  // namespace nf
