// libFuzzer target: load a scenario, then run it through every strategy of the table (a few
// runs each, the exhaustive search capped), and write the first failure's trace as text and
// read it back: whatever the scenario, the checker may only report hazards.
#include <cstdint>

#include "fuzz_limits.h"
#include "io/json_text.h"
#include "io/scenario_json.h"
#include "scheduler/explore.h"
#include "scheduler/strategy_table.h"
#include "trace/reproduce.h"
#include "trace/trace.h"
#include "util/check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace amaxcheck;
  Scenario scenario;
  try {
    scenario = scenario_from_json(parse_json_text(fuzz::text_of(data, size), "fuzz.json"), "fuzz.json",
                                  fuzz::refuse_large_protocols);
  } catch (const InputError&) {
    return 0;
  }
  if (!fuzz::small_enough(scenario) || sched::expected_steps(scenario) > 20000) return 0;
  for (const sched::StrategyEntry& entry : sched::strategy_table()) {
    sched::ExploreOptions options;
    options.strategy = entry.name;
    options.runs = 3;
    options.args.set("max-schedules", 16);
    const sched::ExploreResult result = sched::explore(scenario, options);
    if (!result.first_failure) continue;
    const sched::TimedRun* timing = result.timing ? &*result.timing : nullptr;
    const sched::Trace trace = sched::failure_trace(scenario, options, *result.first_failure, timing);
    const std::string text = sched::trace_to_jsonl(trace);
    AMAX_CHECK(sched::trace_to_jsonl(sched::parse_trace(text, "fuzz.jsonl")) == text,
               "a trace read back from its own text changed");
  }
  return 0;
}
