// Timed runs: one iteration of te-async at DP 64..1024 under the cost model, side by side with
// the bookkeeping it replaced (a linear scan of the previous options and of the lanes for
// every option at every pick) and with a random run (the engine and detectors alone).
//   ./build/bench/bench_timed [--benchmark_filter=...]
// Growth: compare the per-run times as DP doubles (n log n doubles a little more than 2x).
#include <benchmark/benchmark.h>

#include <algorithm>

#include "protocols/protocol.h"
#include "scheduler/random_strategy.h"
#include "scheduler/run.h"
#include "scheduler/timed_strategy.h"

namespace amaxcheck::sched {
namespace {

Scenario seed_question_point(std::uint32_t dp) {
  ProtocolKnobs knobs;
  knobs.protocol = ProtocolName::te_async;
  knobs.dp = dp;
  knobs.modules = 1;
  knobs.iters = 1;
  return build_protocol(knobs);
}

/// The timed strategy's pick before this change, kept here as the benchmark's baseline: for
/// every option, a scan of the previous options (its enabled time) and of the lanes (its lane's
/// free time). Same durations, no contention.
class LinearScanTimed final : public Strategy {
 public:
  LinearScanTimed(const Scenario& s, CostModel cost) : scenario_(s), cost_(cost) {}
  void attach(const Engine& engine) override { engine_ = &engine; }
  std::string name() const override { return "timed-linear-scan"; }
  StepDetail step_needs() const override { return StepDetail{false, false, false}; }
  std::size_t pick(ChoiceKind, std::span<const Action> options) override {
    enabled_at_.assign(options.size(), last_end_);
    std::size_t best = 0;
    double best_end = 0, best_start = 0;
    for (std::size_t i = 0; i < options.size(); ++i) {
      for (std::size_t p = 0; p < previous_.size(); ++p) {
        if (previous_[p] == options[i] && p != picked_) enabled_at_[i] = previous_at_[p];
      }
      double lane = 0;
      for (const auto& [key, t] : lane_free_) {
        if (key == actor_key(options[i])) lane = t;
      }
      const double start = std::max(enabled_at_[i], lane);
      const double end = start + duration(options[i]);
      if (i == 0 || end < best_end) {
        best = i;
        best_end = end;
        best_start = start;
      }
    }
    previous_.assign(options.begin(), options.end());
    previous_at_ = enabled_at_;
    picked_ = best;
    start_ = best_start;
    end_ = best_end;
    return best;
  }
  void on_step(const Step& step) override {
    const std::uint64_t actor = actor_key(step.action);
    auto it = std::find_if(lane_free_.begin(), lane_free_.end(), [&](const auto& l) { return l.first == actor; });
    if (it == lane_free_.end()) lane_free_.emplace_back(actor, end_);
    else it->second = end_;
    last_end_ = end_;
    benchmark::DoNotOptimize(start_);
  }

 private:
  double duration(const Action& a) const {
    const Op* op = engine_->pending_op(a);
    if (op == nullptr) return 0;
    switch (a.kind) {
      case ActionKind::issue: return cost_.issue_us(*op);
      case ActionKind::execute: return cost_.execute_us(*op);
      case ActionKind::join: return 0;
      case ActionKind::complete: return cost_.collective_us(*op, scenario_.comms[a.lane].members.size());
    }
    return 0;
  }
  const Scenario& scenario_;
  CostModel cost_;
  const Engine* engine_ = nullptr;
  std::vector<Action> previous_;
  std::vector<double> previous_at_, enabled_at_;
  std::vector<std::pair<std::uint64_t, double>> lane_free_;
  std::size_t picked_ = 0;
  double start_ = 0, end_ = 0, last_end_ = 0;
};

template <class Make>
void one_run(benchmark::State& state, Make make) {
  const Scenario s = seed_question_point(static_cast<std::uint32_t>(state.range(0)));
  RunOptions options;
  options.record_steps = false;
  std::size_t steps = 0;
  for (auto _ : state) {
    auto strategy = make(s);
    steps = run_once(s, strategy, options).step_count;
  }
  state.counters["steps"] = static_cast<double>(steps);
}

void BM_TimedRun(benchmark::State& state) {
  one_run(state, [](const Scenario& s) { return TimedStrategy(s, CostModel{}); });
}
BENCHMARK(BM_TimedRun)->RangeMultiplier(2)->Range(64, 1024)->Unit(benchmark::kMillisecond);

void BM_TimedRunLinearScan(benchmark::State& state) {
  one_run(state, [](const Scenario& s) { return LinearScanTimed(s, CostModel{}); });
}
BENCHMARK(BM_TimedRunLinearScan)->RangeMultiplier(2)->Range(64, 256)->Unit(benchmark::kMillisecond);

void BM_RandomRun(benchmark::State& state) {
  one_run(state, [](const Scenario&) { return RandomStrategy(1); });
}
BENCHMARK(BM_RandomRun)->RangeMultiplier(2)->Range(64, 1024)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace amaxcheck::sched

BENCHMARK_MAIN();
