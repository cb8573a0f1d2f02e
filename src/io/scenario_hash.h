#pragma once
/// A content hash of a Scenario, so a trace can say which scenario it ran and a replay can
/// refuse a different one.
///
/// FNV-1a (64 bit) over the scenario's canonical text: src/io's full scenario JSON (what a
/// trace embeds), without `source` (how to rebuild a scenario is not part of what runs),
/// printed compactly with sorted keys. So the hash covers exactly what the scenario format
/// writes, and adding a model field means teaching the writer and reader only. The result
/// reads "fnv1a64:0123456789abcdef".

#include <string>

#include "model/scenario.h"

namespace amaxcheck {

std::string scenario_hash(const Scenario& scenario);

}  // namespace amaxcheck
