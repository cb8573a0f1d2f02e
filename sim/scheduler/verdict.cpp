#include "scheduler/verdict.h"

namespace amaxcheck::sched {

const char* to_string(VerdictKind kind) { return enum_name(kind); }

std::vector<std::string> CutShort::causes() const {
  std::vector<std::string> out;
  if (step_limited_runs > 0) out.emplace_back("step_cap");
  if (schedule_cap) out.emplace_back("schedule_cap");
  if (bound_skipped > 0) out.emplace_back("preemption_bound");
  if (time_budget) out.emplace_back("time_budget");
  return out;
}

VerdictKind decide_verdict(Coverage coverage, std::size_t hazards, const CutShort& cut, bool completed) {
  if (hazards > 0) return VerdictKind::hazard;
  if (cut.any()) return VerdictKind::inconclusive;
  if (coverage == Coverage::exhaustive) return completed ? VerdictKind::proven_clean : VerdictKind::inconclusive;
  return VerdictKind::no_hazard_found;
}

}  // namespace amaxcheck::sched
