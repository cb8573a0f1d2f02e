// `amaxcheck hazard-kinds`: every hazard kind the detectors report (detectors/hazard.h's table),
// for people and for the harness, which reads the JSON form instead of keeping its own list.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "detectors/hazard.h"

namespace amaxcheck::cli {
namespace {

int list_hazard_kinds(bool json) {
  if (json) {
    nlohmann::ordered_json doc;
    doc["hazard_kinds"] = nlohmann::ordered_json::array();
    for (const HazardKindInfo& k : hazard_kind_table) {
      doc["hazard_kinds"].push_back({{"name", k.name}, {"short", k.short_name}, {"description", k.description}});
    }
    fmt::print("{}\n", doc.dump(2));
    return exit_clean;
  }
  for (const HazardKindInfo& k : hazard_kind_table) fmt::print("  {:<20} {}\n", k.name, k.description);
  return exit_clean;
}

}  // namespace

void register_hazard_kinds(CLI::App& app) {
  auto json = std::make_shared<bool>(false);
  CLI::App* sub = app.add_subcommand("hazard-kinds", "List the hazard kinds a check can report, in report order");
  sub->add_flag("--json", *json, "machine-readable output (name, short label, description)");
  add_command(app, sub, [json] { return list_hazard_kinds(*json); });
}

}  // namespace amaxcheck::cli
