#include "scheduler/prng.h"

#include "util/check.h"

namespace amaxcheck::sched {
namespace {
// __extension__ keeps -Wpedantic quiet about the (GCC/Clang) 128-bit integer type.
__extension__ using u128 = unsigned __int128;

std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
}  // namespace

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

std::uint64_t Prng::next() {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

std::uint64_t Prng::below(std::uint64_t n) {
  AMAX_CHECK(n > 0, "below(0) has no valid result");
  // Lemire, "Fast Random Integer Generation in an Interval" (2019): multiply-shift with a
  // rejection step on the low word, so every value in [0, n) is equally likely.
  u128 m = static_cast<u128>(next()) * n;
  auto low = static_cast<std::uint64_t>(m);
  if (low < n) {
    const std::uint64_t threshold = (0 - n) % n;
    while (low < threshold) {
      m = static_cast<u128>(next()) * n;
      low = static_cast<std::uint64_t>(m);
    }
  }
  return static_cast<std::uint64_t>(m >> 64);
}

bool Prng::chance(std::uint64_t num, std::uint64_t den) {
  AMAX_CHECK(den > 0 && num <= den, "chance(num, den) needs 0 <= num <= den and den > 0");
  return below(den) < num;
}

Prng Prng::split() { return Prng(next() ^ 0x6a09e667f3bcc909ULL); }

}  // namespace amaxcheck::sched
