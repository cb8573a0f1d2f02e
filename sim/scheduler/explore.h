#pragma once
/// Explorations: many runs of one scenario under one strategy (strategy_table.h lists them;
/// a strategy's Coverage picks the loop below).
///
/// - random and pct: run i uses the seed mix_seed(seed, i), so every run is reproducible on
///   its own (`run_seed`), and `--jobs N` spreads runs over threads without changing any
///   result: runs are merged in index order and the first failure reported is the one with
///   the lowest index.
/// - exhaustive: one depth-first search (single-threaded); `runs` does not apply, the search
///   ends when complete or capped.
/// - timed: one deterministic discrete-event run.
/// An exploration stops at the first run with a hazard, or continues, as asked. The first
/// failing run is re-run with steps recorded, ready to be written as a trace.
///
/// Every exploration ends in a verdict (verdict.h). Runs get the step cap of RunOptions
/// (derived from the scenario unless given); a run that reaches it makes the exploration
/// inconclusive, as do the exhaustive search's schedule cap and a preemption bound that
/// skipped a branch. A time budget ends the exploration (and cuts its current run) when it
/// runs out, inconclusive; a run it cuts is dropped. An exception in a worker (`jobs` > 1)
/// reaches the caller as it would with one job: the one of the lowest run index.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/cost_model.h"
#include "scheduler/exhaustive_strategy.h"
#include "scheduler/explore_clock.h"
#include "scheduler/run.h"
#include "scheduler/strategy.h"
#include "scheduler/timed_strategy.h"
#include "scheduler/verdict.h"

namespace amaxcheck::sched {

enum class StrategyKind : std::uint8_t { random, pct, exhaustive, timed };

const char* to_string(StrategyKind kind);
/// Parses "random", "pct", "exhaustive", "timed"; false for anything else.
bool parse_strategy_kind(const std::string& text, StrategyKind& out);
/// How a strategy covers the schedules: random and pct sample, exhaustive searches, timed
/// runs once.
Coverage coverage_of(StrategyKind kind);

struct ExploreOptions {
  StrategyKind strategy = StrategyKind::random;
  std::uint64_t seed = 0;
  std::uint64_t runs = 1000;     ///< random / pct: number of runs
  std::uint32_t pct_depth = 3;   ///< pct: bug depth d
  bool stop_at_first = true;     ///< stop at the first run with a hazard
  unsigned jobs = 1;             ///< random / pct: worker threads
  ExhaustiveOptions exhaustive;  ///< exhaustive: reduction, preemption bound, cap
  CostModel cost;                ///< timed: the cost model
  RunOptions run;                ///< per run (record_steps and deadline are managed by explore)
  std::optional<double> time_budget_s;  ///< wall-clock budget of the whole exploration
  ProgressFn progress;           ///< progress reports (ExploreClock), none when empty
};

/// A distinct hazard and the first run that showed it.
struct FoundHazard {
  Hazard hazard;
  std::uint64_t first_run = 0;
  std::uint64_t runs_seen = 0;  ///< how many runs showed it
};

/// A run that showed a hazard, with what it takes to reproduce it.
struct FailingRun {
  std::uint64_t index = 0;
  std::uint64_t seed = 0;             ///< the run's own seed (random / pct)
  std::string strategy;               ///< Strategy::name() of the run
  nlohmann::ordered_json parameters;  ///< Strategy::parameters() of the run
  RunResult run;                      ///< re-run with steps recorded
};

struct ExploreResult {
  std::uint64_t runs = 0;                 ///< runs that count (see explore())
  std::uint64_t steps = 0;                ///< steps over those runs
  std::vector<FoundHazard> hazards;       ///< distinct by Hazard::key(), in order of first run
  std::optional<FailingRun> first_failure;
  std::optional<ExhaustiveStats> exhaustive;  ///< exhaustive only
  std::optional<TimedRun> timing;             ///< timed only
  /// Whether the exploration covered every schedule (an exhaustive search that completed).
  bool coverage_complete = false;
  std::uint64_t pruned = 0;  ///< exhaustive: sleep-blocked runs + branches skipped by the bound
  Coverage coverage = Coverage::sampled;
  CutShort cut_short;        ///< what cut runs or the search short
  std::size_t step_cap = 0;  ///< the step cap every run had
  VerdictKind verdict = VerdictKind::no_hazard_found;
};

/// The seed of run `index` of an exploration with `seed`.
std::uint64_t run_seed(std::uint64_t seed, std::uint64_t index);

/// The strategy run `index` of an exploration uses (random, pct or timed).
std::unique_ptr<Strategy> make_run_strategy(const Scenario& scenario, const ExploreOptions& options,
                                            std::uint64_t index);

/// Explores `scenario`. With stop_at_first, `runs` counts the runs up to and including the
/// first failing one, whatever `jobs` is.
ExploreResult explore(const Scenario& scenario, const ExploreOptions& options);

}  // namespace amaxcheck::sched
