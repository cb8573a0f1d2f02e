#pragma once
/// Structural validation of a Scenario, with the field paths of the scenario file format.
///
/// Everything the engine relies on without checking: indices in range (streams, events,
/// buffers, flags, comms, ranks), ranges inside their buffers, a rank issuing a collective
/// only on a communicator it belongs to, comm members distinct, and the arity and sizes each
/// op kind needs (an all_gather writes members x its input, a scale_update's history is
/// history_len x tensors, ...). Semantic hazards (races, mismatches, hangs) are *not* errors
/// here: finding them is the checker's job.

#include <string>
#include <vector>

#include "model/scenario.h"

namespace amaxcheck {

/// Throws InputError "<where>: <path>: <what was expected>" at the first problem. A rank's
/// fields are named under `rank_paths[r]` when given (a rank expanded from a template:
/// io/scenario_template.h), else `ranks[r]`.
void validate_scenario(const Scenario& scenario, const std::string& where,
                       const std::vector<std::string>& rank_paths = {});

}  // namespace amaxcheck
