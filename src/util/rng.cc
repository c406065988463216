#include "util/rng.h"

#include <cmath>
#include <numbers>

#include "util/hash.h"

namespace nf {

namespace {
__extension__ typedef unsigned __int128 u128;  // GCC/Clang extension, silenced for -Wpedantic
inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
}  // namespace

Rng::Rng(uint64_t seed) {
  uint64_t x = seed;
  for (auto& s : s_) {
    x += 0x9e3779b97f4a7c15ULL;
    s = mix64(x);
  }
}

Rng Rng::stream(uint64_t seed, std::initializer_list<uint64_t> ids) {
  uint64_t h = mix64(seed);
  for (uint64_t id : ids) h = hash_combine(h, id);
  return Rng(h);
}

uint64_t Rng::next_u64() {
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

double Rng::uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

uint64_t Rng::uniform_int(uint64_t n) {
  // Lemire's nearly-divisionless method.
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

double Rng::normal() {
  double u1 = uniform();
  while (u1 <= 0.0) u1 = uniform();
  const double u2 = uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

double Rng::gumbel() {
  double u = uniform();
  while (u <= 0.0) u = uniform();
  return -std::log(-std::log(u));
}

}  // namespace nf
