#include "cli/scenario_target.h"

#include <fmt/format.h>

#include <filesystem>

#include "cli/knob_options.h"
#include "io/scenario_json.h"
#include "util/check.h"

namespace amaxcheck::cli {

void ScenarioTarget::add_options(CLI::App& sub) {
  sub.add_option("target", target, "a protocol name (te-sync, te-async, current-scaling) or a scenario file (.json)")
      ->required();
  add_knob_options(sub, knobs);
}

Scenario ScenarioTarget::load() {
  if (auto protocol = parse_protocol(target)) {
    from_protocol = true;
    knobs.protocol = *protocol;
    return build_protocol(knobs);
  }
  if (!std::filesystem::exists(target)) {
    std::string names;
    for (const auto& doc : protocol_docs()) names += (names.empty() ? "" : ", ") + doc.name;
    throw InputError(fmt::format("{}: not a protocol ({}) and no such scenario file", target, names));
  }
  return load_scenario_file(target);
}

}  // namespace amaxcheck::cli
