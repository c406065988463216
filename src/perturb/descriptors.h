// Descriptor conditions of the FairMedAgent audit (seed 000 §III.A, S10): the reference,
// the 11 other standard conditions and the 3 controls (identical re-render, sham attribute,
// rare token), each with the exact string of vignettes.json.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace nf {

/// The reference condition id ("ref_white_man_private").
inline constexpr std::string_view kReferenceCondition = "ref_white_man_private";

/// The 15 condition ids the vignette_agent task accepts: the reference, the 11 other
/// standard conditions and the 3 controls (rerender_control, sham_attribute_control,
/// rare_token_control), in the order of vignettes.json. spec/study.cc keeps a copy.
const std::vector<std::string>& known_vignette_conditions();

/// True for the three control arms.
bool is_control_condition(std::string_view id);

/// One rendered descriptor condition with its length (the report lists them, S10).
struct DescriptorCondition {
  std::string id;
  std::string axis;
  std::string descriptor;  // exact string from the file
  bool is_reference = false;
  bool is_control = false;
  nlohmann::json attributes;
  int64_t chars = 0;  // UTF-8 code points
  int64_t words = 0;  // whitespace-separated tokens
};

/// Fills the descriptor template from `attributes` (age, race, sex, insurance, lep; for a
/// sham/rare-token control the control_token replaces the race slot). `lep_false` /
/// `lep_true` are the language-slot values. Errors: InvalidArgument naming a missing
/// attribute or a slot left unfilled ("{...}" remaining).
Result<std::string> render_descriptor(const std::string& tmpl, const nlohmann::json& attributes,
                                      const std::string& lep_false, const std::string& lep_true);

/// One condition as a dataset states it (data/vignettes.h VignetteCondition carries the
/// same fields; perturb does not depend on data).
struct DescriptorSpec {
  std::string id;
  std::string descriptor;
  std::string axis;
  bool is_reference = false;
  nlohmann::json attributes;
};

/// Every descriptor condition of `specs` (template `tmpl`), checked: all 15 known ids present; every slot of
/// the template filled (rendering the attributes gives the file's exact string); the
/// re-render control identical to the reference; sham and rare-token controls differ
/// from the reference only in the race slot. Errors: InvalidArgument naming the
/// condition. Source: seed 000 §III.A, S10.
Result<std::vector<DescriptorCondition>> descriptor_conditions(const std::string& tmpl,
                                                               const std::vector<DescriptorSpec>& specs,
                                                               const std::string& lep_false,
                                                               const std::string& lep_true);

/// Code points and whitespace-separated words of `s`.
int64_t utf8_length(std::string_view s);
int64_t word_count_of(std::string_view s);

}  // namespace nf
