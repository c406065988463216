// Small string helpers shared by every layer.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nf {

/// Levenshtein edit distance (insert, delete, substitute each cost 1).
size_t edit_distance(std::string_view a, std::string_view b);

/// The candidate closest to `word` by edit distance if it is within max(2, |word|/3),
/// else "". Used for "did you mean" suggestions (after ninja's edit_distance.cc).
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

/// " (did you mean 'x'?)" or "" when nothing is close.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

std::string trim(std::string_view s);
std::vector<std::string> split(std::string_view s, char sep);
std::string join(const std::vector<std::string>& parts, std::string_view sep);
std::string to_lower(std::string_view s);
bool starts_with(std::string_view s, std::string_view prefix);

/// A duration in seconds as "M:SS", or "H:MM:SS" from one hour; "--:--" when `seconds`
/// is negative or not finite (an ETA that is not known yet). Rounds to whole seconds.
std::string format_duration(double seconds);

/// The rank of each name in byte-wise (strcmp) order: rank[i] = position of names[i] in
/// the sorted list (0-based; names are distinct dictionary entries). Sorting integer codes
/// by these ranks orders rows as SQLite's ORDER BY with the BINARY collation would.
std::vector<uint32_t> sorted_ranks(const std::vector<std::string>& names);

}  // namespace nf
