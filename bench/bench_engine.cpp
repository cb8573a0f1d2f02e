// Engine benchmarks: events per second on a large scenario, and the cost of one collective
// as the number of ranks grows (the happens-before representation must not be quadratic).
#include <benchmark/benchmark.h>

#include "detectors/detector.h"
#include "engine/engine.h"
#include "model/builder.h"

namespace amaxcheck {
namespace {

/// `ranks` ranks, each running `modules` rounds of: fill a local amax, all-reduce it on a side
/// stream over the world, wait, copy it back. One thread, two streams per rank.
Scenario world_reductions(std::uint32_t ranks, std::uint32_t modules) {
  ScenarioBuilder b("bench");
  std::vector<RankId> all;
  for (std::uint32_t r = 0; r < ranks; ++r) all.push_back(b.rank());
  const CommId world = b.comm("world", all);
  for (RankId r : all) {
    const ThreadId t = b.thread(r, "main");
    const StreamId compute = b.stream(r, "compute"), nccl = b.stream(r, "nccl");
    const EventId ready = b.event(r, "ready"), done = b.event(r, "done");
    const BufferId global = b.buffer(r, "amax_global", modules);
    const BufferId hist = b.buffer(r, "amax_history", modules);
    for (std::uint32_t m = 0; m < modules; ++m) {
      b.op(r, t, ScenarioBuilder::fill(compute, {global, m, 1}, {static_cast<float>(r + m)}));
      b.op(r, t, ScenarioBuilder::record(compute, ready));
      b.op(r, t, ScenarioBuilder::wait(nccl, ready));
      b.op(r, t, ScenarioBuilder::all_reduce(nccl, world, {global, m, 1}, {global, m, 1}));
      b.op(r, t, ScenarioBuilder::record(nccl, done));
      b.op(r, t, ScenarioBuilder::wait(compute, done, "handle.wait", OpKind::work_wait));
      b.op(r, t, ScenarioBuilder::copy(compute, {global, m, 1}, {hist, m, 1}));
    }
  }
  return b.build();
}

std::size_t run_with_detectors(const Scenario& s) {
  Engine engine(s);
  auto detectors = make_detectors(s);
  for (auto& d : detectors) engine.add_observer(d.get());
  std::size_t steps = 0;
  while (!engine.enabled().empty()) {
    engine.apply(engine.enabled().front());
    ++steps;
  }
  engine.finish();
  return steps;
}

void BM_EventsPerSecond64Ranks(benchmark::State& state) {
  const Scenario s = world_reductions(64, static_cast<std::uint32_t>(state.range(0)));
  std::size_t steps = 0;
  for (auto _ : state) steps += run_with_detectors(s);
  state.counters["events/s"] = benchmark::Counter(static_cast<double>(steps), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_EventsPerSecond64Ranks)->Arg(16)->Unit(benchmark::kMillisecond);

void BM_CostPerCollective(benchmark::State& state) {
  const auto ranks = static_cast<std::uint32_t>(state.range(0));
  const Scenario s = world_reductions(ranks, 2);
  std::size_t steps = 0;
  for (auto _ : state) steps += run_with_detectors(s);
  const double collectives = 2.0 * static_cast<double>(state.iterations());
  // A world collective involves every rank's ops, so linear growth per collective is the
  // floor; per member (and per step) the cost should stay nearly flat.
  state.counters["us/collective"] = benchmark::Counter(collectives, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["us/collective/member"] =
      benchmark::Counter(collectives * ranks, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["steps/s"] = benchmark::Counter(static_cast<double>(steps), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_CostPerCollective)->RangeMultiplier(4)->Range(8, 4096)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace amaxcheck

BENCHMARK_MAIN();
