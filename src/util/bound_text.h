// An interval bound as text that never hides a non-zero value (issue 33, F3). Header-only.
#pragma once

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace nf {

/// An interval bound as fixed-point text with `decimals` places ("0.023"), unless that
/// text would read as exactly 0 or +-1 while `v` is not: then with enough digits to show
/// it (two significant digits near 0, "%.2g": 4.27e-4 -> "0.00043", 1.2e-5 -> "1.2e-05";
/// near +-1 one digit past the first that differs from 1: 0.99957 -> "0.99957").
/// Within 1e-12 of 0 or +-1 counts as that value (floating-point residue, not a bound).
/// "n/a" for NaN; "inf"/"-inf". Report tables use it so a Wilson bound of 0/9000 reads
/// [0.000, 0.00043], not [0.000, 0.000].
inline std::string format_bound(double v, int decimals = 3) {
  if (std::isnan(v)) return "n/a";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  auto fixed = [v](int d) {
    char buf[400];
    std::snprintf(buf, sizeof buf, "%.*f", d, v);
    return std::string(buf);
  };
  const std::string text = fixed(decimals);
  const double shown = std::strtod(text.c_str(), nullptr);
  // Exact, or a rounding residue (|v| or |1 - |v|| below 1e-12, e.g. 1 - 0.9999999999999999):
  // the fixed text is the truth.
  if (shown == v || std::fabs(v - shown) < 1e-12) {
    if (shown != 0.0) return text;
    char zero[64];
    std::snprintf(zero, sizeof zero, "%.*f", decimals, 0.0);  // never "-0.000"
    return zero;
  }
  if (shown == 0.0) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.2g", v);
    return buf;
  }
  if (std::fabs(shown) == 1.0) {
    for (int d = decimals + 1; d <= 17; ++d) {
      if (std::fabs(std::strtod(fixed(d).c_str(), nullptr)) != 1.0) return fixed(d + 1);
    }
  }
  return text;
}

}  // namespace nf
