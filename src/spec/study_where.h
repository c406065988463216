#pragma once
// "file:line: key" for errors about a study key found after the study was parsed (e.g. a
// task kind's own task_options), so they name the place as the parser's errors do.

#include <string>
#include <string_view>

#include "spec/study.h"

namespace nf {

/// "PATH:LINE: KEY" where LINE is the 1-based line of the dotted `key` (e.g.
/// "task_options.families") in the study's source text; "PATH: KEY" when the study has no
/// source (built in code) or the key is not in it. Never fails: a message helper. Source:
/// docs/study.md "Every error names the file, the line and the dotted key".
std::string study_key_where(const Study& study, std::string_view key);

}  // namespace nf
