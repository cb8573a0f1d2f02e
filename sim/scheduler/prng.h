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

  /// Next raw 64-bit output.
  std::uint64_t next();
  /// Uniform integer in [0, n); n must be > 0.
  std::uint64_t below(std::uint64_t n);
  /// True with probability num/den (0 <= num <= den, den > 0).
  bool chance(std::uint64_t num, std::uint64_t den);
  /// An independent generator; advances this one by one step.
  Prng split();

 private:
  std::array<std::uint64_t, 4> s_{};
};

}  // namespace amaxcheck::sched
