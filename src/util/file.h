// Whole-file and line-oriented reading with errors that name the path.
#pragma once

#include <string>
#include <vector>

#include "util/status.h"

namespace nf {

/// Reads the whole file. NotFound if it does not exist, InvalidArgument if it is a
/// directory or unreadable; the message names the path.
Result<std::string> read_file(const std::string& path);

/// Writes `data` to `path` atomically (write to path.tmp, then rename).
Status write_file_atomic(const std::string& path, const std::string& data);

/// Creates `dir` and its parents; OK if it already exists.
Status make_dirs(const std::string& dir);

}  // namespace nf
