// Results list conditions in the order the study gives them (issue 12 item 6), not
// alphabetically: the first condition is usually the reference the others are read against.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace nf {

/// Reorders, in place, every array in `results` (recursively) whose elements are objects
/// with a string "condition": stable sort by (subject, config, position of the condition in
/// `study_conditions`), so subjects and configs stay grouped as before and conditions follow
/// the study's order; a condition not in the list keeps its place after the listed ones.
/// Does nothing when `study_conditions` is empty (an imported store).
void order_by_study_conditions(nlohmann::json& results, const std::vector<std::string>& study_conditions);

}  // namespace nf
