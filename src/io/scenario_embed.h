#pragma once
/// Embedding scenarios in trace headers, so a trace alone is enough to replay it.
///
/// The embedded form is src/io's full scenario JSON (scenario_to_json), so the trace replays
/// without the file or protocol it came from. The header keeps the content hash as well, and
/// a replay checks the embedded scenario against it.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "model/scenario.h"

namespace amaxcheck {

/// The scenario as a trace embeds it (optional so a future build may embed only the hash).
std::optional<nlohmann::json> embed_scenario(const Scenario& scenario);
/// The scenario embedded in a trace; InputError naming `where` when it cannot be read.
Scenario unembed_scenario(const nlohmann::json& embedded, const std::string& where);

}  // namespace amaxcheck
