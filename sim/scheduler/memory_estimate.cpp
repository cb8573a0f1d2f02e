#include "scheduler/memory_estimate.h"

#include <fmt/format.h>

namespace amaxcheck::sched {
namespace {

// Per-unit costs in bytes, gcc 12 / libstdc++ (x86-64), checked against peak resident memory of
// `check` with a hazard (trace written): te-async --wait after-copy --dp 16 --modules 4 --iters 2
// at --elems 64 / 512 / 2048 measured 54 / 94 / 220 MB; the estimates are above each.
constexpr std::uint64_t bytes_per_op = 400;        // Op (~200 B), its name and origin, malloc slack
constexpr std::uint64_t bytes_per_range = 48;      // a Range in reads / writes, and its race history entry
constexpr std::uint64_t bytes_per_value = 4;       // a float
constexpr std::uint64_t bytes_per_element = 12;    // the engine's float, the written-values copies
constexpr std::uint64_t bytes_per_actor_per_collective = 4;  // a collective's dense clock base
constexpr std::uint64_t bytes_per_step = 700;      // a recorded Step and its trace line
constexpr std::uint64_t bytes_per_written_element = 48;  // a recorded write: Step, TraceStep, its JSON and text
constexpr std::uint64_t fixed_bytes = 32ull << 20; // the program itself, libraries, small state

}  // namespace

std::string format_bytes(std::uint64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (bytes >= (1ull << 30)) return fmt::format("{:.1f} GiB", b / (1ull << 30));
  if (bytes >= (1ull << 20)) return fmt::format("{:.0f} MiB", b / (1ull << 20));
  return fmt::format("{:.0f} KiB", b / (1ull << 10));
}

std::string MemoryEstimate::describe() const {
  return fmt::format("about {} (scenario {}, {} engine{} x {}, recorded steps {})", format_bytes(total()),
                     format_bytes(scenario_bytes), engines, engines == 1 ? "" : "s", format_bytes(engine_bytes),
                     format_bytes(steps_bytes));
}

MemoryEstimate estimate_memory(const ScenarioSize& size, std::uint64_t steps, unsigned jobs) {
  MemoryEstimate e;
  e.scenario_bytes = fixed_bytes + size.ops * bytes_per_op + size.ranges * bytes_per_range +
                     (size.op_values + size.buffer_elements / 8) * bytes_per_value;
  // Clock bases: a collective's completion gives its members one dense base over every actor;
  // collectives over m ranks share one, so there are about collectives / ranks of them alive.
  const std::uint64_t clock_bases = size.ranks == 0 ? 0 : size.collectives / size.ranks + 1;
  e.engine_bytes = size.buffer_elements * bytes_per_element + size.ranges * bytes_per_range +
                   clock_bases * size.actors * bytes_per_actor_per_collective;
  e.engines = jobs == 0 ? 1 : jobs;
  e.steps_bytes = steps * bytes_per_step + size.written_elements * bytes_per_written_element;
  return e;
}

}  // namespace amaxcheck::sched
