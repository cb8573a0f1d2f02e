#pragma once
/// The size of the scenario a protocol point generates, estimated from its knobs alone, so that
/// a point too large to check is refused before it is built (building one can itself take
/// gigabytes and minutes). An estimate that follows the generator's shapes (buffers per
/// module and direction, a fill per quantized tensor), not an exact count: the exact one comes
/// from scenario_size once the scenario exists.

#include <cstdint>

#include "model/scenario_size.h"
#include "protocols/protocol.h"

namespace amaxcheck {

/// About how many ops the generator emits (validate_knobs caps it).
std::uint64_t estimated_ops(const ProtocolKnobs& knobs);

/// scenario_size of build_protocol(knobs), estimated without building it.
ScenarioSize protocol_size(const ProtocolKnobs& knobs);

}  // namespace amaxcheck
