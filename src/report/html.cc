#include "report/html.h"

#include <cctype>
#include <cstdlib>
#include <memory>
#include <algorithm>
#include <set>
#include <vector>

#include <cmark-gfm-core-extensions.h>
#include <cmark-gfm.h>
#include <fmt/format.h>

#include "report/figures.h"
#include "report/markdown.h"
#include "util/file.h"

namespace nf {

const char* const kVegaModules[] = {
    "vega-util",       "vega-time",       "vega-format",         "vega-loader",    "vega-dataflow",
    "vega-statistics", "vega-scale",      "vega-canvas",         "vega-scenegraph", "vega-expression",
    "vega-selection",  "vega-event-selector", "vega-functions",  "vega-runtime",   "vega-parser",
    "vega-encode",     "vega-transforms", "vega-view-transforms", "vega-view",      nullptr};

namespace {

using nlohmann::json;

std::string html_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// JSON inside <script>: no "<" at all (it could end the element or open a comment state);
// "\u003c" is the same string in JSON.
std::string json_script_safe(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '<') out += "\\u003c";
    else out += c;
  }
  return out;
}

// JavaScript inside <script>: only "</script" ends the element. Vega's minified code holds none
// (it does hold "</" in regular expressions, where "<\/" would change the meaning).
bool js_script_safe(const std::string& s) {
  for (size_t at = s.find("</"); at != std::string::npos; at = s.find("</", at + 2)) {
    std::string tag = s.substr(at + 2, 6);
    for (auto& c : tag) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (tag == "script") return false;
  }
  return true;
}

// Which analysis a "## " heading of render_markdown opens (report/markdown.h report_sections).
std::string section_analysis(const std::string& heading) {
  for (const auto& sec : report_sections())
    if (heading == sec.heading) return sec.analysis;
  return "";
}

std::string placeholder(size_t i) { return fmt::format("@@NF-FIGURE-{}@@", i); }

// Puts a placeholder paragraph for each figure after the first paragraph of its analysis's
// section; returns the indices placed.
std::string place_figures(const std::string& md, const json& figures, std::set<size_t>& placed) {
  std::string out;
  std::string pending;  // analysis whose figures wait for the end of the section's first paragraph
  bool seen_text = false;
  size_t start = 0;
  while (start <= md.size()) {
    size_t end = md.find('\n', start);
    if (end == std::string::npos) end = md.size();
    const std::string line = md.substr(start, end - start);
    if (line.rfind("## ", 0) == 0) {
      pending = section_analysis(line);
      seen_text = false;
    } else if (!pending.empty() && !line.empty()) {
      seen_text = true;
    } else if (!pending.empty() && line.empty() && seen_text) {
      out += "\n";
      for (size_t i = 0; i < figures.size(); ++i)
        if (figures[i]["analysis"] == pending && !placed.count(i)) {
          out += placeholder(i) + "\n\n";
          placed.insert(i);
        }
      pending.clear();
    }
    out += line;
    if (end < md.size()) out += "\n";
    start = end + 1;
  }
  return out;
}

std::string markdown_to_html(const std::string& md) {
  cmark_gfm_core_extensions_ensure_registered();
  std::unique_ptr<cmark_parser, void (*)(cmark_parser*)> parser(cmark_parser_new(CMARK_OPT_DEFAULT),
                                                                cmark_parser_free);
  if (cmark_syntax_extension* table = cmark_find_syntax_extension("table"))
    cmark_parser_attach_syntax_extension(parser.get(), table);
  cmark_parser_feed(parser.get(), md.data(), md.size());
  std::unique_ptr<cmark_node, void (*)(cmark_node*)> doc(cmark_parser_finish(parser.get()), cmark_node_free);
  char* html = cmark_render_html(doc.get(), CMARK_OPT_DEFAULT, cmark_parser_get_syntax_extensions(parser.get()));
  std::string out(html);
  cmark_get_default_mem_allocator()->free(html);
  return out;
}

// Every table in its own box that scrolls sideways (.nf-table, overflow-x: auto), so a wide
// table never widens the page; the page script says so above a table wider than its box.
std::string wrap_tables(std::string html) {
  std::string out;
  size_t at = 0;
  for (size_t open = html.find("<table>"); open != std::string::npos; open = html.find("<table>", at)) {
    const size_t close = html.find("</table>", open);
    if (close == std::string::npos) break;
    out += html.substr(at, open - at) + "<div class=\"nf-table\">" + html.substr(open, close + 8 - open) + "</div>";
    at = close + 8;
  }
  return out + html.substr(at);
}

std::string figure_html(size_t number, const json& f, bool with_vega) {
  const std::string id = html_escape(f["id"].get<std::string>());
  return fmt::format("<figure class=\"nf-figure\"><div class=\"nf-vega\" id=\"nf-fig-{}\"></div>"
                     "<figcaption><b>Figure {}.</b> {}{}</figcaption></figure>\n",
                     id, number + 1, html_escape(f.value("caption", "")),
                     with_vega ? "" : " (not drawn: the Vega library is missing, see the note above)");
}

constexpr const char* kStyle = R"(
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0 auto;max-width:1280px;padding:16px 24px;color:#222}
h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #ddd;padding-bottom:3px;margin-top:32px}h3{font-size:15px}
.nf-table{overflow-x:auto;max-width:100%;margin:8px 0 16px}.nf-table>table{margin:0}
.nf-scroll-note{font-size:12px;color:#8a5a00;margin:8px 0 -4px}
table{border-collapse:collapse;margin:8px 0 16px;font-size:12.5px}
th,td{border:1px solid #ddd;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#f3f4f6;cursor:pointer;position:sticky;top:0;user-select:none;white-space:nowrap}
th[data-dir=asc]::after{content:" \25B2"}th[data-dir=desc]::after{content:" \25BC"}
tbody tr:nth-child(even){background:#fafafa}
code{background:#f3f4f6;padding:0 3px;border-radius:3px}
blockquote{border-left:4px solid #e0a000;margin:8px 0;padding:4px 12px;background:#fff8e6}
.nf-note{border:1px solid #d62728;background:#fdecea;padding:8px 12px;border-radius:4px}
figure.nf-figure{margin:12px 0 20px}body.nf-only>*:not(.nf-shown){display:none}figcaption{font-size:12.5px;color:#444;max-width:900px}
)";

// Runs first: any script error, rejected promise or console.error marks the page failed.
constexpr const char* kEarlyScript = R"(
var nfFailed=false;
function nfFail(m){if(!nfFailed){nfFailed=true;document.documentElement.setAttribute('data-nf-status','error: '+m);}}
window.addEventListener('error',function(e){nfFail(e.message||'script error');});
window.addEventListener('unhandledrejection',function(e){nfFail(String(e.reason&&e.reason.message||e.reason));});
(function(){var ce=console.error;console.error=function(){nfFail(Array.prototype.join.call(arguments,' '));ce.apply(console,arguments);};})();
)";

// Sortable tables (click a header; numbers sort as numbers) and the figure runner.
constexpr const char* kScript = R"(
(function(){
var root=document.documentElement,fail=nfFail;
document.querySelectorAll('table').forEach(function(t){
  var ths=t.querySelectorAll('thead th');
  ths.forEach(function(th,i){th.title='click to sort';th.addEventListener('click',function(){
    var tb=t.tBodies[0];if(!tb)return;
    var dir=th.getAttribute('data-dir')==='asc'?-1:1;
    ths.forEach(function(h){h.removeAttribute('data-dir');});th.setAttribute('data-dir',dir>0?'asc':'desc');
    function key(r){var s=((r.cells[i]||{}).textContent||'').trim().replace('\u2212','-');
      var m=s.match(/^[-+]?\d*\.?\d+(e[-+]?\d+)?/i);return m?[0,parseFloat(m[0])]:[1,s];}
    Array.from(tb.rows).sort(function(a,b){var x=key(a),y=key(b);
      if(x[0]!==y[0])return x[0]-y[0];return (x[1]<y[1]?-1:x[1]>y[1]?1:0)*dir;}).forEach(function(r){tb.appendChild(r);});
  });});
});
document.querySelectorAll('.nf-table').forEach(function(box){
  if(box.scrollWidth>box.clientWidth+1){var n=document.createElement('p');n.className='nf-scroll-note';
    n.textContent='\u2194 This table is wider than the page: scroll it sideways for the remaining columns.';
    box.parentNode.insertBefore(n,box);}
});
var figs=JSON.parse(document.getElementById('nf-figures').textContent);
var only=/^#only=/.test(location.hash)&&document.getElementById('nf-fig-'+decodeURIComponent(location.hash.slice(6)));
if(only){only.parentNode.classList.add('nf-shown');document.body.classList.add('nf-only');}
if(typeof nfVega==='undefined'){if(!nfFailed)root.setAttribute('data-nf-status','ok: tables only');return;}
Promise.all(figs.map(function(f){
  var el=document.getElementById('nf-fig-'+f.id);
  if(!el)return Promise.reject(new Error('figure '+f.id+' has no place in the page'));
  return new nfVega.View(nfVega.parse(f.spec),{renderer:'svg',container:el,hover:true}).runAsync().then(function(){
    if(el.querySelectorAll('.mark-symbol path, .mark-rect path').length===0)throw new Error('figure '+f.id+' is empty');
  });
})).then(function(){if(!nfFailed){root.setAttribute('data-nf-status','ok: '+figs.length+' figures');
  root.setAttribute('data-nf-ms',String(Math.round(performance.now())));}
  var target=location.hash&&document.getElementById(decodeURIComponent(location.hash.slice(1)));
  if(target)target.scrollIntoView();},
  function(e){fail(String(e&&e.message||e));});
})();
)";

}  // namespace

std::string default_vega_dir() {
  const char* env = std::getenv("NOISEFLOOR_VEGA_DIR");
  return env != nullptr && *env != '\0' ? std::string(env) : std::string("/usr/share/javascript/vega");
}

Result<std::string> load_vega_bundle(const std::string& dir) {
  // Each UMD module finds our `define` (define.amd set) before any global, so it registers
  // under its name and receives its dependencies by name, as an AMD loader would pass them.
  std::string js =
      "/* Vega 5 (BSD-3-Clause, https://vega.github.io), from Debian's libjs-vega, loaded as AMD modules */\n"
      "var nfVega=(function(){var mods={},name;function define(deps,factory){var ex={};"
      "factory.apply(null,deps.map(function(d){if(d==='exports')return ex;"
      "var m=mods[d]||mods[d.replace(/s$/,'')];if(!m)throw new Error(name+' needs '+d);return m;}));mods[name]=ex;}"
      "define.amd={};\n";
  for (size_t i = 0; kVegaModules[i] != nullptr; ++i) {
    const std::string path = dir + "/" + kVegaModules[i] + ".min.js";
    auto src = read_file(path);
    if (!src.ok()) return NotFound("Vega library: cannot read " + path + " (Debian package libjs-vega)");
    std::string text = std::move(*src);
    const size_t map = text.rfind("//# sourceMappingURL");
    if (map != std::string::npos) text.erase(map);
    js += fmt::format("name='{}';\n{}\n", kVegaModules[i], text);
  }
  js += "['vega-transforms','vega-view-transforms','vega-encode'].forEach(function(m){"
        "Object.assign(mods['vega-dataflow'].transforms,mods[m]);});"
        "return Object.assign({},mods['vega-util'],mods['vega-view'],{parse:mods['vega-parser'].parse});})();\n";
  if (!js_script_safe(js)) return NotFound("Vega library in " + dir + " contains </script and cannot be inlined");
  return js;
}

std::string render_html(const nlohmann::json& results, const std::string& vega_js, const std::string& missing_note) {
  const json figures = build_figures(results);
  std::set<size_t> placed;
  std::string md = place_figures(render_markdown(results), figures, placed);
  std::string body = wrap_tables(markdown_to_html(md));
  const bool with_vega = !vega_js.empty();
  // Figures are numbered in the order the page shows them.
  std::vector<std::pair<size_t, size_t>> order;  // (position in body, figure index)
  for (size_t i : placed) {
    const size_t at = body.find("<p>" + placeholder(i) + "</p>\n");
    if (at != std::string::npos) order.emplace_back(at, i);
  }
  std::sort(order.begin(), order.end());
  std::set<size_t> shown;
  size_t number = 0;
  for (const auto& [pos, i] : order) {
    const std::string p = "<p>" + placeholder(i) + "</p>\n";
    body.replace(body.find(p), p.size(), figure_html(number++, figures[i], with_vega));
    shown.insert(i);
  }
  std::string rest;
  for (size_t i = 0; i < figures.size(); ++i)
    if (!shown.count(i)) rest += figure_html(number++, figures[i], with_vega);
  if (!rest.empty()) body += "<h2>More figures</h2>\n" + rest;
  if (!with_vega) {
    const std::string note = "<p class=\"nf-note\"><b>Tables only:</b> " +
                             html_escape(missing_note.empty() ? "the Vega library was not available"
                                                              : missing_note) +
                             ". Install it (<code>apt-get install libjs-vega</code>) and re-run the report to "
                             "draw the figures.</p>\n";
    const size_t h1 = body.find("</h1>");
    body.insert(h1 == std::string::npos ? 0 : h1 + 5, "\n" + note);
  }
  const json& study = results.contains("study") ? results["study"] : json();
  const std::string title = study.is_object() ? study.value("name", "study") : "store";
  json specs = json::array();
  for (const auto& f : figures) specs.push_back({{"id", f["id"]}, {"spec", f["spec"]}});
  std::string html = "<!DOCTYPE html>\n<html lang=\"en\" data-nf-status=\"loading\">\n<head>\n<meta charset=\"utf-8\">\n"
                     "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>noisefloor report: " +
                     html_escape(title) + "</title>\n<style>" + kStyle + "</style>\n<script>" + kEarlyScript +
                     "</script>\n</head>\n<body>\n" + body;
  html += "<script type=\"application/json\" id=\"nf-figures\">" +
          json_script_safe(specs.dump(-1, ' ', false, json::error_handler_t::replace)) + "</script>\n";
  if (with_vega) html += "<script>\n" + vega_js + "</script>\n";
  html += "<script>" + std::string(kScript) + "</script>\n</body>\n</html>\n";
  return html;
}

Status write_html_report(const std::string& out_dir, const nlohmann::json& results, const std::string& vega_dir) {
  NF_RETURN_IF_ERROR(make_dirs(out_dir));
  auto vega = load_vega_bundle(vega_dir);
  std::string html;
  json figures;
  try {
    html = vega.ok() ? render_html(results, *vega) : render_html(results, "", vega.status().message());
    figures = {{"schema", "noisefloor.figures/1"},
               {"renderer", "Vega 5 (https://vega.github.io/vega/docs/specification/)"},
               {"figures", build_figures(results)}};
  } catch (const json::exception& e) {
    // A results.json this renderer does not understand must not lose the run: report.md and
    // results.json are written; the page says what went wrong (and fails the browser test).
    html = std::string("<!DOCTYPE html>\n<html lang=\"en\" data-nf-status=\"error: report.html could not be "
                       "rendered\"><head><meta charset=\"utf-8\"><title>noisefloor report</title></head><body>"
                       "<p>report.html could not be rendered from results.json: ") +
           html_escape(e.what()) + ". report.md and results.json are complete.</p></body></html>\n";
    figures = {{"schema", "noisefloor.figures/1"}, {"figures", json::array()}, {"error", e.what()}};
  }
  NF_RETURN_IF_ERROR(write_file_atomic(out_dir + "/figures.json", figures.dump(2) + "\n"));
  NF_RETURN_IF_ERROR(write_file_atomic(out_dir + "/report.html", html));
  return Status::Ok();
}

}  // namespace nf
