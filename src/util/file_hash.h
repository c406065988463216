// The SHA-256 of a file, read through one small reused buffer.
#pragma once

#include <string>

#include "util/status.h"

namespace nf {

/// SHA-256 of the bytes of file `path` as 64 lower-case hex digits (OpenSSL), equal to
/// sha256_hex(read_file(path)) (util/hash.h) but read in 64 KiB pieces through one reused
/// buffer: no buffer of the file's size (on a VM each first touch of a fresh page is a
/// costly fault; `run`'s provenance hashes its whole dataset). Errors as read_file:
/// NotFound if missing, InvalidArgument if a directory or unreadable; they name the path.
Result<std::string> sha256_file_hex(const std::string& path);

}  // namespace nf
