#pragma once
/// A content hash of a Scenario, so a trace can say which scenario it ran and a replay can
/// refuse a different one.
///
/// FNV-1a (64 bit) over every field of the model in declaration order, with strings
/// length-prefixed and floats hashed by their bit patterns. The result reads
/// "fnv1a64:0123456789abcdef". It changes whenever the model does; traces embed the scenario
/// itself as well, so an old trace stays replayable by rehashing its embedded scenario.

#include <string>

#include "model/scenario.h"

namespace amaxcheck::sched {

std::string scenario_hash(const Scenario& scenario);

}  // namespace amaxcheck::sched
