#pragma once
/// What an exploration may claim, and what cut it short.
///
/// A truncated search never reports success (SPIN's "search not completed"). Every
/// exploration ends in exactly one verdict:
/// - hazard: some run showed one (this wins over everything else: a hazard found is real even
///   when another run was cut short);
/// - proven_clean: an exhaustive search that covered every schedule of the scenario as given,
///   up to equivalence, with no bound that skipped a branch and no run cut short;
/// - no_hazard_found: sampled runs (random, pct) or the one timed run, none cut short: a
///   sample, not a proof;
/// - inconclusive: a step cap, the schedule cap, the preemption bound or the time budget cut
///   a run or the search short (CutShort says which, and by how much).

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "util/enum_names.h"

namespace amaxcheck::sched {

enum class VerdictKind : std::uint8_t { hazard, proven_clean, no_hazard_found, inconclusive };

}  // namespace amaxcheck::sched

namespace amaxcheck {
/// The --json words.
template <>
struct EnumNames<sched::VerdictKind> {
  static constexpr std::array table{
      EnumName<sched::VerdictKind>{sched::VerdictKind::hazard, "hazard"},
      EnumName<sched::VerdictKind>{sched::VerdictKind::proven_clean, "proven_clean"},
      EnumName<sched::VerdictKind>{sched::VerdictKind::no_hazard_found, "no_hazard_found"},
      EnumName<sched::VerdictKind>{sched::VerdictKind::inconclusive, "inconclusive"}};
};
}  // namespace amaxcheck

namespace amaxcheck::sched {

/// "hazard", "proven_clean", "no_hazard_found", "inconclusive" (the --json words).
const char* to_string(VerdictKind kind);

/// How a strategy covers the schedules of a scenario.
enum class Coverage : std::uint8_t {
  sampled,     ///< independent seeded runs (random, pct)
  exhaustive,  ///< a search that can cover every schedule up to equivalence
  timed,       ///< one deterministic run under a cost model
};

/// What cut an exploration, or some of its runs, short. Empty when nothing did.
struct CutShort {
  std::uint64_t step_limited_runs = 0;  ///< runs that reached their step cap
  std::size_t step_cap = 0;             ///< the cap those runs ran under
  bool schedule_cap = false;            ///< exhaustive: max_schedules reached
  std::uint64_t schedule_cap_value = 0; ///< ... its value
  std::uint64_t bound_skipped = 0;      ///< exhaustive: branches the preemption bound skipped
  std::uint32_t preemption_bound = 0;   ///< ... the bound
  bool time_budget = false;             ///< the time budget ran out
  double time_budget_s = 0;             ///< ... its value

  bool any() const { return step_limited_runs > 0 || schedule_cap || bound_skipped > 0 || time_budget; }
  /// The names of what cut it short, in a fixed order: "step_cap", "schedule_cap",
  /// "preemption_bound", "time_budget".
  std::vector<std::string> causes() const;
};

/// The verdict of an exploration under a strategy of `coverage` that found `hazards` distinct
/// hazards, was cut short by `cut`, and (exhaustive only) whose search `completed`.
VerdictKind decide_verdict(Coverage coverage, std::size_t hazards, const CutShort& cut, bool completed);

}  // namespace amaxcheck::sched
