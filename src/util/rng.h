// Seeded random-number streams. Core logic never calls std::random_device or the clock:
// every stochastic routine takes an Rng (or a seed) so results are reproducible and
// recorded (STYLE.md: "every bootstrap result records its seed").
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string_view>

namespace nf {

/// xoshiro256** (Blackman & Vigna 2018) seeded through SplitMix64. The bit stream is
/// fully specified here (unlike std:: distributions), so a seed gives the same numbers
/// on every platform and compiler.
class Rng {
 public:
  explicit Rng(uint64_t seed);

  /// A stream that depends only on (seed, ids...): the way to give each bootstrap
  /// replicate, draw key or worker its own independent, scheduling-free stream.
  static Rng stream(uint64_t seed, std::initializer_list<uint64_t> ids);

  uint64_t next_u64();
  /// Uniform double in [0, 1) with 53 random bits.
  double uniform();
  /// Uniform integer in [0, n), unbiased (Lemire 2019). n must be > 0.
  uint64_t uniform_int(uint64_t n);
  /// Standard normal deviate (Box-Muller, polar-free form from two uniforms).
  double normal();
  /// Standard Gumbel deviate: -log(-log(U)).
  double gumbel();

 private:
  uint64_t s_[4];
};

}  // namespace nf
