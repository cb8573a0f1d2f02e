#pragma once
/// Shrinking: reduce a failing run to a smaller one that still shows the *same* hazard, the
/// same bug rather than the same kind of bug (see shrink_identity.h for what "same" holds).
///
/// Each candidate is run with a lenient replay of the current choice sequence (a choice out of
/// range, or past the end, falls back to the first enabled action), and kept when it shows a
/// hazard with the target's identity, mapped back through the candidate's Lineage, and no
/// hazard of a kind the original run did not show. Until nothing changes:
/// 1. drop the replica checks (all, then one by one) the target is not about;
/// 2. drop ranks (last first);
/// 3. drop whole origin groups ("iter N", "module N") on every rank at once;
/// 4. delta-debug (ddmin, Zeller & Hildebrandt 2002) the list of ops;
/// 5. delta-debug the choice sequence.
/// The result's run records the choices it actually made, so its trace replays strictly, and
/// its lineage maps every rank, op and check of the shrunk scenario back to the original.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "scheduler/run.h"
#include "shrink/scenario_reduce.h"
#include "shrink/shrink_identity.h"

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
  Lineage lineage;          ///< where the shrunk scenario's ranks, ops and checks came from
  RunResult run;            ///< the shrunk run, steps recorded
  HazardIdentity identity;  ///< the target's, in the original's terms, kept by the shrunk run
  Hazard original;          ///< the target hazard as the original run reported it
  Hazard hazard;            ///< the same bug as the shrunk run reports it
  ShrinkSize before;
  ShrinkSize after;
  std::uint64_t tests = 0;  ///< candidate runs tried
  bool budget_exhausted = false;
};

/// Shrinks the run of `scenario` that followed `choices`, keeping the bug of its hazard
/// `target` (an index into that run's hazards). InputError when the run has no such hazard.
ShrinkResult shrink(const Scenario& scenario, const std::vector<Choice>& choices, std::size_t target,
                    const ShrinkOptions& options = {});

/// The same, keeping the first hazard of kind `target`.
ShrinkResult shrink(const Scenario& scenario, const std::vector<Choice>& choices, HazardKind target,
                    const ShrinkOptions& options = {});

/// Lines mapping the shrunk scenario back to the original, for reports: every rank, every op
/// (with its origin), every replica check; buffers, streams, threads and events keep their
/// names and indices on the mapped rank.
std::vector<std::string> describe_lineage(const Scenario& shrunk, const Lineage& lineage, const Scenario& original);

/// The lineage as JSON, for the shrunk trace's header ("mapping", see traces/FORMAT.md).
nlohmann::ordered_json lineage_json(const Scenario& shrunk, const Lineage& lineage);

}  // namespace amaxcheck::sched
