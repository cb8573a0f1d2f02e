#pragma once
/// How much memory checking a scenario takes, estimated before anything runs, so that a
/// scenario too large for the machine is refused as bad input (exit 2, with the estimate and
/// the option that raises the limit) instead of being killed by the kernel, or exiting 3 on
/// std::bad_alloc, minutes later.
///
/// The estimate adds what grows with the scenario: the scenario itself (ops, their ranges and
/// fill values), each engine's buffer values and vector clocks, the race detector's access
/// history, and the steps a recorded run keeps (a trace, an export, a shrink). Its per-unit
/// costs were measured (peak resident memory of `check` and `replay` over protocol points and
/// hand-written scenarios; see memory_estimate.cpp) and err on the high side.

#include <cstdint>
#include <string>

#include "model/scenario_size.h"

namespace amaxcheck::sched {

struct MemoryEstimate {
  std::uint64_t scenario_bytes = 0;  ///< the Scenario (and the checker's copies of it)
  std::uint64_t engine_bytes = 0;    ///< per engine: buffer values, clocks, detector state
  std::uint64_t engines = 1;         ///< engines alive at once (--jobs)
  std::uint64_t steps_bytes = 0;     ///< one recorded run's steps, the values they wrote, its trace text

  std::uint64_t total() const { return scenario_bytes + engines * engine_bytes + steps_bytes; }
  /// "about 35.2 GiB (scenario 5.1 GiB, 1 engine x 30.0 GiB, recorded steps 120 MiB)".
  std::string describe() const;
};

/// The estimate for a scenario of `size` whose finished run takes `steps` steps, run by `jobs`
/// engines at once.
MemoryEstimate estimate_memory(const ScenarioSize& size, std::uint64_t steps, unsigned jobs = 1);

/// "1.5 GiB", "300 MiB", "12 KiB".
std::string format_bytes(std::uint64_t bytes);

}  // namespace amaxcheck::sched
