// Checks every point-and-interval figure of figures.json must pass (tester s9 finding 21):
// labels distinct for distinct rows and short enough to be drawn whole; an interval or the
// no-interval mark for every point, each interval named in the caption; a legend entry and a
// caption sentence for every mark other than a plain point and bar. Used by
// tests/report/figure_marks_test.cc (hand-made results) and tests/cli/report_figures_cli_test.cc
// (the shipped examples).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "report/figure_labels.h"

namespace nf::testing {

using nlohmann::json;

constexpr double kPxPerChar = 6.0;  // Vega's 10-11 px sans-serif labels measure ~5.4 px a character

inline size_t code_points(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// The checks every point-and-interval figure must pass.
inline void check_figure(const json& fig) {
  SCOPED_TRACE(fig["id"].get<std::string>());
  const json& spec = fig["spec"];
  const json& rows = spec["data"][0]["values"];
  const std::string caption = fig["caption"];
  ASSERT_FALSE(rows.empty());
  // Labels: distinct for distinct rows, drawn whole (within the axis's or legend's labelLimit).
  double axis_limit = 1e9;
  for (const auto& a : spec.value("axes", json::array()))
    if (a["scale"] == "y" && a.contains("labelLimit")) axis_limit = a["labelLimit"].get<double>();
  double legend_limit = 1e9;
  for (const auto& l : spec.value("legends", json::array()))
    legend_limit = std::min(legend_limit, l.contains("labelLimit") ? l["labelLimit"].get<double>() : 160.0);
  for (const char* field : {"label", "group", "series"}) {
    if (!rows[0].contains(field)) continue;
    std::map<std::string, std::set<std::string>> fulls_of;
    std::set<std::string> fulls;
    for (const auto& r : rows) {
      ASSERT_TRUE(r.contains(std::string("full_") + field)) << field;
      fulls_of[r[field]].insert(r[std::string("full_") + field].get<std::string>());
      fulls.insert(r[std::string("full_") + field].get<std::string>());
      const std::string shown = r[field];
      EXPECT_LE(code_points(shown), kMaxLabelChars) << shown;
      const double limit = std::string(field) == "label" ? axis_limit : legend_limit;
      EXPECT_LE(kPxPerChar * static_cast<double>(code_points(shown)), limit) << field << " '" << shown << "' cut";
    }
    EXPECT_EQ(fulls_of.size(), fulls.size()) << field << ": two different rows render the same text";
  }
  // An interval or the no-interval mark for every point; each interval named in the caption.
  std::set<std::string> marks;
  bool exact = false;
  for (const auto& r : rows) {
    ASSERT_TRUE(r.contains("mark")) << r.dump();
    marks.insert(r["mark"].get<std::string>());
    exact = exact || r["xlo"].is_number();
    const bool has_ci = r["lo"].is_number() && r["hi"].is_number();
    if (!has_ci) {
      EXPECT_TRUE(r["mark"] == "no interval: estimate only" || r["mark"] == "degenerate interval (every resample equal)")
          << r.dump();
    } else {
      EXPECT_NE(caption.find(r["ci"].get<std::string>()), std::string::npos)
          << "caption does not name the interval '" << r["ci"] << "': " << caption;
    }
  }
  // A legend entry and a caption sentence for every mark other than a plain point and bar.
  std::set<std::string> legend;
  for (const auto& s : spec["scales"])
    if (s["name"] == "mshape")
      for (const auto& d : s["domain"]) legend.insert(d.get<std::string>());
  const std::map<std::string, std::string> said = {{"no interval: estimate only", "Hollow circles"},
                                                   {"degenerate interval (every resample equal)", "Red diamonds"},
                                                   {"fewer than 20 clusters", "Red triangles"}};
  for (const auto& [mark, phrase] : said) {
    if (!marks.count(mark)) continue;
    EXPECT_TRUE(legend.count(mark)) << "no legend entry for " << mark;
    EXPECT_NE(caption.find(phrase), std::string::npos) << caption;
  }
  if (exact) {
    EXPECT_TRUE(legend.count("Wilson bound beside a degenerate interval"));
    EXPECT_NE(caption.find("Red dashed bar"), std::string::npos) << caption;
  }
}


}  // namespace nf::testing
