#pragma once
/// Embedding scenarios in trace headers, so a trace alone is enough to replay it.
///
/// The embedded form is src/io's full scenario JSON (scenario_to_json). Until src/io
/// serializes scenarios, embed_scenario returns nothing and traces carry only the content
/// hash: such traces replay only when the caller supplies the scenario.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "model/scenario.h"

namespace amaxcheck::sched {

/// The scenario as a trace embeds it, or nothing when it cannot be serialized.
std::optional<nlohmann::json> embed_scenario(const Scenario& scenario);
/// The scenario embedded in a trace; InputError naming `where` when it cannot be read.
Scenario unembed_scenario(const nlohmann::json& embedded, const std::string& where);

}  // namespace amaxcheck::sched
