#include "perturb/descriptors.h"

#include "core/task_kinds.h"

#include <fmt/format.h>

#include <algorithm>

namespace nf {

const std::vector<std::string>& known_vignette_conditions() { return vignette_condition_names(); }

bool is_control_condition(std::string_view id) {
  return id == "rerender_control" || id == "sham_attribute_control" || id == "rare_token_control";
}

int64_t utf8_length(std::string_view s) {
  int64_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80 ? 1 : 0;
  return n;
}

int64_t word_count_of(std::string_view s) {
  int64_t n = 0;
  bool in = false;
  for (char c : s) {
    const bool space = c == ' ' || c == '\t' || c == '\n' || c == '\r';
    if (!space && !in) ++n;
    in = !space;
  }
  return n;
}

Result<std::string> render_descriptor(const std::string& tmpl, const nlohmann::json& attributes,
                                      const std::string& lep_false, const std::string& lep_true) {
  if (!attributes.is_object()) return InvalidArgument("render_descriptor: attributes must be an object");
  auto text = [&](const char* k) -> Result<std::string> {
    if (!attributes.contains(k)) return InvalidArgument(fmt::format("render_descriptor: missing attribute '{}'", k));
    const auto& v = attributes[k];
    if (v.is_string()) return v.get<std::string>();
    if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
    return InvalidArgument(fmt::format("render_descriptor: attribute '{}' must be a string or integer", k));
  };
  NF_ASSIGN_OR_RETURN(std::string age, text("age"));
  NF_ASSIGN_OR_RETURN(std::string race, text("race"));
  NF_ASSIGN_OR_RETURN(std::string sex, text("sex"));
  NF_ASSIGN_OR_RETURN(std::string insurance, text("insurance"));
  if (!attributes.contains("lep") || !attributes["lep"].is_boolean())
    return InvalidArgument("render_descriptor: missing boolean attribute 'lep'");
  if (attributes.contains("control_token") && attributes["control_token"].is_string())
    race = attributes["control_token"].get<std::string>();
  const std::string language = attributes["lep"].get<bool>() ? lep_true : lep_false;
  std::string out = tmpl;
  auto fill = [&](const std::string& slot, const std::string& v) {
    for (size_t pos = out.find(slot); pos != std::string::npos; pos = out.find(slot, pos + v.size()))
      out.replace(pos, slot.size(), v);
  };
  fill("{age}", age);
  fill("{race}", race);
  fill("{sex}", sex);
  fill("{insurance}", insurance);
  fill("{language}", language);
  if (const auto open = out.find('{'); open != std::string::npos)
    return InvalidArgument(fmt::format("render_descriptor: slot left unfilled in '{}'", out));
  return out;
}

Result<std::vector<DescriptorCondition>> descriptor_conditions(const std::string& tmpl,
                                                               const std::vector<DescriptorSpec>& specs,
                                                               const std::string& lep_false,
                                                               const std::string& lep_true) {
  std::vector<DescriptorCondition> out;
  auto find = [&](std::string_view id) -> const DescriptorSpec* {
    for (const auto& s : specs)
      if (s.id == id) return &s;
    return nullptr;
  };
  const DescriptorSpec* ref = find(kReferenceCondition);
  if (ref == nullptr || !ref->is_reference)
    return InvalidArgument(fmt::format("descriptor conditions: reference '{}' missing", kReferenceCondition));
  for (const auto& id : known_vignette_conditions()) {
    const DescriptorSpec* c = find(id);
    if (c == nullptr) return InvalidArgument(fmt::format("descriptor conditions: condition '{}' missing", id));
    NF_ASSIGN_OR_RETURN(std::string rendered, render_descriptor(tmpl, c->attributes, lep_false, lep_true));
    if (rendered != c->descriptor)
      return InvalidArgument(
          fmt::format("descriptor conditions: {}: the file's descriptor '{}' differs from the "
                      "filled template '{}'",
                      id, c->descriptor, rendered));
    if (id == "rerender_control" && c->descriptor != ref->descriptor)
      return InvalidArgument("descriptor conditions: rerender_control must repeat the reference descriptor exactly");
    if ((id == "sham_attribute_control" || id == "rare_token_control") &&
        (!c->attributes.contains("control_token") || !c->attributes["control_token"].is_string() ||
         c->descriptor == ref->descriptor))
      return InvalidArgument(fmt::format("descriptor conditions: {} needs a control_token in the race slot", id));
    DescriptorCondition d;
    d.id = id;
    d.axis = c->axis;
    d.descriptor = c->descriptor;
    d.is_reference = c->is_reference;
    d.is_control = is_control_condition(id);
    d.attributes = c->attributes;
    d.chars = utf8_length(d.descriptor);
    d.words = word_count_of(d.descriptor);
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace nf
