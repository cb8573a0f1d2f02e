#include "scheduler/random_strategy.h"

namespace amaxcheck::sched {

nlohmann::ordered_json RandomStrategy::parameters() const {
  nlohmann::ordered_json params;
  params["seed"] = seed_;
  return params;
}

std::size_t RandomStrategy::pick(ChoiceKind, std::span<const Action> options) {
  if (options.size() == 1) return 0;  // no randomness spent on forced moves
  return static_cast<std::size_t>(prng_.below(options.size()));
}

}  // namespace amaxcheck::sched
