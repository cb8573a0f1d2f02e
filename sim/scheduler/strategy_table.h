#pragma once
/// Every strategy an exploration can run, in one table: its name (the --strategy value and the
/// traces' "strategy"), how it covers schedules (which decides the exploration loop and the
/// verdict it may reach), its one-line help, and the factory of a run's strategy.
///
/// to_string / parse_strategy_kind / coverage_of / make_run_strategy (explore.h) and the CLI's
/// --strategy option read it, so a strategy cannot be half-added: a new one is its own file,
/// a StrategyKind value and one line here.

#include <memory>
#include <span>
#include <string>

#include "scheduler/explore.h"

namespace amaxcheck::sched {

struct StrategyEntry {
  StrategyKind kind;
  const char* name;
  Coverage coverage;
  const char* help;
  /// The strategy of run `index` of an exploration; null for a strategy that is one search
  /// over every run (exhaustive), which explore() drives itself.
  std::unique_ptr<Strategy> (*make_run)(const Scenario& scenario, const ExploreOptions& options, std::uint64_t index);
};

/// The table, in --help order.
std::span<const StrategyEntry> strategy_table();
/// The entry of `kind` (every kind has one).
const StrategyEntry& strategy_entry(StrategyKind kind);
/// "random | pct | exhaustive | timed": the choices, for help and error messages.
std::string strategy_choices();

}  // namespace amaxcheck::sched
