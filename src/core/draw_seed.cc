#include "core/draw_seed.h"

#include "util/hash.h"

namespace nf {

std::optional<int64_t> draw_request_seed(std::optional<int64_t> config_seed, uint64_t study_seed, const DrawKey& key) {
  if (!config_seed) return std::nullopt;
  // Each string is hashed on its own and the hashes combined in a fixed order, so field
  // boundaries cannot alias ("ab"+"c" vs "a"+"bc").
  uint64_t h = hash_combine(static_cast<uint64_t>(*config_seed), study_seed);
  h = hash_combine(h, fnv1a64(key.subject));
  h = hash_combine(h, fnv1a64(key.item));
  h = hash_combine(h, fnv1a64(key.condition));
  h = hash_combine(h, fnv1a64(key.config));
  h = hash_combine(h, static_cast<uint64_t>(key.replicate));
  return static_cast<int64_t>(mix64(h) >> 33);
}

}  // namespace nf
