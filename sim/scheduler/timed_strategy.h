#pragma once
/// timed(cost model): a discrete-event run.
///
/// Every action gets a duration from the CostModel. An action becomes enabled at the end time
/// of the step that enabled it; its lane (host thread, stream, or communicator: its actor) is
/// busy until its previous step ended. Of the enabled actions, the one with the smallest end
/// time = max(enabled_at, lane_free) + duration runs next (ties: canonical order), so steps
/// are applied in end-time order and the run is deterministic without any randomness.
///
/// What an action would run comes from the engine (Engine::pending_op, attached by run_once),
/// what it costs from the CostModel; the strategy keeps no copy of the engine's queues,
/// program counters or rendezvous, only the times it assigned.
///
/// The result is a TimedRun: each op's issue interval and execution interval (for a
/// collective: from its member's join to the collective's completion) and each rank's
/// iteration time (the end of its last step). Cost metrics (exposed amax latency, queueing
/// behind gradient buckets) are derived from these by the callers, by op name.
///
/// As an exploration's strategy (the table's "timed", parameters --launch-us, --kernel-us,
/// --alpha-us, --bus-gbps, --collective-algo) it runs once and reports its TimedRun.

#include <cstdint>
#include <memory>
#include <vector>

#include "scheduler/cost_model.h"
#include "scheduler/strategy.h"
#include "scheduler/strategy_params.h"

namespace amaxcheck::sched {

struct OpTiming {
  OpRef op;
  std::string name;
  OpKind kind = OpKind::fill;
  std::string origin;
  double issue_start_us = 0;
  double issue_end_us = 0;
  double start_us = 0;  ///< execution start (join for collectives; = issue for host ops)
  double end_us = 0;    ///< execution end (completion for collectives)
  bool executed = false;  ///< false when the run ended before the op ran
};

struct StepTiming {
  double start_us = 0;
  double end_us = 0;
};

struct TimedRun {
  std::vector<OpTiming> ops;         ///< in issue order
  std::vector<StepTiming> steps;     ///< one per step of the run
  std::vector<double> rank_end_us;   ///< per rank: end of its last step (iteration time)
  double makespan_us = 0;            ///< the largest rank_end_us
};

class TimedStrategy final : public Strategy {
 public:
  TimedStrategy(const Scenario& scenario, CostModel cost);

  void attach(const Engine& engine) override { engine_ = &engine; }
  std::string name() const override { return "timed"; }
  nlohmann::ordered_json parameters() const override;
  std::size_t pick(ChoiceKind kind, std::span<const Action> options) override;
  void on_step(const Step& step) override;
  /// The cost model reads the action and the op only.
  StepDetail step_needs() const override { return StepDetail{false, false, false}; }

  const TimedRun& timing() const { return run_; }
  void end_run(const RunResult& run) override;
  /// The run's TimedRun, unless the step cap cut the run (its figures would measure a run that
  /// never ended).
  void report(ExploreResult& result) const override;

 private:
  const Op& op_at(const OpRef& ref) const;
  double duration_us(const Action& action) const;
  double lane_free_us(std::uint64_t actor) const;
  OpTiming& timing_of(const OpRef& ref);

  const Scenario& scenario_;
  CostModel cost_;
  const Engine* engine_ = nullptr;
  TimedRun run_;
  std::vector<std::vector<std::vector<std::int64_t>>> timing_index_;  ///< [rank][thread][op]
  std::vector<OpRef> picked_members_;  ///< a picked complete: the members' ops it finishes
  std::vector<std::pair<std::uint64_t, double>> lane_free_;         ///< (actor, time)
  std::vector<Action> previous_options_;
  std::vector<double> previous_enabled_at_;
  std::vector<double> enabled_at_;
  std::size_t picked_ = 0;
  double picked_start_us_ = 0;
  double picked_end_us_ = 0;
  double last_end_us_ = 0;
  bool keep_timing_ = false;  ///< the run ended, not at its step cap
};

/// The strategy table's "timed": its parameters (the cost model's) and its factory.
std::span<const StrategyParam> timed_params();
std::unique_ptr<Strategy> make_timed_strategy(const StrategySetup& setup);

}  // namespace amaxcheck::sched
