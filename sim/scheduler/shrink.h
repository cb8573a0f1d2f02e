#pragma once
/// Shrinking: reduce a failing run to a smaller one that still shows the same hazard kind.
///
/// Each candidate is run with a lenient replay of the current choice sequence (a choice out of
/// range, or past the end, falls back to the first enabled action), and kept when the target
/// hazard kind still appears. Until nothing changes:
/// 1. drop ranks (last first);
/// 2. drop whole origin groups ("iter N", "module N") on every rank at once;
/// 3. delta-debug (ddmin, Zeller & Hildebrandt 2002) the list of ops;
/// 4. delta-debug the choice sequence.
/// The result's run records the choices it actually made, so its trace replays strictly.

#include <cstdint>
#include <optional>
#include <vector>

#include "scheduler/run.h"

namespace amaxcheck::sched {

struct ShrinkOptions {
  std::uint64_t max_tests = 20000;  ///< budget of candidate runs
  RunOptions run;                   ///< engine options of the original run
};

struct ShrinkSize {
  std::size_t ranks = 0;
  std::size_t ops = 0;
  std::size_t steps = 0;
  std::size_t deviations = 0;  ///< choices that are not the first enabled action
};

struct ShrinkResult {
  Scenario scenario;
  RunResult run;  ///< the shrunk run, steps recorded
  ShrinkSize before;
  ShrinkSize after;
  std::uint64_t tests = 0;  ///< candidate runs tried
  bool budget_exhausted = false;
};

/// Shrinks the run of `scenario` that followed `choices` and showed `target`.
/// InputError when that run does not show `target`.
ShrinkResult shrink(const Scenario& scenario, const std::vector<Choice>& choices, HazardKind target,
                    const ShrinkOptions& options = {});

}  // namespace amaxcheck::sched
