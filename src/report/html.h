// report.html: the Markdown report's sections as HTML (sortable tables), the summary first, and
// a Vega figure per analysis, in one self-contained file that opens offline.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "util/status.h"

namespace nf {

/// The Vega modules report.html inlines, in dependency order (files DIR/<name>.min.js of
/// Debian's libjs-vega, which ships Vega 5 as separate UMD modules and no single bundle).
extern const char* const kVegaModules[];

/// Where the Vega modules are read from: $NOISEFLOOR_VEGA_DIR when set, else
/// /usr/share/javascript/vega (Debian package libjs-vega).
std::string default_vega_dir();

/// Reads the Vega modules from `dir` and returns one script that defines the global `nfVega`
/// (parse, View, ...), loading each UMD module through a small AMD `define` so that no module
/// overwrites another. Errors: NotFound naming the first missing file.
Result<std::string> load_vega_bundle(const std::string& dir);

/// Returns report.html for `results`: the Markdown report (render_markdown, which opens with the
/// summary) converted by cmark-gfm, every table sortable by clicking a header, and each figure of
/// build_figures placed after the first paragraph of its analysis's section. `vega_js` is the
/// script load_vega_bundle returns; when it is empty the figures are left out and a visible note
/// says why (`missing_note`). The page sets the attribute data-nf-status on <html> to "ok: N
/// figures" once every figure has drawn at least one mark, "ok: tables only" without Vega, or
/// "error: MESSAGE" on a script error, a console.error or an empty figure (the browser test
/// reads it). Pure function of its inputs.
std::string render_html(const nlohmann::json& results, const std::string& vega_js,
                        const std::string& missing_note = "");

/// Writes DIR/report.html and DIR/figures.json ({schema: "noisefloor.figures/1", figures:
/// build_figures(results)}) atomically. A missing Vega library never fails: report.html is then
/// written with tables only and a note naming the missing file. Errors: DataLoss naming the path
/// that cannot be written.
Status write_html_report(const std::string& out_dir, const nlohmann::json& results,
                         const std::string& vega_dir = default_vega_dir());

}  // namespace nf
