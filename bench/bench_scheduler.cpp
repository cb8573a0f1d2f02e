// Scheduler benchmarks: schedules per second (random, PCT, jobs, the engine without detectors),
// exhaustive search against the naive interleaving count, and schedules until the first
// detection of each seed hazard.
//   ./build/bench/bench_scheduler [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include "protocols/protocol.h"
#include "scenarios.h"
#include "scheduler/explore.h"
#include "scheduler/pct_strategy.h"
#include "scheduler/random_strategy.h"

namespace amaxcheck::sched {
namespace {

/// te-sync (clean) with `ranks` DP ranks, `modules` modules, one iteration, one microbatch.
Scenario protocol_scenario(ProtocolName protocol, std::uint32_t ranks, std::uint32_t modules) {
  ProtocolKnobs knobs;
  knobs.protocol = protocol;
  knobs.dp = ranks;
  knobs.modules = modules;
  knobs.iters = 1;
  knobs.microbatches = 1;
  return build_protocol(knobs);
}

/// `detectors`: the default ones, as an exploration attaches them, or none (the engine alone).
template <class MakeStrategy>
void schedules_per_second(benchmark::State& state, const Scenario& scenario, MakeStrategy make,
                          std::span<const DetectorFactory> detectors = default_detectors()) {
  RunOptions options;
  options.record_steps = false;
  options.record_choices = false;  // as an exploration runs random and PCT (Strategy::runs_again_alike)
  options.detectors = detectors;
  std::uint64_t run = 0, steps = 0;
  Runner runner(scenario, options);  // as an exploration's worker runs them: one engine, reset
  for (auto _ : state) {
    auto strategy = make(run++);
    const RunResult result = runner.run(strategy);
    steps += result.step_count;
    benchmark::DoNotOptimize(result.hazards.size());
  }
  state.counters["schedules/s"] = benchmark::Counter(static_cast<double>(run), benchmark::Counter::kIsRate);
  state.counters["steps/schedule"] = static_cast<double>(steps) / static_cast<double>(std::max<std::uint64_t>(run, 1));
}

/// Run i's strategy: a new random schedule every run, or one random schedule every run.
RandomStrategy fresh_random(std::uint64_t i) { return RandomStrategy(run_seed(1, i)); }
RandomStrategy same_random(std::uint64_t /*i*/) { return RandomStrategy(run_seed(1, 7)); }

void BM_RandomSchedules(benchmark::State& state) {
  const Scenario s = protocol_scenario(ProtocolName::te_sync, 2, 2);
  schedules_per_second(state, s, fresh_random);
}
BENCHMARK(BM_RandomSchedules);
/// The same random schedule every run: the CPU's branch predictors learn it, so the gap to
/// BM_RandomSchedules is what branches that follow unpredictable choices cost (issue 19).
void BM_SameRandomSchedule(benchmark::State& state) {
  const Scenario s = protocol_scenario(ProtocolName::te_sync, 2, 2);
  schedules_per_second(state, s, same_random);
}
BENCHMARK(BM_SameRandomSchedule);
/// BM_RandomSchedules with no detector attached: the engine alone (its steps, kernel values and
/// resets). The gap to BM_RandomSchedules is what the detectors cost (issue 19).
void BM_RandomSchedulesNoDetectors(benchmark::State& state) {
  const Scenario s = protocol_scenario(ProtocolName::te_sync, 2, 2);
  schedules_per_second(state, s, fresh_random, {});
}
BENCHMARK(BM_RandomSchedulesNoDetectors);
/// BM_SameRandomSchedule with no detector attached: the engine alone on a learned schedule.
/// With the three above it splits a random run into the engine's part and the detectors', each
/// learned or not.
void BM_SameRandomScheduleNoDetectors(benchmark::State& state) {
  const Scenario s = protocol_scenario(ProtocolName::te_sync, 2, 2);
  schedules_per_second(state, s, same_random, {});
}
BENCHMARK(BM_SameRandomScheduleNoDetectors);

void BM_PctSchedules(benchmark::State& state) {
  const Scenario s = protocol_scenario(ProtocolName::te_sync, 2, 2);
  const std::uint64_t k = expected_steps(s);
  schedules_per_second(state, s, [k](std::uint64_t i) { return PctStrategy(PctOptions{run_seed(1, i), 3, k}); });
}
BENCHMARK(BM_PctSchedules);

/// --jobs: 4000 random runs of the same scenario with 1 or 2 workers (compare wall times).
void BM_RandomExploreJobs(benchmark::State& state) {
  const Scenario s = protocol_scenario(ProtocolName::te_sync, 2, 2);
  ExploreOptions options;
  options.runs = 4000;
  options.stop_at_first = false;
  options.jobs = static_cast<unsigned>(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(explore(s, options).runs);
  state.counters["schedules/s"] =
      benchmark::Counter(static_cast<double>(options.runs * state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_RandomExploreJobs)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

std::uint64_t factorial(std::uint64_t n) { return n <= 1 ? 1 : n * factorial(n - 1); }

/// Litmus: n ranks x k host syncs; naive = (nk)!/(k!)^n, one class.
void BM_ExhaustiveLitmus(benchmark::State& state) {
  const auto n = static_cast<std::uint32_t>(state.range(0)), k = static_cast<std::uint32_t>(state.range(1));
  const Scenario s = testing::independent_syncs(n, k);
  ExploreOptions options;
  options.strategy = "exhaustive";
  options.stop_at_first = false;
  ExploreResult reduced;
  for (auto _ : state) reduced = explore(s, options);
  options.args.set("no-reduction", true);
  const ExploreResult naive = explore(s, options);
  std::uint64_t denominator = 1;
  for (std::uint32_t i = 0; i < n; ++i) denominator *= factorial(k);
  state.counters["naive_formula"] = static_cast<double>(factorial(std::uint64_t{n} * k) / denominator);
  state.counters["naive_explored"] = static_cast<double>(naive.exhaustive->explored);
  state.counters["dpor_explored"] = static_cast<double>(reduced.exhaustive->explored);
  state.counters["dpor_sleep_blocked"] = static_cast<double>(reduced.exhaustive->sleep_blocked);
}
BENCHMARK(BM_ExhaustiveLitmus)->Args({2, 2})->Args({2, 3})->Args({3, 2})->Args({4, 1})->Unit(benchmark::kMillisecond);

/// te-sync protocol scenarios, DPOR with a cap: explored schedules and whether it completed.
/// The naive count is far beyond enumeration here; steps/schedule gives its scale.
void BM_ExhaustiveProtocol(benchmark::State& state) {
  const Scenario s = protocol_scenario(ProtocolName::te_sync, static_cast<std::uint32_t>(state.range(0)),
                                       static_cast<std::uint32_t>(state.range(1)));
  ExploreOptions options;
  options.strategy = "exhaustive";
  options.stop_at_first = false;
  options.args.set("max-schedules", 2000);
  ExploreResult r;
  for (auto _ : state) r = explore(s, options);
  state.counters["dpor_explored"] = static_cast<double>(r.exhaustive->explored);
  state.counters["sleep_blocked"] = static_cast<double>(r.exhaustive->sleep_blocked);
  state.counters["complete"] = r.coverage_complete ? 1 : 0;
  state.counters["steps/schedule"] = static_cast<double>(expected_steps(s));
}
BENCHMARK(BM_ExhaustiveProtocol)
    ->ArgsProduct({{2, 3, 4}, {1, 2, 4}})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

/// The strategies of the detection benchmarks, by their argument (0, 1, 2: the old enum order).
const char* const detecting[] = {"random", "pct", "exhaustive"};

/// Schedules until the first detection of a seed hazard by strategy `detecting[state.range(0)]`.
void until_detection(benchmark::State& state, const Scenario& s) {
  ExploreOptions options;
  options.strategy = detecting[static_cast<std::size_t>(state.range(0))];
  options.runs = 100000;
  options.seed = 1;
  ExploreResult r;
  for (auto _ : state) r = explore(s, options);
  state.counters["schedules_to_detect"] = r.first_failure ? static_cast<double>(r.runs) : -1;
}

Scenario te_async_after_copy() {
  ProtocolKnobs knobs;
  knobs.protocol = ProtocolName::te_async;
  knobs.wait = WaitPoint::after_copy;
  knobs.iters = 2;
  return build_protocol(knobs);
}

Scenario shared_comm_rank_dependent() {
  ProtocolKnobs knobs;
  knobs.protocol = ProtocolName::te_sync;
  knobs.comm = CommChoice::shared;
  knobs.amax_order = AmaxOrder::rank_dependent;
  knobs.iters = 1;
  return build_protocol(knobs);
}

void BM_DetectWaitAfterCopy(benchmark::State& state) {
  until_detection(state, te_async_after_copy());
}
BENCHMARK(BM_DetectWaitAfterCopy)
    ->DenseRange(0, 2)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

void BM_DetectSharedCommOrder(benchmark::State& state) {
  until_detection(state, shared_comm_rank_dependent());
}
BENCHMARK(BM_DetectSharedCommOrder)
    ->DenseRange(0, 2)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

}  // namespace
}  // namespace amaxcheck::sched

BENCHMARK_MAIN();
