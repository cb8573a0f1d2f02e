#pragma once
/// What `check` checks: a built-in protocol by name (with knob options) or a scenario file.

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli/memory_limit.h"
#include "model/scenario.h"
#include "protocols/protocol.h"

namespace amaxcheck::cli {

struct ScenarioTarget {
  std::string target;   ///< protocol name or path to a scenario file
  ProtocolKnobs knobs;  ///< filled by the knob options
  std::vector<std::string> knobs_given;  ///< the knob options given ("--dp"): a file takes none
  bool from_protocol = false;
  MemoryLimit memory;   ///< --max-memory

  /// Registers the positional target, every protocol knob and --max-memory on `sub`.
  void add_options(CLI::App& sub);
  /// Builds the scenario; InputError for an unknown protocol, a bad file, or a scenario whose
  /// estimated memory with `jobs` engines is above --max-memory (a protocol point is estimated
  /// from its knobs before it is built, then again once built). With Recording::on_hazard,
  /// `recording_check` is then the check to run before a hazard's run is recorded.
  Scenario load(unsigned jobs = 1, Recording recording = Recording::always);
  std::function<void()> recording_check;
  /// Iterations and whether the amax reduction has its own communicator, for cost figures.
  std::uint32_t iterations() const { return from_protocol ? knobs.iters : 1; }
  bool separate_amax_comm() const { return from_protocol && knobs.comm == CommChoice::separate; }
};

}  // namespace amaxcheck::cli
