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

/// What a command keeps alive up front: without a recorded run's steps when it records only
/// a hazard's run.
sched::MemoryEstimate kept(sched::MemoryEstimate estimate, Recording recording) {
  if (recording == Recording::on_hazard) estimate.steps_bytes = 0;
  return estimate;
}

}  // namespace

void MemoryLimit::add_option(CLI::App& sub) {
  sub.add_option("--max-memory", max_bytes,
                 "refuse a scenario whose estimated memory is above this (e.g. 8G, 512M; 0 = no limit)")
      ->transform(CLI::AsSizeValue(false))
      // CLI11 runs a transform before those added earlier, so this one sees the text as given:
      // AsSizeValue reads "-1" as 2^64 - 1, which would silently remove the limit.
      ->transform(CLI::Validator(
          [](std::string& text) -> std::string {
            const std::size_t first = text.find_first_not_of(" \t");
            if (first == std::string::npos || text[first] != '-') return {};
            return "expected a size of 0 or more (e.g. 8G, 512M; 0 = no limit), got \"" + text + "\"";
          },
          ""))
      ->default_str("8G");
}

void MemoryLimit::check_protocol(const ProtocolKnobs& knobs, const std::string& what, unsigned jobs,
                                 Recording recording) const {
  check_size(protocol_size(knobs), what, jobs, recording);
}

void MemoryLimit::check_size(const ScenarioSize& size, const std::string& what, unsigned jobs, Recording recording) const {
  // A finished run takes a few steps per op (issue, execute; join and complete for collectives).
  enforce(max_bytes, what, kept(sched::estimate_memory(size, 3 * size.ops, jobs), recording));
}

void MemoryLimit::check_scenario(const Scenario& scenario, const std::string& where, unsigned jobs,
                                 Recording recording) const {
  enforce(max_bytes, where,
          kept(sched::estimate_memory(scenario_size(scenario), sched::expected_steps(scenario), jobs), recording));
}

std::function<void()> MemoryLimit::recording_check(const Scenario& scenario, const std::string& where) const {
  const sched::MemoryEstimate estimate =
      sched::estimate_memory(scenario_size(scenario), sched::expected_steps(scenario), 1);
  return [max = max_bytes, estimate, what = fmt::format("recording the trace of the hazard found in {}", where)] {
    enforce(max, what, estimate);
  };
}

}  // namespace amaxcheck::cli
