#pragma once
/// Explorations: many runs of one scenario under one strategy (strategy_table.h lists them),
/// all driven by one loop through the strategy's per-run hooks (strategy.h):
/// `begin_run(i)` says whether run i exists, `end_run` sees each run, `report` adds what the
/// strategy knows (exhaustive: its statistics, completeness, schedule cap and bound; timed: the
/// run's TimedRun) to the result.
///
/// - A strategy whose runs are independent (random, pct: run i uses the seed mix_seed(seed, i),
///   so every run is reproducible on its own, `run_seed`) spreads its runs over `jobs` workers,
///   each with its own instance, without changing any result: runs are merged in index order
///   and the first failure reported is the one with the lowest index.
/// - Any other (exhaustive: one depth-first search, ending when complete or capped; timed: one
///   deterministic discrete-event run) runs on one instance, in order.
/// A run the strategy ended early (RunOutcome::stopped: covered by another run) does not count:
/// a run's index in the result is the number of counted runs before it. An exploration stops at
/// the first run with a hazard, or continues, as asked. The first failing run is re-run (its
/// choices replayed) with steps recorded, ready to be written as a trace.
///
/// Every exploration ends in a verdict (verdict.h). Runs get the step cap of RunOptions
/// (derived from the scenario unless given); a run that reaches it makes the exploration
/// inconclusive, as do the exhaustive search's schedule cap and a preemption bound that
/// skipped a branch. A time budget ends the exploration (and cuts its current run) when it
/// runs out, inconclusive; a run it cuts is dropped, and no run starts once it is out. An
/// exception in a worker (`jobs` > 1) reaches the caller as it would with one job: the one of
/// the lowest run index.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/exhaustive_strategy.h"
#include "scheduler/explore_clock.h"
#include "scheduler/run.h"
#include "scheduler/strategy.h"
#include "scheduler/strategy_params.h"
#include "scheduler/timed_strategy.h"
#include "scheduler/verdict.h"

namespace amaxcheck::sched {

struct ExploreOptions {
  std::string strategy = "random";  ///< the name of a strategy_table() entry
  StrategyArgs args;                ///< its parameters' values (the entry lists them; unset: default)
  std::uint64_t seed = 0;
  std::uint64_t runs = 1000;     ///< sampled strategies: number of runs
  bool stop_at_first = true;     ///< stop at the first run with a hazard
  unsigned jobs = 1;             ///< strategies with independent runs: worker threads
  RunOptions run;                ///< per run (record_steps and deadline are managed by explore)
  std::optional<double> time_budget_s;  ///< wall-clock budget of the whole exploration
  ProgressFn progress;           ///< progress reports (ExploreClock), none when empty
  /// Called once a hazard is found, before its run is re-run with its steps recorded (the only
  /// run an exploration keeps whole); may throw to refuse the recording (a check's memory limit,
  /// cli/memory_limit.h). None when empty.
  std::function<void()> before_recording;
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
  std::uint64_t seed = 0;             ///< the run's own seed (Strategy::seed)
  std::string strategy;               ///< Strategy::name() of the run
  nlohmann::ordered_json parameters;  ///< Strategy::parameters() of the run
  RunResult run;                      ///< re-run with steps recorded
};

struct ExploreResult {
  std::uint64_t runs = 0;                 ///< runs that count (see explore())
  std::uint64_t steps = 0;                ///< steps over those runs
  std::vector<FoundHazard> hazards;       ///< distinct by Hazard::key(), in order of first run
  std::optional<FailingRun> first_failure;
  /// Without stop_at_first (--keep-going), the hazards of later runs are reported too, and each
  /// needs a trace that shows it: the first run of every hazard that no earlier failing run
  /// showed, in run order, one per run. Without steps (runs can be many): record_steps makes
  /// one again with them.
  std::vector<FailingRun> later_failures;
  // What the strategy reported (Strategy::report):
  std::optional<ExhaustiveStats> exhaustive;  ///< exhaustive only
  std::optional<ExhaustiveOptions> exhaustive_options;  ///< exhaustive only: what a proof covers
  std::optional<TimedRun> timing;             ///< timed only
  /// Whether the exploration covered every schedule (an exhaustive search that completed and
  /// was not stopped at a hazard).
  bool coverage_complete = false;
  std::uint64_t pruned = 0;  ///< exhaustive: sleep-blocked runs + branches skipped by the bound
  Coverage coverage = Coverage::sampled;
  CutShort cut_short;        ///< what cut runs or the search short
  std::size_t step_cap = 0;  ///< the step cap every run had
  VerdictKind verdict = VerdictKind::no_hazard_found;
};

/// The seed of run `index` of an exploration with `seed`.
std::uint64_t run_seed(std::uint64_t seed, std::uint64_t index);

/// A fresh instance of the strategy of `options` (its table entry's factory, given the
/// parameters' values); call begin_run(i) before run i.
std::unique_ptr<Strategy> make_strategy(const Scenario& scenario, const ExploreOptions& options);

/// Explores `scenario`. With stop_at_first, `runs` counts the runs up to and including the
/// first failing one, whatever `jobs` is.
ExploreResult explore(const Scenario& scenario, const ExploreOptions& options);

/// Makes a failing run of explore(scenario, options) again with its steps recorded, as explore
/// does its first failing run (ExploreResult::later_failures). The memory check
/// `options.before_recording` runs first.
void record_steps(const Scenario& scenario, const ExploreOptions& options, FailingRun& failing);

}  // namespace amaxcheck::sched
