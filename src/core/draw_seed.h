// Per-draw request seeds (issue 13 item 0).
//
// A server that honours `seed` (llama.cpp, vLLM, hosted APIs with a seed parameter)
// seeds its sampler from that value alone: two requests with the same seed draw the
// same uniforms whatever their prompts. A seed that depends only on the replicate index
// therefore makes replicate r of every item and every condition draw from one stream:
// identical prompts repeat each other (an identical re-render control shows no flips)
// and items are no longer independent clusters, so "under no effect the expected flip
// rate is the floor" (seed 000 §III.B) fails. The seed of each request is therefore
// mixed from the whole draw key, so draws are independent and still reproducible.
#pragma once

#include <cstdint>
#include <optional>

#include "core/types.h"

namespace nf {

/// The seed sent with the requests of draw `key`: a 31-bit value (0 .. 2^31-1, so every
/// server's int32 seed field accepts it) mixed from the config seed `config_seed`, the
/// study seed `study_seed` and every field of the draw key (subject, item, condition,
/// config, replicate). Distinct keys give distinct seeds up to 31-bit hash collisions
/// (about n^2 / 2^32 colliding pairs among n draws); equal inputs give the equal seed on
/// every platform. Returns nullopt when `config_seed` is nullopt (the config sends no
/// seed). Common random numbers across conditions are deliberately not offered: the
/// flip-rate analyses assume independent draws (no-effect flip rate = floor).
std::optional<int64_t> draw_request_seed(std::optional<int64_t> config_seed, uint64_t study_seed, const DrawKey& key);

}  // namespace nf
