// libFuzzer target: the trace reader (JSON Lines -> Trace), the Perfetto export of what it
// read, and, when the trace embeds a scenario, its replay.
#include <cstdint>

#include "export/perfetto.h"
#include "fuzz_limits.h"
#include "trace/reproduce.h"
#include "trace/trace.h"
#include "util/check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace amaxcheck;
  try {
    const sched::Trace trace = sched::parse_trace(fuzz::text_of(data, size), "fuzz.jsonl");
    (void)sched::to_chrome_trace(trace).dump();
    const Scenario scenario = sched::trace_scenario(trace, "fuzz.jsonl");
    if (!fuzz::small_enough(scenario) || trace.steps.size() > 100000) return 0;
    (void)sched::replay_trace(scenario, trace, "fuzz.jsonl");
  } catch (const InputError&) {
    return 0;  // rejected as bad input (a malformed trace, or one that diverges)
  }
  return 0;
}
