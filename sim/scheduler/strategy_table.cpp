#include "scheduler/strategy_table.h"

#include <set>
#include <vector>

#include "scheduler/exhaustive_strategy.h"
#include "scheduler/pct_strategy.h"
#include "scheduler/random_strategy.h"
#include "scheduler/timed_strategy.h"
#include "util/check.h"

namespace amaxcheck::sched {
namespace {

std::vector<StrategyEntry> make_table() {
  return {
      {"random", Coverage::sampled, RunOrder::independent, "uniformly random schedules, --runs of them", {},
       make_random_strategy},
      {"pct", Coverage::sampled, RunOrder::independent, "PCT: random priorities with --depth - 1 change points",
       pct_params(), make_pct_strategy},
      {"exhaustive", Coverage::exhaustive, RunOrder::sequential,
       "every schedule up to equivalence (DPOR); proves when it completes", exhaustive_params(),
       make_exhaustive_search},
      {"timed", Coverage::timed, RunOrder::sequential, "one discrete-event run under the cost model", timed_params(),
       make_timed_strategy},
  };
}

void check_table(const std::vector<StrategyEntry>& table) {
  std::set<std::string_view> names;
  for (const StrategyEntry& entry : table) {
    AMAX_CHECK(names.insert(entry.name).second, fmt::format("two strategies are named '{}'", entry.name));
    for (const StrategyParam& param : entry.params) {
      AMAX_CHECK(names.insert(param.name).second,
                 fmt::format("strategy parameter '{}' is declared twice (names are unique across the table)", param.name));
      check_param_value(param, param.default_value);
    }
  }
}

}  // namespace

std::span<const StrategyEntry> strategy_table() {
  static const std::vector<StrategyEntry> table = [] {
    std::vector<StrategyEntry> t = make_table();
    check_table(t);
    return t;
  }();
  return table;
}

const StrategyEntry* find_strategy(std::string_view name) {
  for (const StrategyEntry& entry : strategy_table()) {
    if (name == entry.name) return &entry;
  }
  return nullptr;
}

const StrategyEntry& strategy_entry(std::string_view name) {
  const StrategyEntry* entry = find_strategy(name);
  if (entry == nullptr) throw InputError(fmt::format("--strategy: expected {}, got \"{}\"", strategy_choices(), name));
  return *entry;
}

std::string strategy_choices() {
  std::string out;
  for (const StrategyEntry& entry : strategy_table()) out += (out.empty() ? "" : " | ") + std::string(entry.name);
  return out;
}

void check_strategy_args(const StrategyEntry& chosen, const StrategyArgs& args) {
  for (const auto& [name, value] : args.given()) {
    const StrategyParam* found = nullptr;
    const StrategyEntry* owner = nullptr;
    for (const StrategyEntry& entry : strategy_table()) {
      for (const StrategyParam& param : entry.params) {
        if (name == param.name) {
          found = &param;
          owner = &entry;
        }
      }
    }
    if (found == nullptr) throw InputError(fmt::format("--{}: no strategy has this parameter", name));
    if (owner != &chosen) {
      throw InputError(fmt::format("--{}: a parameter of --strategy {}, not of --strategy {}, which would ignore it", name,
                                   owner->name, chosen.name));
    }
    check_param_value(*found, value);
  }
}

}  // namespace amaxcheck::sched
