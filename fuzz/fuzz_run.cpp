// libFuzzer target: load a scenario, then run it through every strategy of the table (a few
// runs each, the exhaustive search capped), and write the first failure's trace as text and
// read it back: whatever the scenario, the checker may only report hazards.
//
// Each input must stay cheap (libFuzzer wants hundreds of inputs a second, and one run of a
// 20,000-step scenario under ASan takes a tenth of one): a protocol point is built only up to
// max_run_ops, a scenario runs only up to max_run_steps steps and max_run_ranks ranks, and each
// strategy gets two runs. Bugs of the engine and the strategies show on small worlds; what is
// larger is skipped, not a finding.
#include <cstdint>

#include "fuzz_limits.h"
#include "io/json_text.h"
#include "io/scenario_json.h"
#include "scheduler/explore.h"
#include "scheduler/strategy_table.h"
#include "trace/reproduce.h"
#include "trace/trace.h"
#include "util/check.h"

namespace {

constexpr std::uint64_t max_run_ops = 400;
constexpr std::uint64_t max_run_steps = 1500;
constexpr std::size_t max_run_ranks = 8;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace amaxcheck;
  const std::optional<Scenario> read = fuzz::read_scenario(data, size, max_run_ops);
  if (!read || sched::expected_steps(*read) > max_run_steps || read->ranks.size() > max_run_ranks) return 0;
  const Scenario& scenario = *read;
  for (const sched::StrategyEntry& entry : sched::strategy_table()) {
    sched::ExploreOptions options;
    options.strategy = entry.name;
    options.runs = 2;
    options.args.set("max-schedules", 4);
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
