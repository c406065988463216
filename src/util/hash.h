// Stable, platform-independent hashing used for seeds, cache keys and study hashes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "util/status.h"

namespace nf {

/// FNV-1a 64-bit hash of `data`. Stable across platforms and releases: it seeds RNG
/// streams and keys the response cache, so changing it invalidates stored studies.
uint64_t fnv1a64(std::string_view data, uint64_t basis = 0xcbf29ce484222325ULL);

/// SplitMix64 finaliser: a bijective 64-bit mixer (Steele et al. 2014).
uint64_t mix64(uint64_t x);

/// Combines hashes order-dependently: hash_combine(a, b) != hash_combine(b, a).
uint64_t hash_combine(uint64_t a, uint64_t b);

/// 16 lower-case hex digits of `x`.
std::string hex64(uint64_t x);

/// SHA-256 of `data` as 64 lower-case hex digits (OpenSSL). Used for dataset and study
/// fingerprints in provenance records.
std::string sha256_hex(std::string_view data);

/// SHA-256 of the bytes of file `path` as 64 lower-case hex digits (OpenSSL), equal to
/// sha256_hex(read_file(path)) (util/file.h) but read in 64 KiB pieces through one reused
/// buffer: no buffer of the file's size (on a VM each first touch of a fresh page is a
/// costly fault; `run`'s provenance hashes its whole dataset). Errors as read_file:
/// NotFound if missing, InvalidArgument if a directory or unreadable; they name the path.
Result<std::string> sha256_file_hex(const std::string& path);

}  // namespace nf
