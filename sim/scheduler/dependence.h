#pragma once
/// The dependence relation partial-order reduction uses, computed from what steps touched.
///
/// Two steps are dependent when the same actor performed them (program order, stream order)
/// or when they touched one object and at least one of them wrote it. Swapping two adjacent
/// independent steps cannot change the outcome of a run, so schedules that differ only in
/// such swaps form one Mazurkiewicz trace and need to be explored once.

#include <cstdint>
#include <span>

#include "engine/action.h"

namespace amaxcheck::sched {

/// True when some object is touched by both and written by at least one.
bool touches_conflict(std::span<const Touch> a, std::span<const Touch> b);

/// The dependence of two steps, given their actors and touches.
inline bool dependent(std::uint64_t actor_a, std::span<const Touch> a, std::uint64_t actor_b,
                      std::span<const Touch> b) {
  return actor_a == actor_b || touches_conflict(a, b);
}

}  // namespace amaxcheck::sched
