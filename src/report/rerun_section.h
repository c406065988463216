// The report section of analysis `rerun` (metrics/rerun.h; seed 002 §4, Table 1, App. A/B).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace nf {

/// Appends the body of the Markdown section for analyses.rerun `r` (not skipped; the
/// heading is render_markdown's) to `md`: per arm the six metrics
/// and pairwise disagreement with counts, denominators, Wilson and family-bootstrap
/// intervals; the App. B decomposition, changing-orders-stable-verdict and rejected
/// writes; the McNemar table with Holm-adjusted p; the warnings. Pure.
void rerun_section(std::string& md, const nlohmann::json& r);

}  // namespace nf
