#pragma once
/// The scheduler's own pseudo-random number generator.
///
/// Schedules must be a pure function of (scenario, strategy, seed) on every platform, so
/// nothing that decides a schedule may use std::*_distribution (their outputs differ between
/// standard libraries). This PRNG is small and fully specified:
/// - the state is xoshiro256** (Blackman & Vigna), seeded through SplitMix64;
/// - `split()` derives an independent child generator (as rapidcheck's Random::split and
///   TigerBeetle's PRNG do), so one run's randomness never shifts another's;
/// - `below(n)` is Lemire's unbiased bounded integer method;
/// - probabilities are integer ratios (`chance(num, den)`), never floating point.

#include <array>
#include <cstdint>

namespace amaxcheck::sched {

/// SplitMix64 step: advances `state` and returns a well-mixed 64-bit value.
std::uint64_t splitmix64(std::uint64_t& state);

/// A stable 64-bit mix of two values, e.g. to derive run i's seed from (seed, i).
std::uint64_t mix_seed(std::uint64_t seed, std::uint64_t stream);

class Prng {
 public:
  explicit Prng(std::uint64_t seed);

  /// Next raw 64-bit output. Inline, with below(): a random schedule draws once a step.
  std::uint64_t next() {
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
  /// Uniform integer in [0, n); n must be > 0.
  std::uint64_t below(std::uint64_t n) {
    if (n == 0) below_zero();
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
  /// True with probability num/den (0 <= num <= den, den > 0).
  bool chance(std::uint64_t num, std::uint64_t den);
  /// An independent generator; advances this one by one step.
  Prng split();

 private:
  // __extension__ keeps -Wpedantic quiet about the (GCC/Clang) 128-bit integer type.
  __extension__ using u128 = unsigned __int128;
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  /// below(0)'s internal error, out of line.
  [[noreturn]] static void below_zero();

  std::array<std::uint64_t, 4> s_{};
};

}  // namespace amaxcheck::sched
