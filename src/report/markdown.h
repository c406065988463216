// Renders results.json (docs/results.md) as report.md for people.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/status.h"

namespace nf {

/// One analysis section of report.md: the analysis name (results.json analyses.NAME), its
/// "## " heading and the renderer of its body. render_markdown writes the heading, then
/// either "Skipped: <reason>" for a section with `skipped` (the same for every analysis) or
/// the body. An analysis without an entry gets its name as heading and a pointer to
/// results.json.
struct ReportSection {
  const char* analysis;
  const char* heading;
  void (*render)(std::string& md, const nlohmann::json& section);
};

/// The sections, in the order report.md shows them (report/html.h places each analysis's
/// figures under its heading).
const std::vector<ReportSection>& report_sections();

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
