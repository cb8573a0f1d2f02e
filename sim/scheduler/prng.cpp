#include "scheduler/prng.h"

#include "util/check.h"

namespace amaxcheck::sched {

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::uint64_t mix_seed(std::uint64_t seed, std::uint64_t stream) {
  std::uint64_t state = seed;
  std::uint64_t a = splitmix64(state);
  state = a ^ (stream * 0xd1b54a32d192ed03ULL);
  return splitmix64(state);
}

Prng::Prng(std::uint64_t seed) {
  std::uint64_t state = seed;
  for (auto& word : s_) word = splitmix64(state);
}

void Prng::below_zero() { AMAX_CHECK(false, "below(0) has no valid result"); }

bool Prng::chance(std::uint64_t num, std::uint64_t den) {
  AMAX_CHECK(den > 0 && num <= den, "chance(num, den) needs 0 <= num <= den and den > 0");
  return below(den) < num;
}

Prng Prng::split() { return Prng(next() ^ 0x6a09e667f3bcc909ULL); }

}  // namespace amaxcheck::sched
