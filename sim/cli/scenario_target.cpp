#include "cli/scenario_target.h"

#include <fmt/format.h>

#include <filesystem>

#include "cli/knob_options.h"
#include "io/scenario_json.h"
#include "util/check.h"
#include "util/utf8.h"

namespace amaxcheck::cli {

void ScenarioTarget::add_options(CLI::App& sub) {
  sub.add_option("target", target, "a protocol name (te-sync, te-async, current-scaling) or a scenario file (.json)")
      ->required();
  add_knob_options(sub, knobs);
  memory.add_option(sub);
}

Scenario ScenarioTarget::load(unsigned jobs, Recording recording) {
  if (auto protocol = parse_protocol(target)) {
    from_protocol = true;
    knobs.protocol = *protocol;
    memory.check_protocol(knobs, "this protocol point", jobs, recording);
    Scenario scenario = build_protocol(knobs);
    const std::string where = fmt::format("protocol point {}", scenario.source);
    memory.check_scenario(scenario, where, jobs, recording);
    if (recording == Recording::on_hazard) recording_check = memory.recording_check(scenario, where);
    return scenario;
  }
  std::error_code error;
  const bool exists = std::filesystem::exists(target, error);
  if (error) throw InputError(fmt::format("{}: cannot look at this scenario file: {}", escape_invalid_utf8(target), error.message()));
  if (!exists) {
    std::string names;
    for (const auto& doc : protocol_docs()) names += (names.empty() ? "" : ", ") + doc.name;
    throw InputError(fmt::format("{}: not a protocol ({}) and no such scenario file", target, names));
  }
  Scenario scenario = load_scenario_file(
      target, [this, jobs, recording](const ProtocolKnobs& k) { memory.check_protocol(k, "this protocol point", jobs, recording); });
  memory.check_scenario(scenario, escape_invalid_utf8(target), jobs, recording);
  if (recording == Recording::on_hazard) recording_check = memory.recording_check(scenario, escape_invalid_utf8(target));
  return scenario;
}

}  // namespace amaxcheck::cli
