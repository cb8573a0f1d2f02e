#pragma once
/// What `check` checks: a built-in protocol by name (with knob options) or a scenario file.

#include <CLI/CLI.hpp>
#include <string>

#include "model/scenario.h"
#include "protocols/protocol.h"

namespace amaxcheck::cli {

struct ScenarioTarget {
  std::string target;   ///< protocol name or path to a scenario file
  ProtocolKnobs knobs;  ///< filled by the knob options
  bool from_protocol = false;

  /// Registers the positional target and every protocol knob on `sub`.
  void add_options(CLI::App& sub);
  /// Builds the scenario; InputError for an unknown protocol or a bad file.
  Scenario load();
  /// Iterations and whether the amax reduction has its own communicator, for cost figures.
  std::uint32_t iterations() const { return from_protocol ? knobs.iters : 1; }
  bool separate_amax_comm() const { return from_protocol && knobs.comm == CommChoice::separate; }
};

}  // namespace amaxcheck::cli
