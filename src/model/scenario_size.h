#pragma once
/// ScenarioSize: the counts that decide how much memory checking a scenario takes (the
/// memory estimate in sim/scheduler/memory_estimate.h turns them into bytes). Measured exactly
/// from a Scenario, or estimated from protocol knobs before the scenario is built
/// (protocols/protocol_size.h), so an oversized protocol point is refused before it is built.

#include <cstdint>

#include "model/scenario.h"

namespace amaxcheck {

struct ScenarioSize {
  std::uint64_t ranks = 0;
  std::uint64_t actors = 0;           ///< host threads plus streams, over every rank (vector clock width)
  std::uint64_t ops = 0;
  std::uint64_t op_values = 0;        ///< floats the ops carry (fill values)
  std::uint64_t ranges = 0;           ///< read and write ranges over every op
  std::uint64_t buffer_elements = 0;  ///< over every rank's buffers
  std::uint64_t collectives = 0;      ///< collective ops over every rank
  std::uint64_t written_elements = 0; ///< elements the ops write, over every op (a recorded run keeps them)
};

ScenarioSize scenario_size(const Scenario& scenario);

}  // namespace amaxcheck
