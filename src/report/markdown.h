// Renders results.json (docs/results.md) as report.md for people.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/status.h"

namespace nf {

/// Returns the Markdown report for `results` (the object analyze_store returns): the summary
/// (report/summary.h), draw
/// status counts with parse and API-error rates, then one section per analysis with a
/// table and a short note on how to read it. Pure function of its input.
std::string render_markdown(const nlohmann::json& results);

/// Writes DIR/results.json, DIR/report.md, DIR/report.html and DIR/figures.json (creating DIR;
/// report/html.h), and DIR/grid_card.json when the results hold an envelope analysis (a
/// grid_card.json left by an earlier analysis of another kind is removed, so no stale card
/// sits beside the new report). `written`, when given, receives the file names written, in
/// order. Errors name the path.
Status write_report(const std::string& out_dir, const nlohmann::json& results,
                    std::vector<std::string>* written = nullptr);

}  // namespace nf
