#pragma once
/// random(seed): every choice is uniform over the enabled actions, drawn from the
/// scheduler's own PRNG. A run is a pure function of (scenario, seed).

#include <cstdint>

#include "scheduler/prng.h"
#include "scheduler/strategy.h"

namespace amaxcheck::sched {

class RandomStrategy final : public Strategy {
 public:
  explicit RandomStrategy(std::uint64_t seed) : seed_(seed), prng_(seed) {}

  std::string name() const override { return "random"; }
  nlohmann::ordered_json parameters() const override;
  std::size_t pick(ChoiceKind kind, std::span<const Action> options) override;
  StepDetail step_needs() const override { return StepDetail{false, false, false}; }

 private:
  std::uint64_t seed_;
  Prng prng_;
};

}  // namespace amaxcheck::sched
