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

  uint64_t next_u64() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  /// Uniform double in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }
  /// Uniform integer in [0, n), unbiased (Lemire 2019). n must be > 0.
  /// (Inline: it is the inner loop of every bootstrap.)
  uint64_t uniform_int(uint64_t n) {
    __extension__ typedef unsigned __int128 u128;  // GCC/Clang extension
    u128 m = static_cast<u128>(next_u64()) * n;
    uint64_t l = static_cast<uint64_t>(m);
    if (l < n) {
      const uint64_t t = (0 - n) % n;
      while (l < t) {
        m = static_cast<u128>(next_u64()) * n;
        l = static_cast<uint64_t>(m);
      }
    }
    return static_cast<uint64_t>(m >> 64);
  }
  /// Standard normal deviate (Box-Muller, polar-free form from two uniforms).
  double normal();
  /// Standard Gumbel deviate: -log(-log(U)).
  double gumbel();

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

}  // namespace nf
