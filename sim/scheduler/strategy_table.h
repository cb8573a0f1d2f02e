#pragma once
/// Every strategy an exploration can run, in one table. An entry is the strategy's identity:
/// - its name (the --strategy value, ExploreOptions::strategy and the traces' "strategy");
/// - how it covers schedules (the verdict it may reach, verdict.h);
/// - whether its runs are independent (--jobs spreads them over workers, one instance each);
/// - its one-line help;
/// - its parameters (strategy_params.h), which the CLI turns into `--<name>` options;
/// - its factory, which builds an instance from those parameters' values.
///
/// explore() (one loop for all), check_determinism, the GPU backend's schedule and the CLI's
/// --strategy option all read it, so a strategy cannot be half-added: a new one is its own
/// file (the Strategy with its hooks, its parameter list and factory) and one line here.

#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "scheduler/strategy.h"
#include "scheduler/strategy_params.h"
#include "scheduler/verdict.h"

namespace amaxcheck::sched {

/// How the runs of an exploration relate.
enum class RunOrder : std::uint8_t {
  independent,  ///< any run can be done on its own, in any order (seeded samples)
  sequential,   ///< each run depends on the ones before (a search), or there is one run
};

using StrategyFactory = std::unique_ptr<Strategy> (*)(const StrategySetup& setup);

struct StrategyEntry {
  const char* name;
  Coverage coverage;
  RunOrder runs;
  const char* help;
  std::span<const StrategyParam> params;
  StrategyFactory make;
};

/// The table, in --help order. Checked on first use: parameter names are unique and every
/// default is a value of its parameter's type.
std::span<const StrategyEntry> strategy_table();
/// The entry named `name`, or nullptr.
const StrategyEntry* find_strategy(std::string_view name);
/// The entry named `name`; InputError `--strategy: expected random | pct | ..., got "x"` when
/// there is none.
const StrategyEntry& strategy_entry(std::string_view name);
/// "random | pct | exhaustive | timed": the choices, for help and error messages.
std::string strategy_choices();
/// Checks every value in `args`: it names a parameter of `chosen`, the strategy that runs, and
/// is a value of its type (InputError "--<name>: expected ..., got ..." otherwise). Another
/// strategy's parameter is refused too, naming its strategy: it would be silently ignored
/// (`--strategy random --depth 3` is no PCT search).
void check_strategy_args(const StrategyEntry& chosen, const StrategyArgs& args);

}  // namespace amaxcheck::sched
