// One JSON document per line (JSONL), parsed with the checks nlohmann's DOM parse lacks
// (issue 15): a repeated key and an underflowing number would otherwise change silently.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "util/status.h"

namespace nf {

/// Parses `text` (one JSON value, e.g. one line of a JSONL file) into `*out` as
/// nlohmann::json::parse does, and also refuses what that parse would silently change:
///  - a key repeated within one object, at any depth (the DOM keeps one of them):
///    "path:line: KEY: the key appears twice in one object (...)";
///  - a number whose text is not zero but which reads as 0 or as a subnormal double
///    (number_underflows: 1e-400, 1e-310): "path:line: KEY: 'TEXT' is out of range: ..."
///    (KEY: the key the number is under, or the innermost one).
/// A syntax error (1e999, NaN and Infinity included) is "path:line: malformed JSON:
/// <the parser's message>". All errors are InvalidArgument. Memory: the keys of the open
/// objects (checked by a linear scan up to 32 keys per object, by a hash set beyond).
Status parse_json_line(const std::string& path, size_t line, const std::string& text, nlohmann::json* out);

/// True if the decimal number `text`, read as `v` (strtod or the JSON parser), is not zero
/// but `v` is 0 or subnormal (its magnitude below DBL_MIN = 2.2250738585072014e-308):
/// 1e-400 reads as 0, 1e-310 with lost precision. A zero written another way (0e-400,
/// -0.000E+5) is not one.
bool number_underflows(std::string_view text, double v);

/// "'TEXT' is out of range: not zero, but below the smallest normal double (2.2e-308),
/// so it would be read as 0 or with lost precision (write 0 if it is zero)".
std::string underflow_message(std::string_view text);

}  // namespace nf
