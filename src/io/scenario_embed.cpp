#include "io/scenario_embed.h"

#include "io/scenario_json.h"

namespace amaxcheck {

std::optional<nlohmann::json> embed_scenario(const Scenario& scenario) { return scenario_to_json(scenario, false); }

Scenario unembed_scenario(const nlohmann::json& embedded, const std::string& where) {
  return scenario_from_json(embedded, where);
}

}  // namespace amaxcheck
