#pragma once
// What every fuzz target shares: an input either is rejected as bad input (InputError) or is
// processed; anything else escaping (another exception, a sanitizer report, a crash) is a bug.
// Scenarios above a small memory estimate are skipped, as `--max-memory` would refuse them.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "io/json_text.h"
#include "io/scenario_json.h"
#include "model/scenario.h"
#include "model/scenario_size.h"
#include "util/check.h"
#include "scheduler/memory_estimate.h"
#include "scheduler/run.h"

namespace amaxcheck::fuzz {

/// The memory a fuzzed scenario may be estimated to need (the CLI's default is 8 GiB; a fuzzer
/// runs thousands of inputs a second and must stay well inside libFuzzer's -rss_limit_mb).
inline constexpr std::uint64_t max_memory_bytes = 64ull << 20;

inline bool small_enough(const Scenario& scenario) {
  return sched::estimate_memory(scenario_size(scenario), sched::expected_steps(scenario)).total() <= max_memory_bytes;
}

/// The most ops of a protocol point the readers' targets build: writing a seed design point
/// (8 ranks, 4 modules, 2 iterations) out and reading it back took 8 s under ASan and coverage,
/// and a fuzzer wants hundreds of inputs a second. The reader's checks of the knobs still run
/// for larger points; the generator and the writer are the same code at every size.
inline constexpr std::uint64_t max_read_ops = 2000;

/// The io reader's before_build hook: a protocol point is built, and rank templates expanded,
/// only when they come to at most `max_ops` ops and are small by memory (a fuzzer that asks for
/// dp 1024, or a template of 65,536 ranks, must not spend a minute building it; the CLI refuses
/// by memory).
inline void refuse_sizes_above(const ScenarioSize& size, std::uint64_t max_ops) {
  if (size.ops > max_ops || sched::estimate_memory(size, 3 * size.ops).total() > max_memory_bytes) {
    throw InputError("too large for fuzzing");
  }
}

inline std::string_view text_of(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

/// The scenario the input holds, read as the CLI reads a scenario file (a protocol point is
/// built only up to `max_ops` ops), or nothing when it is refused as bad input (what the
/// contract asks) or is above max_memory_bytes.
inline std::optional<Scenario> read_scenario(const std::uint8_t* data, std::size_t size, std::uint64_t max_ops) {
  try {
    Scenario scenario = scenario_from_json(parse_json_text(text_of(data, size), "fuzz.json"), "fuzz.json",
                                           [max_ops](const ScenarioSize& size, const std::string&) {
                                             refuse_sizes_above(size, max_ops);
                                           });
    if (!small_enough(scenario)) return std::nullopt;
    return scenario;
  } catch (const InputError&) {
    return std::nullopt;
  }
}

}  // namespace amaxcheck::fuzz
