// Stable, platform-independent hashing used for seeds, cache keys and study hashes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

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

}  // namespace nf
