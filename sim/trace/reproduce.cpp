#include "trace/reproduce.h"

#include <fmt/format.h>

#include <algorithm>

#include "scheduler/replay_strategy.h"
#include "io/scenario_embed.h"
#include "io/scenario_hash.h"
#include "util/check.h"
#include "util/shell_word.h"

namespace amaxcheck::sched {

Trace failure_trace(const Scenario& scenario, const ExploreOptions& options, const FailingRun& failure,
                    const TimedRun* timing) {
  TraceOrigin origin{failure.strategy, failure.seed, failure.index, failure.parameters};
  origin.parameters["exploration_seed"] = options.seed;
  return make_trace(scenario, failure.run, origin, options.run.engine, timing);
}

Scenario trace_scenario(const Trace& trace, const std::string& where) {
  if (!trace.header.scenario) {
    throw InputError(fmt::format("{}:1: field 'scenario': expected the embedded scenario, got null (this trace only "
                                 "records the hash {}; rebuild it from '{}')",
                                 where, trace.header.scenario_hash, trace.header.scenario_source));
  }
  Scenario scenario = unembed_scenario(*trace.header.scenario, where + ":1: scenario");
  const std::string hash = scenario_hash(scenario);
  if (hash != trace.header.scenario_hash) {
    throw InputError(fmt::format("{}:1: field 'scenario_hash': expected {} (the hash of the embedded scenario), got {}",
                                 where, hash, trace.header.scenario_hash));
  }
  return scenario;
}

RunResult replay_trace(const Scenario& scenario, const Trace& trace, const std::string& where) {
  const std::string hash = scenario_hash(scenario);
  if (hash != trace.header.scenario_hash) {
    throw InputError(fmt::format("{}: the trace ran scenario {} but the scenario given hashes to {}", where,
                                 trace.header.scenario_hash, hash));
  }
  RunOptions options;
  options.engine = engine_options_from_json(trace.header.engine, where + ":1");
  options.record_steps = true;
  // A run the step cap cut ends where the recording ends; any other run gets the usual cap,
  // or the recording's length if that is more (a trace from a run given a larger cap).
  options.max_steps = trace.summary.outcome == RunOutcome::step_limit ? trace.steps.size()
                                                                      : std::max(step_cap(scenario), trace.steps.size() + 1);
  ReplayStrategy replay(trace.choices(), ReplayStrategy::Mode::strict, trace.expected_steps());
  try {
    RunResult run = run_once(scenario, replay, options);
    replay.check_ended();
    if (run.outcome != trace.summary.outcome) {
      throw ReplayDiverged(run.step_count, fmt::format("diverged at step {}: expected the run to end {}, got {}",
                                                       run.step_count, to_string(trace.summary.outcome),
                                                       to_string(run.outcome)));
    }
    return run;
  } catch (const ReplayDiverged& e) {
    // Step N is on its own line of the trace; a step past the recording is the summary's business.
    const std::size_t line = e.step < trace.steps.size() ? trace.steps[e.step].line : trace.summary.line;
    if (line == 0) throw InputError(fmt::format("{}: {}", where, e.what()));
    throw InputError(fmt::format("{}:{}: {}", where, line, e.what()));
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: {}", where, e.what()));
  }
}

namespace {

/// Where two trace texts first differ: "line L (byte B)".
std::string first_difference(const std::string& first, const std::string& second) {
  std::size_t line = 1;
  std::size_t pos = 0;
  while (pos < first.size() && pos < second.size() && first[pos] == second[pos]) {
    if (first[pos] == '\n') ++line;
    ++pos;
  }
  return fmt::format("line {} (byte {})", line, pos);
}

/// One instance of the exploration's strategy, running its runs in order with steps recorded.
class TracedRuns {
 public:
  TracedRuns(const Scenario& scenario, const ExploreOptions& options)
      : scenario_(scenario), options_(options), strategy_(make_strategy(scenario, options)) {}

  /// The trace text of run `index`, or nothing when the exploration has no such run.
  std::optional<std::string> next(std::uint64_t index) {
    if (!strategy_->begin_run(index)) return std::nullopt;
    RunOptions run_options = options_.run;
    run_options.record_steps = true;
    RunResult run = run_once(scenario_, *strategy_, run_options);
    strategy_->end_run(run);
    ExploreResult known;  // what the strategy knows so far: the timed run's times
    strategy_->report(known);
    const FailingRun as_run{index, strategy_->seed(), strategy_->name(), strategy_->parameters(), std::move(run)};
    return trace_to_jsonl(failure_trace(scenario_, options_, as_run, known.timing ? &*known.timing : nullptr));
  }

 private:
  const Scenario& scenario_;
  const ExploreOptions& options_;
  std::unique_ptr<Strategy> strategy_;
};

}  // namespace

std::optional<std::string> check_determinism(const Scenario& scenario, const ExploreOptions& options,
                                             std::uint64_t runs) {
  TracedRuns first(scenario, options), second(scenario, options);
  for (std::uint64_t i = 0; i < runs; ++i) {
    const std::optional<std::string> a = first.next(i);
    const std::optional<std::string> b = second.next(i);
    if (a.has_value() != b.has_value()) {
      return fmt::format("run {} is not deterministic: it exists in one exploration and not in the other", i);
    }
    if (!a) return std::nullopt;
    if (*a != *b) {
      return fmt::format("run {} is not deterministic: its two traces first differ on {}", i, first_difference(*a, *b));
    }
  }
  return std::nullopt;
}

std::string replay_command(const std::string& trace_path) { return "amaxcheck replay " + shell_word(trace_path); }

}  // namespace amaxcheck::sched
