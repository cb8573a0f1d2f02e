#pragma once
/// `--max-memory`: the most memory a command may be estimated to need
/// (sched::estimate_memory). Above it the command refuses the scenario as bad input (exit 2),
/// printing the estimate and how to raise the limit, before building or running anything big.

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "model/scenario.h"
#include "protocols/protocol.h"

namespace amaxcheck::cli {

/// 8 GiB: more than any shipped scenario or sweep point needs by two orders of magnitude, and
/// less than a CI machine has.
inline constexpr std::uint64_t default_max_memory_bytes = 8ull << 30;

struct MemoryLimit {
  std::uint64_t max_bytes = default_max_memory_bytes;

  /// Registers --max-memory SIZE (8G, 512M, 64GiB, or bytes; 0 = no limit).
  void add_option(CLI::App& sub);
  /// Before building a protocol point, run by `jobs` engines at once: its estimated size
  /// (protocols/protocol_size.h); `what` names it in the message.
  void check_protocol(const ProtocolKnobs& knobs, const std::string& what = "this protocol point",
                      unsigned jobs = 1) const;
  /// Before running `scenario` with `jobs` engines at once; `where` names it in the message.
  void check_scenario(const Scenario& scenario, const std::string& where, unsigned jobs = 1) const;
};

}  // namespace amaxcheck::cli
