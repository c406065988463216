// A nesting limit for JSON read from files: nlohmann parses any depth, but dumping,
// comparing or copying the value recurses once per level, and a text nested ~100,000
// levels deep (a hostile or broken dataset line) overflows the stack: a crash instead of
// an error. Readers check the text first.
#pragma once

#include <cstddef>
#include <string_view>

#include "util/status.h"

namespace nf {

/// The deepest nesting of arrays and objects noisefloor reads (no dataset, log or import
/// it knows comes near it; nlohmann's recursion is safe far beyond it).
inline constexpr size_t kMaxJsonDepth = 512;

/// Ok if no array or object in the JSON text `text` lies more than `max_depth` levels
/// deep (the top value is level 1; brackets inside strings do not count, escapes are
/// honoured). The text need not be valid JSON: this only counts, the parser judges the
/// rest. Otherwise InvalidArgument "WHERE: JSON nested deeper than MAX levels (arrays and
/// objects inside each other)". Linear in the text, no allocation.
Status check_json_depth(std::string_view text, std::string_view where, size_t max_depth = kMaxJsonDepth);

}  // namespace nf
