// One output layout for every `noisefloor stats` test (issue 13 item 7).
//
// Text: a first line "TEST: INPUT", then one "  name  value" line each for estimate,
// the interval ("95% CI  [low, high]"), p-value, n and method (a missing one prints
// "n/a"), then the test's further named values. JSON (--json): one object with the keys
// test, method, input, estimate, interval ([low, high] or null), level (with an
// interval), p_value, n (null when they do not apply), then the further values.
// Numbers: text shows 6 significant digits (fmt "{:.6g}": 0.036, 0.0351562, 1e-07);
// JSON carries the full double (the shortest text that reads back to the same double).
// A bootstrap interval (StatsReport::bootstrap) also carries `degenerate` (JSON: always,
// true/false; text: a "degenerate" line only when true) and, when true, `degenerate_note`:
// an interval with no width (low == high: every resample gave (almost) the same value) is
// not a statement of certainty (docs/intervals.md, as the analyses flag it).
// An extra value that is an object with lo/hi (e.g. exact_interval) prints in text as
// "[lo, hi] (note)".
// A p-value of exactly 0 prints in text as "< 2.2e-308 (...)" when the extra value
// p_method is "exact" (the exact value underflowed), else as "0 (the approximation's limit...)".
#pragma once

#include <optional>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "util/status.h"

namespace nf::cli {

/// The result of one stats test, printed by print_report.
struct StatsReport {
  std::string test;
  std::string method;
  std::string input;  // e.g. "18/100" or "r.csv (raters a, b, c; 8 items)"
  std::optional<double> estimate;
  std::optional<std::pair<double, double>> interval;
  double level = 0.95;
  std::optional<double> p_value;
  std::optional<int64_t> n;  // the count the estimate rests on (trials, items, pairs, clusters)
  bool bootstrap = false;    // `interval` is a bootstrap percentile interval: flag it when it has no width
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();  // further named values, in this order
};

/// A finite double as JSON, NaN/inf as null.
nlohmann::json json_number(double v);

/// A number as people write it: 6 significant digits ("0.036", "289", "1e-07"); "n/a" for
/// NaN; "inf"/"-inf".
std::string human_number(double v);

/// True when `r` holds a bootstrap interval with no width (low == high, both finite).
bool degenerate_interval(const StatsReport& r);

/// The text beside a degenerate bootstrap interval (text line and JSON degenerate_note).
extern const char* const kDegenerateNote;

/// Prints `r` to stdout in the layout above (JSON when `json`). Returns 0.
int print_report(const StatsReport& r, bool json);

/// Prints "noisefloor stats TEST: MESSAGE" to stderr and returns the exit code of `s`.
int stats_fail(const std::string& test, const Status& s);

}  // namespace nf::cli
