#include "cli/scenario_target.h"

#include <fmt/format.h>

#include <filesystem>

#include "cli/knob_options.h"
#include "io/scenario_json.h"
#include "util/check.h"
#include "util/utf8.h"

namespace amaxcheck::cli {
namespace {

/// "te-sync, te-async, current-scaling".
std::string protocol_names() {
  std::string names;
  for (const auto& doc : protocol_docs()) names += (names.empty() ? "" : ", ") + doc.name;
  return names;
}

}  // namespace

void ScenarioTarget::add_options(CLI::App& sub) {
  sub.add_option("target", target, "a protocol name (te-sync, te-async, current-scaling) or a scenario file (.json)")
      ->required();
  add_knob_options(sub, knobs, &knobs_given);
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
    throw InputError(fmt::format("{}: not a protocol ({}) and no such scenario file", target, protocol_names()));
  }
  if (!knobs_given.empty()) {
    // Not applied to a file's ops, and silently ignored they would check another design than
    // the one asked for.
    throw InputError(fmt::format("{}: protocol knob option{} for a protocol name ({}), not for the scenario file {}, "
                                 "which says everything it runs",
                                 fmt::join(knobs_given, ", "), knobs_given.size() == 1 ? "" : "s", protocol_names(),
                                 escape_invalid_utf8(target)));
  }
  Scenario scenario = load_scenario_file(target, [this, jobs, recording](const ScenarioSize& size, const std::string& what) {
    memory.check_size(size, what == "protocol point" ? "this protocol point" : "the " + what + " of this file", jobs, recording);
  });
  memory.check_scenario(scenario, escape_invalid_utf8(target), jobs, recording);
  if (recording == Recording::on_hazard) recording_check = memory.recording_check(scenario, escape_invalid_utf8(target));
  return scenario;
}

}  // namespace amaxcheck::cli
