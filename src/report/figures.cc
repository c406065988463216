#include "report/figures.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "report/figure_labels.h"
#include "stats/cluster_interval.h"
#include "util/bound_text.h"

namespace nf {

namespace {

using nlohmann::json;

constexpr const char* kSchema = "https://vega.github.io/schema/vega/v5.json";
constexpr int kMaxRows = 60;  // rows per forest plot; the tables keep every row

std::string str(const json& o, const char* key) {
  return o.is_object() && o.contains(key) && o[key].is_string() ? o[key].get<std::string>() : std::string();
}

json numval(const json& o, const char* key) {
  return o.is_object() && o.contains(key) && o[key].is_number() ? json(o[key].get<double>()) : json();
}

std::string fmt3(const json& v) { return v.is_number() ? fmt::format("{:.3f}", v.get<double>()) : "n/a"; }

// "full-compliance rate" -> "Full-compliance rate".
std::string capitalized(std::string s) {
  if (!s.empty()) s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
  return s;
}

bool flagged(const json& r) { return r.value("degenerate", false) || r.value("few_clusters", false); }

// ---- the marks every point-and-interval figure uses (docs/report.md "What the marks mean") ----
// A point's `mark` is one of these; the legend lists the ones a figure uses and the caption
// says them in words (marks_sentence), so no mark goes unexplained.
const std::string kMarkInterval = "estimate, bar = its interval";
const std::string kMarkNone = "no interval: estimate only";
const std::string kMarkDegenerate = "degenerate interval (every resample equal)";
const std::string kMarkFew = fmt::format("fewer than {} clusters", stats::kFewClusters);
const std::string kMarkExact = "Wilson bound beside a degenerate interval";
constexpr const char* kRed = "#d62728";

// The mark of a row: a degenerate interval (results.json `degenerate`) is a red diamond, one
// over few clusters (`few_clusters`, below stats::kFewClusters) a red triangle, a point with
// no interval a hollow circle, any other a filled circle with its bar.
std::string mark_of(const json& source_row, bool has_interval) {
  if (source_row.value("degenerate", false)) return kMarkDegenerate;
  if (source_row.value("few_clusters", false)) return kMarkFew;
  return has_interval ? kMarkInterval : kMarkNone;
}

// Symbol encoding for a point whose colour group is in `field` of scale `scale`.
json symbol_encode(const std::string& scale, const std::string& field) {
  const std::string colour = fmt::format("scale('{}', datum.{})", scale, field);
  return {{"fill", {{"signal", fmt::format("datum.mark === '{}' ? 'white' : (datum.mark === '{}' || datum.mark === "
                                           "'{}') ? '{}' : {}",
                                           kMarkNone, kMarkDegenerate, kMarkFew, kRed, colour)}}},
          {"stroke", {{"signal", fmt::format("datum.mark === '{}' ? {} : null", kMarkNone, colour)}}},
          {"strokeWidth", {{"value", 1.5}}},
          {"shape", {{"signal", fmt::format("datum.mark === '{}' ? 'diamond' : datum.mark === '{}' ? 'triangle-up' : "
                                            "'circle'",
                                            kMarkDegenerate, kMarkFew)}}},
          {"size", {{"signal", fmt::format("datum.mark === '{}' || datum.mark === '{}' ? 90 : 45", kMarkDegenerate,
                                           kMarkFew)}}},
          {"tooltip", {{"field", "tip"}}}};
}

// Adds to `spec` the scales and the legend ("marks") naming every mark kind its points use,
// when any is other than a plain point with its interval; `exact`: a dashed exact interval
// is drawn.
void add_marks_legend(json& spec, const json& points, bool exact) {
  std::set<std::string> used;
  for (const auto& p : points) used.insert(p.value("mark", kMarkInterval));
  if (used.size() <= 1 && used.count(kMarkInterval) && !exact) return;
  json domain = json::array(), shape = json::array(), fill = json::array(), stroke = json::array(),
       dash = json::array();
  auto add = [&](const std::string& m, const char* sh, const char* fi, const char* st, json da) {
    if (!used.count(m) && !(m == kMarkExact && exact)) return;
    domain.push_back(m);
    shape.push_back(sh);
    fill.push_back(fi);
    stroke.push_back(st);
    dash.push_back(std::move(da));
  };
  add(kMarkInterval, "circle", "#666", "#666", json::array({1, 0}));
  add(kMarkNone, "circle", "white", "#666", json::array({1, 0}));
  add(kMarkDegenerate, "diamond", kRed, kRed, json::array({1, 0}));
  add(kMarkFew, "triangle-up", kRed, kRed, json::array({1, 0}));
  add(kMarkExact, "stroke", "transparent", kRed, json::array({3, 2}));
  for (const auto& [name, range] : {std::pair<const char*, json*>{"mshape", &shape}, {"mfill", &fill},
                                    {"mstroke", &stroke}, {"mdash", &dash}})
    spec["scales"].push_back({{"name", name}, {"type", "ordinal"}, {"domain", domain}, {"range", *range}});
  if (!spec.contains("legends")) spec["legends"] = json::array();
  spec["legends"].push_back({{"shape", "mshape"}, {"fill", "mfill"}, {"stroke", "mstroke"}, {"strokeDash", "mdash"},
                             {"title", "marks"}, {"orient", "right"}, {"labelLimit", 300}, {"symbolStrokeWidth", 1.5}});
}

// The marks a figure's points use, in words, for its caption.
std::string marks_sentence(const json& points, bool exact) {
  std::set<std::string> used;
  for (const auto& p : points) used.insert(p.value("mark", kMarkInterval));
  std::string s;
  if (used.count(kMarkNone)) s += " Hollow circles: no interval (the estimate alone).";
  if (used.count(kMarkDegenerate))
    s += " Red diamonds: a degenerate interval (every bootstrap resample gave the same value, so the bar has no "
         "width; not a statement of certainty).";
  if (exact)
    s += " Red dashed bar under a red diamond: the Wilson score interval of the same counts, which treats the pairs "
         "as independent and so is a lower limit on the uncertainty.";
  if (used.count(kMarkFew))
    s += fmt::format(" Red triangles: fewer than {} clusters (the interval may under-cover).", stats::kFewClusters);
  return s;
}

// A forest-plot row: label parts (y axis), colour group parts, estimate, interval (null when
// none) and the interval's name, mark and tooltip. The labels are shortened by forest_spec.
json forest_row(const LabelParts& label, const LabelParts& group, const json& est, const json& lo, const json& hi,
                const json& source_row, const std::string& ci_name) {
  const bool has_ci = lo.is_number() && hi.is_number();
  std::string tip = fmt3(est);
  if (has_ci) tip += fmt::format(" [{}, {}] ({})", fmt3(lo), fmt3(hi), ci_name);
  else tip += " (no interval)";
  json lp = json::array(), gp = json::array();
  for (const auto& [n, v] : label) lp.push_back({n, v});
  for (const auto& [n, v] : group) gp.push_back({n, v});
  json row = {{"_label", lp}, {"_group", gp}, {"est", est}, {"lo", has_ci ? lo : json()}, {"hi", has_ci ? hi : json()},
              {"ci", has_ci ? json(ci_name) : json()}, {"mark", mark_of(source_row, has_ci)}, {"xlo", nullptr},
              {"xhi", nullptr}};
  if (source_row.value("degenerate", false)) {
    tip += "; degenerate interval (every resample equal)";
    if (source_row.contains("exact_interval") && source_row["exact_interval"].is_object()) {
      const auto& e = source_row["exact_interval"];
      row["xlo"] = numval(e, "lo");
      row["xhi"] = numval(e, "hi");
      auto bound = [](const json& v) { return v.is_number() ? format_bound(v.get<double>()) : std::string("n/a"); };
      tip += fmt::format("; {} [{}, {}]", str(e, "method"), bound(row["xlo"]), bound(row["xhi"]));
    }
  }
  if (source_row.value("few_clusters", false))
    tip += fmt::format("; only {} clusters", source_row.value("clusters", json()).dump());
  row["tip"] = tip;
  return row;
}

LabelParts parts_of(const json& arr) {
  LabelParts out;
  for (const auto& p : arr) out.emplace_back(p[0].get<std::string>(), p[1].get<std::string>());
  return out;
}

struct Finalized {
  ShortLabels labels;  // of `label_field`
  ShortLabels groups;  // of `group_field`, over the distinct groups
};

// Replaces each row's `_<field>` label parts by the shortened label in `field`, the full text
// in `full_<field>`, and prefixes the tooltip with the full label.
Finalized finalize_labels(json& rows, const std::string& label_field, const std::string& group_field) {
  Finalized f;
  std::vector<LabelParts> labels, groups;
  std::map<std::string, size_t> group_index;
  for (const auto& r : rows) {
    labels.push_back(parts_of(r["_" + label_field]));
    if (!group_field.empty()) {
      const std::string key = r["_" + group_field].dump();
      if (group_index.emplace(key, groups.size()).second) groups.push_back(parts_of(r["_" + group_field]));
    }
  }
  f.labels = short_labels(labels);
  f.groups = short_labels(groups);
  for (size_t i = 0; i < rows.size(); ++i) {
    json& r = rows[i];
    r[label_field] = f.labels.labels[i];
    r["full_" + label_field] = f.labels.full[i];
    r["tip"] = f.labels.full[i] + ": " + r.value("tip", std::string());
    if (!group_field.empty()) {
      const size_t g = group_index[r["_" + group_field].dump()];
      r[group_field] = f.groups.labels[g];
      r["full_" + group_field] = f.groups.full[g];
      r.erase("_" + group_field);
    }
    r.erase("_" + label_field);
  }
  return f;
}

// A signal mapping each short label to its full text, for axis and legend label tooltips.
json full_text_signal(const std::string& name, const json& rows, const std::string& field) {
  json map = json::object();
  for (const auto& r : rows) map[r[field].get<std::string>()] = r["full_" + field];
  return {{"name", name}, {"value", map}};
}

json label_tooltip(const std::string& signal) {
  return {{"labels", {{"interactive", true}, {"update", {{"tooltip", {{"signal", signal + "[datum.value]"}}}}}}}};
}

// The subtitle of a figure whose labels are `l`: what the labels show and what every row
// shares, e.g. "rows: metric · temperature; every row: subject sim-fhir-agent".
std::string common_subtitle(const ShortLabels& l, const char* rows, const char* every) {
  std::string s;
  if (!l.names.empty() && l.names.find(" · ") != std::string::npos) s = fmt::format("{}: {}", rows, l.names);
  if (!l.common.empty()) s += fmt::format("{}{} {}", s.empty() ? "" : "; ", every, l.common);
  return s;
}

// A horizontal forest plot (point + interval per row, marks as mark_of() says, the exact
// interval of a degenerate row dashed below it). `zero_line` draws x = 0 for differences.
json forest_spec(const std::string& title, json rows, const std::string& x_title, bool zero_line) {
  const int n = static_cast<int>(rows.size());
  const Finalized f = finalize_labels(rows, "label", "group");
  std::set<std::string> groups;
  bool exact = false;
  for (const auto& r : rows) {
    groups.insert(r["group"].get<std::string>());
    exact = exact || r["xlo"].is_number();
  }
  json spec = json::parse(R"vega({
    "width": 420, "padding": 5, "autosize": "pad",
    "data": [{"name": "rows"},
             {"name": "ci", "source": "rows", "transform": [{"type": "filter", "expr": "isValid(datum.lo)"}]},
             {"name": "exact", "source": "rows", "transform": [{"type": "filter", "expr": "isValid(datum.xlo)"}]}],
    "scales": [
      {"name": "x", "type": "linear", "range": "width", "nice": true, "zero": true,
       "domain": {"fields": [{"data": "rows", "field": "est"}, {"data": "ci", "field": "lo"},
                             {"data": "ci", "field": "hi"}]}},
      {"name": "y", "type": "band", "domain": {"data": "rows", "field": "label"}, "range": "height", "padding": 0.3},
      {"name": "color", "type": "ordinal", "domain": {"data": "rows", "field": "group"}, "range": "category"}],
    "axes": [{"orient": "bottom", "scale": "x", "grid": true},
             {"orient": "left", "scale": "y", "labelLimit": 360}],
    "marks": [
      {"type": "rule", "from": {"data": "ci"}, "encode": {"enter": {
        "x": {"scale": "x", "field": "lo"}, "x2": {"scale": "x", "field": "hi"},
        "y": {"scale": "y", "field": "label", "band": 0.5},
        "stroke": {"scale": "color", "field": "group"}, "strokeWidth": {"value": 2}}}},
      {"type": "rule", "from": {"data": "exact"}, "encode": {"enter": {
        "x": {"scale": "x", "field": "xlo"}, "x2": {"scale": "x", "field": "xhi"},
        "y": {"scale": "y", "field": "label", "band": 0.5, "offset": 5},
        "stroke": {"value": "#d62728"}, "strokeDash": {"value": [3, 2]}, "strokeWidth": {"value": 1.5}}}},
      {"type": "symbol", "from": {"data": "rows"}, "encode": {"enter": {}}}]
  })vega");
  spec["$schema"] = kSchema;
  spec["title"] = {{"text", title}, {"anchor", "start"}, {"fontSize", 13}};
  if (const std::string sub = common_subtitle(f.labels, "rows", "every row:"); !sub.empty())
    spec["title"]["subtitle"] = sub;
  spec["height"] = std::max(40, 17 * n);
  spec["signals"] = json::array({full_text_signal("nfFullLabel", rows, "label")});
  spec["axes"][0]["title"] = x_title;
  spec["axes"][1]["encode"] = label_tooltip("nfFullLabel");
  spec["marks"][2]["encode"]["enter"] = symbol_encode("color", "group");
  spec["marks"][2]["encode"]["enter"]["x"] = {{"scale", "x"}, {"field", "est"}};
  spec["marks"][2]["encode"]["enter"]["y"] = {{"scale", "y"}, {"field", "label"}, {"band", 0.5}};
  if (groups.size() > 1) {
    spec["signals"].push_back(full_text_signal("nfFullGroup", rows, "group"));
    spec["legends"] = json::array({{{"fill", "color"}, {"title", f.groups.names}, {"orient", "right"},
                                    {"labelLimit", 300}, {"encode", label_tooltip("nfFullGroup")}}});
  }
  add_marks_legend(spec, rows, exact);
  spec["data"][0]["values"] = std::move(rows);
  if (zero_line)
    spec["marks"].insert(spec["marks"].begin(), json::parse(R"vega({"type": "rule", "encode": {"enter": {
        "x": {"scale": "x", "value": 0}, "y": {"value": 0}, "y2": {"signal": "height"},
        "stroke": {"value": "#888"}, "strokeDash": {"value": [4, 3]}}}})vega"));
  return spec;
}

// A line chart of `y` against `x`, one line per series, with vertical intervals where the
// points have them; points marked as mark_of() says.
json curve_spec(const std::string& title, json points, const std::string& x_title, const std::string& y_title) {
  const Finalized f = finalize_labels(points, "series", "");
  bool exact = false;
  for (const auto& p : points) exact = exact || p["xlo"].is_number();
  json spec = json::parse(R"vega({
    "width": 420, "height": 220, "padding": 5, "autosize": "pad",
    "data": [{"name": "points"},
             {"name": "ci", "source": "points", "transform": [{"type": "filter", "expr": "isValid(datum.lo)"}]},
             {"name": "exact", "source": "points", "transform": [{"type": "filter", "expr": "isValid(datum.xlo)"}]}],
    "scales": [
      {"name": "x", "type": "linear", "range": "width", "nice": true, "zero": false, "padding": 12,
       "domain": {"data": "points", "field": "x"}},
      {"name": "y", "type": "linear", "range": "height", "nice": true, "zero": true,
       "domain": {"fields": [{"data": "points", "field": "y"}, {"data": "ci", "field": "hi"}]}},
      {"name": "color", "type": "ordinal", "domain": {"data": "points", "field": "series"}, "range": "category"}],
    "axes": [{"orient": "bottom", "scale": "x", "tickMinStep": 1},
             {"orient": "left", "scale": "y", "grid": true}],
    "legends": [{"stroke": "color", "title": "", "orient": "right", "labelLimit": 300, "symbolType": "stroke",
                 "symbolStrokeWidth": 2}],
    "marks": [
      {"type": "group", "from": {"facet": {"name": "line", "data": "points", "groupby": "series"}},
       "marks": [{"type": "line", "from": {"data": "line"}, "sort": {"field": "datum.x"}, "encode": {"enter": {
         "x": {"scale": "x", "field": "x"}, "y": {"scale": "y", "field": "y"},
         "stroke": {"scale": "color", "field": "series"}, "strokeWidth": {"value": 1.5}}}}]},
      {"type": "rule", "from": {"data": "ci"}, "encode": {"enter": {
        "x": {"scale": "x", "field": "x"}, "y": {"scale": "y", "field": "lo"}, "y2": {"scale": "y", "field": "hi"},
        "stroke": {"scale": "color", "field": "series"}, "strokeOpacity": {"value": 0.5}}}},
      {"type": "rule", "from": {"data": "exact"}, "encode": {"enter": {
        "x": {"scale": "x", "field": "x", "offset": 4}, "y": {"scale": "y", "field": "xlo"},
        "y2": {"scale": "y", "field": "xhi"},
        "stroke": {"value": "#d62728"}, "strokeDash": {"value": [3, 2]}, "strokeWidth": {"value": 1.5}}}},
      {"type": "symbol", "from": {"data": "points"}, "encode": {"enter": {}}}]
  })vega");
  spec["$schema"] = kSchema;
  spec["title"] = {{"text", title}, {"anchor", "start"}, {"fontSize", 13}};
  if (const std::string sub = common_subtitle(f.labels, "lines", "every line:"); !sub.empty())
    spec["title"]["subtitle"] = sub;
  spec["signals"] = json::array({full_text_signal("nfFullSeries", points, "series")});
  spec["legends"][0]["title"] = f.labels.names;
  spec["legends"][0]["encode"] = label_tooltip("nfFullSeries");
  spec["marks"][3]["encode"]["enter"] = symbol_encode("color", "series");
  spec["marks"][3]["encode"]["enter"]["x"] = {{"scale", "x"}, {"field", "x"}};
  spec["marks"][3]["encode"]["enter"]["y"] = {{"scale", "y"}, {"field", "y"}};
  spec["axes"][0]["title"] = x_title;
  spec["axes"][1]["title"] = y_title;
  add_marks_legend(spec, points, exact);
  spec["data"][0]["values"] = std::move(points);
  return spec;
}

json point(const LabelParts& series, double x, const json& y, const json& lo, const json& hi, const json& src,
           const std::string& what, const std::string& ci_name) {
  const bool has_ci = lo.is_number() && hi.is_number();
  std::string tip = fmt::format("{} = {}", what, fmt3(y));
  if (has_ci) tip += fmt::format(" [{}, {}] ({})", fmt3(lo), fmt3(hi), ci_name);
  else tip += " (no interval)";
  json sp = json::array();
  for (const auto& [n, v] : series) sp.push_back({n, v});
  json p = {{"_series", sp}, {"x", x}, {"y", y}, {"lo", has_ci ? lo : json()}, {"hi", has_ci ? hi : json()},
            {"ci", has_ci ? json(ci_name) : json()}, {"mark", mark_of(src, has_ci)}, {"xlo", nullptr}, {"xhi", nullptr}};
  if (src.value("degenerate", false) && src.contains("exact_interval") && src["exact_interval"].is_object()) {
    p["xlo"] = numval(src["exact_interval"], "lo");
    p["xhi"] = numval(src["exact_interval"], "hi");
    tip += fmt::format("; degenerate; {} [{}, {}]", str(src["exact_interval"], "method"), fmt3(p["xlo"]),
                       fmt3(p["xhi"]));
  }
  if (src.value("few_clusters", false)) tip += fmt::format("; only {} clusters", src.value("clusters", json()).dump());
  p["tip"] = tip;
  return p;
}

// A figure: the caption is `caption` followed by what the marks its points use mean.
json figure(const std::string& id, const std::string& analysis, const std::string& title, const std::string& caption,
            json spec) {
  spec["description"] = title;
  std::string full = caption;
  if (spec.contains("data") && spec["data"].is_array() && !spec["data"].empty() &&
      spec["data"][0].contains("values")) {
    const json& v = spec["data"][0]["values"];
    bool exact = false;
    for (const auto& p : v) exact = exact || (p.contains("xlo") && p["xlo"].is_number());
    full += marks_sentence(v, exact);
  }
  return {{"id", id}, {"analysis", analysis}, {"title", title}, {"caption", full}, {"spec", std::move(spec)}};
}

LabelParts cell_parts(const json& r) {
  return {{"subject", str(r, "subject")}, {"config", str(r, "config")}, {"condition", str(r, "condition")}};
}

std::string cell_label(const json& r) {
  return fmt::format("{} · {} · {}", str(r, "subject"), str(r, "config"), str(r, "condition"));

}

// The reference conditions as the summary chooses them: the fairness analysis's references,
// else "none" when present, else the first condition named.
std::set<std::string> reference_conditions(const json& rows, const json& an) {
  std::set<std::string> refs;
  if (an.contains("fairness") && an["fairness"].is_object())
    for (const auto& r : an["fairness"].value("rows", json::array()))
      if (!str(r, "reference").empty()) refs.insert(str(r, "reference"));
  if (!refs.empty()) return refs;
  for (const auto& r : rows)
    if (str(r, "condition") == "none") refs.insert("none");
  if (refs.empty() && !rows.empty()) refs.insert(str(rows[0], "condition"));
  return refs;
}

void floor_figures(json& out, const json& f, const json& an) {
  const auto rows = f.value("rows", json::array());
  std::set<std::string> refs = reference_conditions(rows, an);
  json values = json::array();
  for (const auto& r : rows) {
    const bool pooled = str(r, "outcome") == "pooled";
    if (rows.size() > static_cast<size_t>(kMaxRows) && !pooled && !refs.count(str(r, "condition"))) continue;
    if (!r.contains("rate") || !r["rate"].is_number()) continue;
    LabelParts label = cell_parts(r);
    label.emplace_back("outcome", str(r, "outcome"));
    values.push_back(forest_row(label, {{"", pooled ? "pooled" : "per outcome"}}, numval(r, "rate"),
                                numval(r, "ci_low"), numval(r, "ci_high"), r, "item-cluster bootstrap"));
    if (values.size() >= static_cast<size_t>(kMaxRows)) break;
  }
  if (values.empty()) return;
  out.push_back(figure("floor-intervals", "floor", "Instability floor with cluster-bootstrap intervals",
                       std::string(rows.size() > static_cast<size_t>(kMaxRows)
                                       ? "Pooled rows and the reference condition's outcomes (the table lists every "
                                         "row). "
                                       : "") +
                           "Share of disagreeing replicate pairs; bars are the item-cluster bootstrap interval.",
                       forest_spec("Instability floor", std::move(values), "floor (share of disagreeing pairs)",
                                   false)));
}

void majority_figures(json& out, const json& m, const json& floor, const json& an) {
  // One series per cell on its pooled outcome (or its only outcome); R' = 1 is the plain floor.
  auto series_rows = [](const json& rows) {
    std::set<std::string> with_pooled;
    for (const auto& r : rows)
      if (str(r, "outcome") == "pooled") with_pooled.insert(cell_label(r));
    json keep = json::array();
    for (const auto& r : rows)
      if (str(r, "outcome") == "pooled" || !with_pooled.count(cell_label(r))) keep.push_back(r);
    return keep;
  };
  const json mrows = series_rows(m.value("rows", json::array()));
  if (mrows.empty()) return;
  std::set<std::string> refs = reference_conditions(mrows, an);
  std::set<std::string> series;
  for (const auto& r : mrows) series.insert(cell_label(r) + " · " + str(r, "outcome"));
  auto series_parts = [](const json& r) {
    LabelParts p = cell_parts(r);
    p.emplace_back("outcome", str(r, "outcome"));
    return p;
  };
  const bool restrict = series.size() > 12;
  json points = json::array();
  auto add = [&](const json& r, double x) {
    if (restrict && !refs.count(str(r, "condition"))) return;
    if (!r.contains("rate") || !r["rate"].is_number()) return;
    points.push_back(point(series_parts(r), x, numval(r, "rate"), numval(r, "ci_low"), numval(r, "ci_high"), r,
                           "floor", "item-cluster bootstrap"));
  };
  std::set<std::string> seen;
  for (const auto& r : mrows) seen.insert(cell_label(r) + " · " + str(r, "outcome"));
  if (floor.is_object())
    for (const auto& r : floor.value("rows", json::array()))
      if (seen.count(cell_label(r) + " · " + str(r, "outcome"))) add(r, 1);
  for (const auto& r : mrows) add(r, r.value("vote_size", 1));
  if (points.empty()) return;
  // The comparisons left out as ties, per R' over the plotted rows: the curve is a rate among
  // the rest only (an even R' can leave out most of them).
  std::map<int, std::pair<int64_t, int64_t>> ties;  // R' -> {excluded, possible}
  for (const auto& r : mrows) {
    if (restrict && !refs.count(str(r, "condition"))) continue;
    if (!r.contains("tie_excluded") || !r["tie_excluded"].is_number_integer() || !r.contains("possible_comparisons") ||
        !r["possible_comparisons"].is_number_integer())
      continue;
    auto& t = ties[r.value("vote_size", 1)];
    t.first += r["tie_excluded"].get<int64_t>();
    t.second += r["possible_comparisons"].get<int64_t>();
  }
  std::string tie_note;
  for (const auto& [v, t] : ties)
    tie_note += fmt::format("{}R' = {}: {} of {} comparisons ({:.1f}%)", tie_note.empty() ? "" : "; ", v, t.first,
                            t.second, t.second > 0 ? 100.0 * static_cast<double>(t.first) / static_cast<double>(t.second) : 0.0);
  if (!tie_note.empty()) tie_note = " Ties excluded (an undetermined vote; the floor is a rate among the rest): " + tie_note + ".";
  out.push_back(figure("majority-floor-curve", "majority_floor", "Floor after a majority vote of R' draws",
                       std::string(restrict ? "Reference condition only (the table lists every condition). " : "") +
                           "R' = 1 is the plain floor; vertical bars are the item-cluster bootstrap interval. Lines "
                           "with the same values lie on top of each other (hover a point, or see the table)." +
                           tie_note,
                       curve_spec("Majority-vote floor", std::move(points), "votes per answer (R')", "floor")));
}

// Per-action forest plot of flip rates over the floor band (seed 000 §III.B, S10, S12).
json fairness_forest_spec(const std::string& title, json flips, int conditions) {
  json spec = json::parse(R"vega({
    "padding": 5, "autosize": "pad",
    "layout": {"columns": 3, "padding": {"row": 24, "column": 24}, "bounds": "full", "align": "all"},
    "data": [{"name": "flips"}],
    "scales": [
      {"name": "x", "type": "linear", "range": [0, 200], "nice": true, "zero": true,
       "domain": {"fields": [{"data": "flips", "field": "hi"}, {"data": "flips", "field": "floor_hi"},
                             {"data": "flips", "field": "control_max"}]}},
      {"name": "y", "type": "band", "domain": {"data": "flips", "field": "condition"}, "range": [0, 100],
       "padding": 0.3},
      {"name": "kind", "type": "ordinal", "domain": ["contrast", "control arm", "flagged interval", "no interval"],
       "range": ["#1f77b4", "#7f7f7f", "#d62728", "#c7c7c7"]}],
    "legends": [{"fill": "kind", "shape": "kshape", "title": "", "orient": "top", "direction": "horizontal"}],
    "marks": [{"type": "group", "from": {"facet": {"name": "cell", "data": "flips", "groupby": "action"}},
      "sort": {"field": "datum.action"},
      "title": {"text": {"signal": "parent.action"}, "anchor": "start", "fontSize": 12},
      "encode": {"update": {"width": {"value": 200}, "height": {"value": 100}}},
      "data": [{"name": "band", "source": "cell", "transform": [{"type": "aggregate",
        "fields": ["floor", "floor_lo", "floor_hi", "control_max"], "ops": ["min", "min", "max", "max"],
        "as": ["floor", "lo", "hi", "cmax"]}]}],
      "axes": [{"orient": "bottom", "scale": "x", "tickCount": 4, "grid": true, "title": "flip rate"},
               {"orient": "left", "scale": "y", "labelLimit": 190, "labelFontSize": 9}],
      "marks": [
        {"type": "rect", "from": {"data": "band"}, "encode": {"enter": {
          "x": {"scale": "x", "field": "lo"}, "x2": {"scale": "x", "field": "hi"},
          "y": {"value": 0}, "y2": {"field": {"group": "height"}},
          "fill": {"value": "#ff7f0e"}, "fillOpacity": {"value": 0.18},
          "tooltip": {"signal": "'floor ' + format(datum.floor, '.3f') + ' [' + format(datum.lo, '.3f') + ', ' + format(datum.hi, '.3f') + ']'"}}}},
        {"type": "rule", "from": {"data": "band"}, "encode": {"enter": {
          "x": {"scale": "x", "field": "floor"}, "y": {"value": 0}, "y2": {"field": {"group": "height"}},
          "stroke": {"value": "#ff7f0e"}, "strokeWidth": {"value": 2}}}},
        {"type": "rule", "from": {"data": "band"}, "encode": {"enter": {
          "x": {"scale": "x", "field": "cmax"}, "y": {"value": 0}, "y2": {"field": {"group": "height"}},
          "stroke": {"value": "#555"}, "strokeDash": {"value": [4, 3]}}}},
        {"type": "rule", "from": {"data": "cell"}, "encode": {"enter": {
          "x": {"scale": "x", "field": "lo"}, "x2": {"scale": "x", "field": "hi"},
          "y": {"scale": "y", "field": "condition", "band": 0.5},
          "stroke": {"scale": "kind", "field": "kind"}, "strokeWidth": {"value": 1.5}}}},
        {"type": "symbol", "from": {"data": "cell"}, "encode": {"enter": {
          "x": {"scale": "x", "field": "est"}, "y": {"scale": "y", "field": "condition", "band": 0.5},
          "fill": {"scale": "kind", "field": "kind"},
          "shape": {"scale": "kshape", "field": "kind"},
          "size": {"value": 40}, "tooltip": {"field": "tip"}}}}]}]
  })vega");
  const int h = std::max(40, 14 * conditions);
  spec["$schema"] = kSchema;
  spec["title"] = {{"text", title},
                   {"subtitle", "orange: the action's floor and its interval (expected flip rate under no effect); "
                                "dashed: largest control arm"},
                   {"anchor", "start"},
                   {"fontSize", 13}};
  spec["scales"][1]["range"] = json::array({0, h});
  spec["marks"][0]["encode"]["update"]["height"]["value"] = h;
  // The legend names only the kinds drawn, each with its own shape.
  static const std::vector<std::tuple<std::string, std::string, std::string>> kKinds = {
      {"contrast", "#1f77b4", "circle"},
      {"control arm", "#7f7f7f", "square"},
      {"flagged interval", "#d62728", "diamond"},
      {"no interval", "#c7c7c7", "circle"}};
  std::set<std::string> used;
  for (const auto& x : flips) used.insert(x.value("kind", std::string()));
  json domain = json::array(), colours = json::array(), shapes = json::array();
  for (const auto& [kind, colour, shape] : kKinds)
    if (used.count(kind)) {
      domain.push_back(kind);
      colours.push_back(colour);
      shapes.push_back(shape);
    }
  spec["scales"][2]["domain"] = domain;
  spec["scales"][2]["range"] = colours;
  spec["scales"].push_back({{"name", "kshape"}, {"type", "ordinal"}, {"domain", domain}, {"range", shapes}});
  spec["data"][0]["values"] = std::move(flips);
  return spec;
}

void fairness_figures(json& out, const json& f) {
  int n = 0;
  for (const auto& row : f.value("rows", json::array())) {
    const std::string who = fmt::format("{} / {}", str(row, "subject"), str(row, "config"));
    const std::string id = fmt::format("fairness-{}", n++);
    // Floors per action.
    json floors = json::array();
    json floor_of = json::object();
    for (const auto& a : row.value("floors", json::array())) {
      const std::string action = str(a, "action");
      floor_of[action] = a;
      if (!a.contains("rate") || !a["rate"].is_number()) continue;
      floors.push_back(forest_row({{"action", action}}, {{"", action.rfind("pooled", 0) == 0 ? "pooled" : "action"}},
                                  numval(a, "rate"), numval(a, "ci_low"), numval(a, "ci_high"), a,
                                  "vignette-cluster bootstrap"));
    }
    if (!floors.empty())
      out.push_back(figure(id + "-floors", "fairness", "Per-action instability floor: " + who,
                           "Reference condition " + str(row, "reference") +
                               "; bars are the vignette-cluster bootstrap interval.",
                           forest_spec("Per-action floor (" + who + ")", std::move(floors), "floor", false)));
    // Forest plot of flips against the floor band.
    json flips = json::array();
    std::set<std::string> conditions;
    for (const auto& x : row.value("flips", json::array())) {
      if (!x.contains("flip_rate") || !x["flip_rate"].is_number()) continue;
      const std::string action = str(x, "action");
      const json& fl = floor_of.contains(action) ? floor_of[action] : json::object();
      const json lo = numval(x, "flip_low"), hi = numval(x, "flip_high");
      const json floor_v = numval(x, "floor");
      json floor_lo = numval(fl, "ci_low"), floor_hi = numval(fl, "ci_high");
      if (!floor_lo.is_number()) floor_lo = floor_v;
      if (!floor_hi.is_number()) floor_hi = floor_v;
      const std::string kind = x.value("control", false) ? "control arm"
                               : flagged(x)                ? "flagged interval"
                               : !lo.is_number() || !hi.is_number() ? "no interval"
                                                                    : "contrast";
      std::string tip = fmt::format("{} on {}: flip {} [{}, {}], floor {}; {}", str(x, "condition"), action,
                                    fmt3(x["flip_rate"]), fmt3(lo), fmt3(hi), fmt3(floor_v), str(x, "reading"));
      if (x.contains("q_value") && x["q_value"].is_number()) tip += "; q = " + fmt3(x["q_value"]);
      if (x.value("few_clusters", false)) tip += fmt::format("; only {} clusters", x.value("clusters", json()).dump());
      conditions.insert(str(x, "condition"));
      flips.push_back({{"action", action}, {"condition", str(x, "condition")}, {"kind", kind},
                       {"est", x["flip_rate"]}, {"lo", lo.is_number() ? lo : x["flip_rate"]},
                       {"hi", hi.is_number() ? hi : x["flip_rate"]}, {"floor", floor_v}, {"floor_lo", floor_lo},
                       {"floor_hi", floor_hi}, {"control_max", numval(x, "control_max")}, {"tip", tip}});
    }
    std::set<std::string> kinds;
    for (const auto& x : flips) kinds.insert(x["kind"].get<std::string>());
    std::string marks;
    if (kinds.count("control arm")) marks += " Grey squares: control arms.";
    if (kinds.count("flagged interval"))
      marks += fmt::format(" Red diamonds (flagged interval): a degenerate interval (every resample equal; not "
                           "certainty) or fewer than {} vignette clusters; hover for which.",
                           stats::kFewClusters);
    if (kinds.count("no interval")) marks += " Light grey circles: no interval (the estimate alone).";
    if (!flips.empty())
      out.push_back(figure(id + "-flips", "fairness", "Flip rate against the floor: " + who,
                           "One panel per action: each descriptor contrast's flip rate with its vignette-cluster "
                           "interval; under no effect the expected flip rate is the floor (orange band). A contrast "
                           "is credible only above the largest control arm (dashed)." + marks,
                           fairness_forest_spec("Flip rate vs floor (" + who + ")", std::move(flips),
                                                static_cast<int>(conditions.size()))));
    // Subsampling and majority-vote curves.
    json sub = json::array();
    for (const auto& s : row.value("subsample", json::array()))
      if (s.contains("rate") && s["rate"].is_number())
        sub.push_back(point({{"series", "pooled floor"}}, s.value("k", 0), s["rate"], json(), json(), s, "floor", ""));
    if (!sub.empty())
      out.push_back(figure(id + "-subsample", "fairness", "Subsampling curve: " + who,
                           "Pooled floor estimated from the first K vignettes (seed 000 S2); no interval per K.",
                           curve_spec("Floor vs number of vignettes (" + who + ")", std::move(sub), "vignettes (K)",
                                      "floor")));
    json maj = json::array();
    std::set<std::string> with_majority;
    for (const auto& m : row.value("majority", json::array())) with_majority.insert(str(m, "action"));
    for (const auto& a : row.value("floors", json::array()))
      if (with_majority.count(str(a, "action")) && a.contains("rate") && a["rate"].is_number())
        maj.push_back(point({{"action", str(a, "action")}}, 1, a["rate"], numval(a, "ci_low"), numval(a, "ci_high"), a,
                            "floor", "vignette-cluster bootstrap"));
    for (const auto& m : row.value("majority", json::array()))
      if (m.contains("rate") && m["rate"].is_number())
        maj.push_back(point({{"action", str(m, "action")}}, m.value("vote_size", 1), m["rate"], numval(m, "ci_low"),
                            numval(m, "ci_high"), m, "floor", "vignette-cluster bootstrap"));
    if (!maj.empty())
      out.push_back(figure(id + "-majority", "fairness", "Majority-vote floor per action: " + who,
                           "R' = 1 is the plain floor; larger R' answer with the majority of R' draws. Vertical "
                           "bars: the vignette-cluster bootstrap interval. Lines with the same values lie on top of "
                           "each other (hover a point).",
                           curve_spec("Floor after majority vote (" + who + ")", std::move(maj),
                                      "votes per answer (R')", "floor")));
  }
}

void human_validity_figures(json& out, const json& f) {
  json cells = json::array();
  auto add = [&](const std::string& row, const std::string& col, const json& k) {
    if (!k.is_object() || !k.contains("estimate") || !k["estimate"].is_number()) return;
    std::string tip = fmt::format("{} vs {}: kappa {}", row, col, fmt3(k["estimate"]));
    if (k.contains("low") && k["low"].is_number()) tip += fmt::format(" [{}, {}]", fmt3(k["low"]), fmt3(k["high"]));
    cells.push_back({{"row", row}, {"col", col}, {"kappa", k["estimate"]}, {"tip", tip}});
  };
  for (const auto& p : f.value("pairs", json::array())) {
    add(str(p, "a"), str(p, "b"), p.value("cohen_kappa", json()));
    add(str(p, "b"), str(p, "a"), p.value("cohen_kappa", json()));
  }
  for (const auto& a : f.value("aggregation", json::array())) add(str(a, "rule"), str(a, "reference"), a.value("kappa", json()));
  if (!cells.empty()) {
    json spec = json::parse(R"vega({
      "padding": 5, "autosize": "pad",
      "data": [{"name": "cells"}],
      "scales": [
        {"name": "x", "type": "band", "domain": {"data": "cells", "field": "col"}, "range": "width"},
        {"name": "y", "type": "band", "domain": {"data": "cells", "field": "row"}, "range": "height"},
        {"name": "c", "type": "linear", "domain": [-0.2, 1], "range": {"scheme": "blues"}, "clamp": true}],
      "axes": [{"orient": "top", "scale": "x", "title": "reference rater"},
               {"orient": "left", "scale": "y", "title": "rater or aggregation rule", "labelLimit": 240}],
      "legends": [{"fill": "c", "title": "Cohen kappa", "orient": "right"}],
      "marks": [
        {"type": "rect", "from": {"data": "cells"}, "encode": {"enter": {
          "x": {"scale": "x", "field": "col"}, "width": {"scale": "x", "band": 1, "offset": -1},
          "y": {"scale": "y", "field": "row"}, "height": {"scale": "y", "band": 1, "offset": -1},
          "fill": {"scale": "c", "field": "kappa"}, "tooltip": {"field": "tip"}}}},
        {"type": "text", "from": {"data": "cells"}, "encode": {"enter": {
          "x": {"scale": "x", "field": "col", "band": 0.5}, "y": {"scale": "y", "field": "row", "band": 0.5},
          "align": {"value": "center"}, "baseline": {"value": "middle"}, "fontSize": {"value": 10},
          "text": {"signal": "format(datum.kappa, '.2f')"},
          "fill": {"signal": "datum.kappa > 0.6 ? 'white' : 'black'"}}}}]
    })vega");
    std::set<std::string> rows, cols;
    for (const auto& c : cells) {
      rows.insert(c["row"].get<std::string>());
      cols.insert(c["col"].get<std::string>());
    }
    spec["$schema"] = kSchema;
    spec["title"] = {{"text", "Agreement with each human rater (Cohen kappa)"}, {"anchor", "start"}, {"fontSize", 13}};
    spec["width"] = std::max<int>(120, 70 * static_cast<int>(cols.size()));
    spec["height"] = std::max<int>(60, 22 * static_cast<int>(rows.size()));
    spec["data"][0]["values"] = std::move(cells);
    out.push_back(figure("human-validity-kappa", "human_validity", "Kappa matrix: raters and judge rules vs raters",
                         "Cohen kappa of each rater pair and of each aggregation rule against each rater; hover for "
                         "the prompt-cluster bootstrap interval.",
                         std::move(spec)));
  }
  json diffs = json::array();
  for (const auto& r : f.value("judge_minus_rater", json::array()))
    if (r.contains("difference") && r["difference"].is_number())
      diffs.push_back(forest_row({{"judge", str(r, "judge")}, {"reference", str(r, "reference")}},
                                 {{"reference", str(r, "reference")}}, numval(r, "difference"), numval(r, "low"),
                                 numval(r, "high"), r, "prompt-cluster bootstrap"));
  if (!diffs.empty())
    out.push_back(figure("human-validity-differences", "human_validity", "Judge minus rater",
                         "Paired difference of appropriate rates (positive = judge more lenient); bars are the "
                         "prompt-cluster bootstrap interval.",
                         forest_spec("Judge minus rater (appropriate rate)", std::move(diffs), "difference", true)));
}

// Any array of rows with an estimate and an interval.
void generic_figures(json& out, const std::string& name, const json& a) {
  static const char* kEst[] = {"rate", "estimate", "difference", "flip_rate", "kappa", "coef"};
  static const std::pair<const char*, const char*> kCi[] = {{"ci_low", "ci_high"}, {"low", "high"}};
  static const std::set<std::string> kNotLabels = {"source", "method", "reading", "note", "formula", "provider"};
  if (!a.is_object()) return;
  for (const auto& [key, rows] : a.items()) {
    if (!rows.is_array() || rows.empty() || !rows[0].is_object()) continue;
    const char* est = nullptr;
    const std::pair<const char*, const char*>* ci = nullptr;
    for (const char* e : kEst)
      if (rows[0].contains(e) && rows[0][e].is_number()) {
        est = e;
        break;
      }
    for (const auto& c : kCi)
      if (rows[0].contains(c.first)) {
        ci = &c;
        break;
      }
    if (est == nullptr || ci == nullptr) continue;
    json values = json::array();
    for (const auto& r : rows) {
      if (!r.contains(est) || !r[est].is_number()) continue;
      LabelParts label;
      LabelParts group;
      for (const auto& [k, v] : r.items()) {
        if (!v.is_string() || kNotLabels.count(k)) continue;
        if (k == "metric" || k == "judge") group = {{k, v.get<std::string>()}};
        label.emplace_back(k, v.get<std::string>());
      }
      if (group.empty()) group = {{"rows", key}};
      values.push_back(forest_row(label, group, r[est], numval(r, ci->first), numval(r, ci->second), r,
                                  fmt::format("{}/{}", ci->first, ci->second)));
      if (values.size() >= static_cast<size_t>(kMaxRows)) break;
    }
    if (values.empty()) continue;
    // Titles for the arrays the shipped analyses emit; any other reads "analysis: key". The
    // judge panel's rate is the one its criterion defines (rate_label, metrics/judge_panel.h
    // judge_rate_label: "full-compliance rate" for XSTest), as the report's text says.
    const std::string rate = capitalized(a.value("rate_label", std::string("appropriate-response rate")));
    const std::map<std::string, std::string> titles = {
        {"judge_panel/rates", rate + " by judge and subject"},
        {"judge_panel/by_condition", rate + " by condition, judge and subject"},
        {"mcq_robustness/rows", "MCQ accuracy and inappropriate-confident rates"}};
    const auto known = titles.find(name + "/" + key);
    const std::string title = known != titles.end() ? known->second : fmt::format("{}: {}", name, key);
    out.push_back(figure(fmt::format("{}-{}", name, key), name, title,
                         (rows.size() > static_cast<size_t>(kMaxRows)
                              ? fmt::format("First {} of {} rows (the table lists every row). ", kMaxRows, rows.size())
                              : std::string()) +
                             fmt::format("Estimates with their intervals as results.json gives them (bars: "
                                         "{}/{}).",
                                         ci->first, ci->second),
                         forest_spec(title, std::move(values), est, false)));
  }
}

// Same-input rerun (seed 002 §4): every metric of every arm with the interval the table gives
// first: the Wilson interval of a count metric; the group-cluster bootstrap of the pairwise
// order-set disagreement (its run pairs are not independent, so it has no Wilson interval).
void rerun_figures(json& out, const json& a) {
  json values = json::array();
  const json level = a.contains("bootstrap") && a["bootstrap"].is_object() ? numval(a["bootstrap"], "level") : json();
  const std::string boot_name =
      level.is_number() ? fmt::format("{:g}% group-cluster bootstrap", 100 * level.get<double>())
                        : std::string("group-cluster bootstrap");
  bool any_boot = false;
  for (const auto& arm : a.value("arms", json::array())) {
    const LabelParts group = {{"subject", str(arm, "subject")}, {"config", str(arm, "config")}};
    if (!arm.contains("metrics") || !arm["metrics"].is_object()) continue;
    for (const auto& [metric, m] : arm["metrics"].items()) {
      if (!m.is_object() || !m.contains("rate") || !m["rate"].is_number()) continue;
      LabelParts label = {{"metric", metric}};
      label.insert(label.end(), group.begin(), group.end());
      const bool wilson = m.contains("low") && m["low"].is_number();
      const json& gb = m.contains("group_bootstrap") ? m["group_bootstrap"] : json();
      json row = wilson ? forest_row(label, group, m["rate"], numval(m, "low"), numval(m, "high"), m, "Wilson 95%")
                        : forest_row(label, group, m["rate"], numval(gb, "low"), numval(gb, "high"), m, boot_name);
      any_boot = any_boot || (!wilson && row["lo"].is_number());
      row["tip"] = row["tip"].get<std::string>() +
                   (m.contains("pairs")
                        ? fmt::format(" ({} of {} run pairs)", m.value("pairs_differing", json()).dump(),
                                      m.value("pairs", json()).dump())
                        : fmt::format(" ({} of {} {})", m.value("count", json()).dump(), m.value("n", json()).dump(),
                                      str(m, "denominator")));
      values.push_back(std::move(row));
      if (values.size() >= static_cast<size_t>(kMaxRows)) break;
    }
  }
  if (values.empty()) return;
  out.push_back(figure("rerun-metrics", "rerun", "Same-input rerun: action-level metrics per arm",
                       std::string("Each metric's rate per arm (colour); bars are the Wilson 95% interval of a "
                                   "count metric") +
                           (any_boot ? "; for pairwise_order_set_disagreement (run pairs within a group are not "
                                       "independent, so no Wilson interval) the " + boot_name + " interval of the table"
                                     : std::string()) +
                           ". Denominators in the tooltip and the table.",
                       forest_spec("Rerun metrics per arm", std::move(values), "rate", false)));
}

// The envelope's bootstrap range of a metric (results.json envelope.bootstrap.metrics[key]).
json boot_metric(const json& a, const std::string& key) {
  if (!a.contains("bootstrap") || !a["bootstrap"].is_object()) return json();
  const json& m = a["bootstrap"].value("metrics", json::object());
  return m.is_object() && m.contains(key) ? m[key] : json();
}

// Configuration envelope (seed 003 §4): rho_flip per model pair (0 = certificate of no
// strict reversal on the grid) and every subject's score per configuration.
void envelope_figures(json& out, const json& a) {
  const json& boot = a.contains("bootstrap") && a["bootstrap"].is_object() ? a["bootstrap"] : json::object();
  const json level = numval(boot, "level");
  const std::string boot_name = level.is_number()
                                    ? fmt::format("{:g}% configuration-bootstrap", 100 * level.get<double>())
                                    : std::string("configuration-bootstrap");
  json pairs = json::array();
  for (const auto& p : a.value("pairs", json::array())) {
    if (!p.contains("rho_flip") || !p["rho_flip"].is_number()) continue;
    const json range = boot_metric(a, str(p, "a") + "|" + str(p, "b") + ".rho_flip");
    json row = forest_row({{"pair", fmt::format("{} vs {}", str(p, "a"), str(p, "b"))}},
                          {{"verdict", p.value("no_strict_reversal", false) ? "no strict reversal"
                                                                              : "reverses on the grid"}},
                          p["rho_flip"], numval(range, "low"), numval(range, "high"), p, boot_name);
    row["tip"] = row["tip"].get<std::string>() + fmt::format(" (n+ {}, n- {}, ties {})", p.value("n_plus", json()).dump(),
                                                             p.value("n_minus", json()).dump(),
                                                             p.value("n_ties", json()).dump());
    pairs.push_back(std::move(row));
    if (pairs.size() >= static_cast<size_t>(kMaxRows)) break;
  }
  if (!pairs.empty())
    out.push_back(figure("envelope-rho-flip", "envelope", "rho_flip per model pair",
                         "Minority strict-sign share over the configurations (seed 003 §4); 0 certifies that the "
                         "pairwise verdict never strictly reverses on this grid. Bars: the " + boot_name +
                             " range (configurations resampled; a range within this grid, not a population "
                             "interval), as in the table.",
                         forest_spec("rho_flip per pair", std::move(pairs), "rho_flip", true)));
  json cells = json::array();
  for (const auto& subj : a.value("subjects", json::array())) {
    for (const auto& c : subj.value("cells", json::array())) {
      if (!c.contains("score") || !c["score"].is_number()) continue;
      json row = forest_row({{"config", str(c, "config")}, {"subject", str(subj, "subject")}},
                            {{"subject", str(subj, "subject")}}, c["score"], json(), json(), c, "");
      if (c.contains("neighbourhood") && c["neighbourhood"].is_object())
        row["tip"] = row["tip"].get<std::string>() +
                     fmt::format("; parse rate {}; neighbourhood [{}, {}] over {} configurations", fmt3(numval(c, "parse_rate")),
                                 fmt3(numval(c["neighbourhood"], "min")), fmt3(numval(c["neighbourhood"], "max")),
                                 c["neighbourhood"].value("n", json()).dump());
      cells.push_back(std::move(row));
      if (cells.size() >= static_cast<size_t>(kMaxRows)) break;
    }
  }
  if (!cells.empty())
    out.push_back(figure("envelope-scores", "envelope", "Score per subject and configuration",
                         "Each subject's score in each configuration cell, a point estimate with no interval "
                         "(the table \"Score per configuration\" gives n, parse rate and the neighbourhood: the "
                         "range of the subject's scores over the configurations one axis value away).",
                         forest_spec("Score per configuration", std::move(cells), "score", false)));
}

}  // namespace

nlohmann::json build_figures(const nlohmann::json& results) {
  json out = json::array();
  if (!results.is_object() || !results.contains("analyses") || !results["analyses"].is_object()) return out;
  const auto& an = results["analyses"];
  for (const auto& [name, a] : an.items()) {
    if (!a.is_object() || a.contains("skipped")) continue;
    if (name == "floor") floor_figures(out, a, an);
    else if (name == "majority_floor") majority_figures(out, a, an.contains("floor") ? an["floor"] : json(), an);
    else if (name == "fairness") fairness_figures(out, a);
    else if (name == "human_validity") human_validity_figures(out, a);
    else if (name == "rerun") rerun_figures(out, a);
    else if (name == "envelope") envelope_figures(out, a);
    else generic_figures(out, name, a);
  }
  return out;
}

}  // namespace nf
