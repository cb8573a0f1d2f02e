#include "io/scenario_embed.h"

#include "io/scenario_json.h"
#include "util/check.h"

namespace amaxcheck {

std::optional<nlohmann::json> embed_scenario(const Scenario& scenario) { return scenario_to_json(scenario, false); }

Scenario unembed_scenario(const nlohmann::json& embedded, const std::string& where) {
  // Traces embed the full form only; a protocol form would be built here, at any size, from
  // knobs no limit has seen.
  if (embedded.is_object() && embedded.contains("protocol")) {
    throw InputError(where + ": protocol: expected the full scenario form (a trace embeds its programs), got a protocol");
  }
  return scenario_from_json(embedded, where);
}

}  // namespace amaxcheck
