#include "util/rng.h"

#include <cmath>
#include <numbers>

#include "util/hash.h"

namespace nf {


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
