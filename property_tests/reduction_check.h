#pragma once
/// The differential check of the exhaustive search's reductions: on a small generated scenario,
/// the reduced search (Source-DPOR, sleep sets, exact dependence) must reach the same verdict
/// as the plain search that tries every interleaving: both complete, the same set of hazards
/// (Hazard::key(): kind and participant ops) and the same set of end states (the final value of
/// every buffer range written, and whether the run finished or got stuck).

#include <rapidcheck.h>

#include <cstdint>
#include <string>

#include "model/scenario.h"
#include "scheduler/exhaustive_strategy.h"

namespace amaxcheck::props {

/// Scenarios for the check: 1-3 ranks, 1-2 threads each, fills and copies on two streams
/// sharing two buffers, an event's records and waits, stream / event / device synchronization,
/// a host flag, all-reduces on two communicators, send / recv (sometimes grouped), serialized or concurrent kernels: clean and
/// hazardous ones. At most `max_total_ops` ops in all, so that the plain search stays small.
rc::Gen<Scenario> scenario_for_reduction_check(int max_total_ops);

/// The most ops a scenario of the check has, and the most schedules its naive search may take:
/// small in the default suite, larger in the long suite (AMAXCHECK_LONG set).
int reduction_check_size();
std::uint64_t reduction_check_naive_cap();

/// The naive search of one scenario against a reduced one.
struct ReductionComparison {
  bool naive_complete = false;  ///< false: the naive search hit its cap, and nothing was compared
  std::size_t naive_hazards = 0;
  std::size_t naive_end_states = 0;
  /// How the reduced search falls short of the naive one (it did not complete, or found other
  /// hazards or end states, or took more schedules); empty when it agrees.
  std::string disagreement;
};
/// Searches `scenario` naively (at most `naive_cap` schedules) and under `reduced`, and compares.
ReductionComparison compare_with_naive_search(const Scenario& scenario, const sched::ExhaustiveOptions& reduced,
                                              std::uint64_t naive_cap);

/// Generates a scenario and asserts that the search under `reduced` agrees with the naive one.
/// Scenarios whose naive search exceeds the cap are discarded.
void check_reduction_matches_naive_search(const sched::ExhaustiveOptions& reduced = {});

}  // namespace amaxcheck::props
