#include "scheduler/random_strategy.h"

namespace amaxcheck::sched {

nlohmann::ordered_json RandomStrategy::parameters() const {
  nlohmann::ordered_json params;
  params["seed"] = seed_;
  return params;
}

bool RandomStrategy::begin_run(std::uint64_t index) {
  if (!runs_) return index == 0;
  const std::optional<std::uint64_t> seed = runs_->run_seed(index);
  if (!seed) return false;
  seed_ = *seed;
  prng_ = Prng(seed_);
  return true;
}

std::unique_ptr<Strategy> make_random_strategy(const StrategySetup& setup) {
  return std::make_unique<RandomStrategy>(setup.sampled());
}

}  // namespace amaxcheck::sched
