#pragma once
/// random(seed): every choice is uniform over the enabled actions, drawn from the
/// scheduler's own PRNG. A run is a pure function of (scenario, seed).
///
/// As an exploration's strategy (the table's "random"), run i has the seed
/// mix_seed(exploration seed, i) (SampledRuns), for i < --runs.

#include <cstdint>
#include <memory>
#include <optional>

#include "scheduler/prng.h"
#include "scheduler/strategy.h"
#include "scheduler/strategy_params.h"

namespace amaxcheck::sched {

class RandomStrategy final : public Strategy {
 public:
  /// One run with `seed`.
  explicit RandomStrategy(std::uint64_t seed) : seed_(seed), prng_(seed) {}
  /// The runs of a sampled exploration; begin_run picks the run's seed.
  explicit RandomStrategy(const SampledRuns& runs) : RandomStrategy(0) { runs_ = runs; }

  std::string name() const override { return "random"; }
  nlohmann::ordered_json parameters() const override;
  /// Inline, with pick_action: a random run draws once a step.
  std::size_t pick(ChoiceKind, std::span<const Action> options) override {
    if (options.size() == 1) return 0;  // no randomness spent on forced moves
    return static_cast<std::size_t>(prng_.below(options.size()));
  }
  std::size_t pick_action(std::span<const Action> enabled) override { return RandomStrategy::pick(ChoiceKind::next_action, enabled); }
  StepDetail step_needs() const override { return StepDetail{false, false, false, false}; }
  /// Run i is the run of its sampled seed (SampledRuns::run_seed).
  bool runs_again_alike() const override { return runs_.has_value(); }
  bool begin_run(std::uint64_t index) override;
  std::uint64_t seed() const override { return seed_; }

 private:
  std::uint64_t seed_;
  Prng prng_;
  std::optional<SampledRuns> runs_;
};

/// The strategy table's "random" (it has no parameters of its own: --seed and --runs are the
/// exploration's).
std::unique_ptr<Strategy> make_random_strategy(const StrategySetup& setup);

}  // namespace amaxcheck::sched
