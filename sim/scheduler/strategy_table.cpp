#include "scheduler/strategy_table.h"

#include "scheduler/pct_strategy.h"
#include "scheduler/random_strategy.h"
#include "scheduler/timed_strategy.h"
#include "util/check.h"

namespace amaxcheck::sched {
namespace {

std::unique_ptr<Strategy> make_random(const Scenario&, const ExploreOptions& options, std::uint64_t index) {
  return std::make_unique<RandomStrategy>(run_seed(options.seed, index));
}

std::unique_ptr<Strategy> make_pct(const Scenario& scenario, const ExploreOptions& options, std::uint64_t index) {
  return std::make_unique<PctStrategy>(PctOptions{run_seed(options.seed, index), options.pct_depth, expected_steps(scenario)});
}

std::unique_ptr<Strategy> make_timed(const Scenario& scenario, const ExploreOptions& options, std::uint64_t) {
  return std::make_unique<TimedStrategy>(scenario, options.cost);
}

constexpr StrategyEntry table[] = {
    {StrategyKind::random, "random", Coverage::sampled, "uniformly random schedules, --runs of them", make_random},
    {StrategyKind::pct, "pct", Coverage::sampled, "PCT: random priorities with --depth - 1 change points", make_pct},
    {StrategyKind::exhaustive, "exhaustive", Coverage::exhaustive,
     "every schedule up to equivalence (DPOR); proves when it completes", nullptr},
    {StrategyKind::timed, "timed", Coverage::timed, "one discrete-event run under the cost model", make_timed},
};

}  // namespace

std::span<const StrategyEntry> strategy_table() { return table; }

const StrategyEntry& strategy_entry(StrategyKind kind) {
  for (const StrategyEntry& entry : table) {
    if (entry.kind == kind) return entry;
  }
  AMAX_CHECK(false, "a strategy kind without a strategy_table entry");
  return table[0];
}

std::string strategy_choices() {
  std::string out;
  for (const StrategyEntry& entry : table) out += (out.empty() ? "" : " | ") + std::string(entry.name);
  return out;
}

}  // namespace amaxcheck::sched
