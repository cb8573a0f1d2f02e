#pragma once
/// `--max-memory`: the most memory a command may be estimated to need
/// (sched::estimate_memory). Above it the command refuses the scenario as bad input (exit 2),
/// printing the estimate and how to raise the limit, before building or running anything big.

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <string>

#include "model/scenario.h"
#include "model/scenario_size.h"
#include "protocols/protocol.h"

namespace amaxcheck::cli {

/// 8 GiB: more than any shipped scenario or sweep point needs by two orders of magnitude, and
/// less than a CI machine has.
inline constexpr std::uint64_t default_max_memory_bytes = 8ull << 30;

/// Which runs a command keeps whole (every step): what the estimate counts beside the engines.
enum class Recording : std::uint8_t {
  always,     ///< replay, shrink, export, --check-determinism: a recorded run's steps are counted
  on_hazard,  ///< check: only a hazard's run is recorded, so the steps are counted when one is
              ///< found (before_recording), not up front: a clean check keeps no steps
};

struct MemoryLimit {
  std::uint64_t max_bytes = default_max_memory_bytes;

  /// Registers --max-memory SIZE (8G, 512M, 64GiB, or bytes; 0 = no limit).
  void add_option(CLI::App& sub);
  /// Before building a protocol point, run by `jobs` engines at once: its estimated size
  /// (protocols/protocol_size.h); `what` names it in the message.
  void check_protocol(const ProtocolKnobs& knobs, const std::string& what = "this protocol point",
                      unsigned jobs = 1, Recording recording = Recording::always) const;
  /// The same for a size known before building (io's BeforeBuild: a protocol point's, or an
  /// upper bound of what a file's rank templates expand to).
  void check_size(const ScenarioSize& size, const std::string& what, unsigned jobs = 1,
                  Recording recording = Recording::always) const;
  /// Before running `scenario` with `jobs` engines at once; `where` names it in the message.
  void check_scenario(const Scenario& scenario, const std::string& where, unsigned jobs = 1,
                      Recording recording = Recording::always) const;
  /// For Recording::on_hazard: the check of a hazard's recorded run (one engine, since an
  /// exploration frees its workers' engines first, and the run's steps), for
  /// sched::ExploreOptions::before_recording. Throws InputError above the limit.
  std::function<void()> recording_check(const Scenario& scenario, const std::string& where) const;
};

}  // namespace amaxcheck::cli
