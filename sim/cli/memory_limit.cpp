#include "cli/memory_limit.h"

#include <fmt/format.h>

#include "model/scenario_size.h"
#include "protocols/protocol_size.h"
#include "scheduler/memory_estimate.h"
#include "scheduler/run.h"
#include "util/check.h"

namespace amaxcheck::cli {
namespace {

void enforce(std::uint64_t max_bytes, const std::string& what, const sched::MemoryEstimate& estimate) {
  if (max_bytes == 0 || estimate.total() <= max_bytes) return;
  const std::uint64_t total = estimate.total();
  const std::string enough = total >= (1ull << 30) ? fmt::format("{}G", (total >> 30) + 1)
                                                   : fmt::format("{}M", (total >> 20) + 1);
  throw InputError(fmt::format("{} would need {}, above the limit of {} (--max-memory {} raises it, --max-memory 0 "
                               "removes it)",
                               what, estimate.describe(), sched::format_bytes(max_bytes), enough));
}

}  // namespace

void MemoryLimit::add_option(CLI::App& sub) {
  sub.add_option("--max-memory", max_bytes,
                 "refuse a scenario whose estimated memory is above this (e.g. 8G, 512M; 0 = no limit)")
      ->transform(CLI::AsSizeValue(false))
      ->default_str("8G");
}

void MemoryLimit::check_protocol(const ProtocolKnobs& knobs, const std::string& what, unsigned jobs) const {
  const ScenarioSize size = protocol_size(knobs);
  // A finished run takes a few steps per op (issue, execute; join and complete for collectives).
  enforce(max_bytes, what, sched::estimate_memory(size, 3 * size.ops, jobs));
}

void MemoryLimit::check_scenario(const Scenario& scenario, const std::string& where, unsigned jobs) const {
  enforce(max_bytes, where, sched::estimate_memory(scenario_size(scenario), sched::expected_steps(scenario), jobs));
}

}  // namespace amaxcheck::cli
