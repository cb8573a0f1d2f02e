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
/// Bookkeeping is per actor, in flat arrays indexed by a dense actor number: an actor has at
/// most one enabled action at a time (a thread's next issue, a stream's head op, a
/// communicator's pending completion), so an action's start and end are priced once, when it
/// is first seen enabled, and kept while it stays enabled (its lane cannot change meanwhile:
/// only its own step moves it). After the first pick, only the actions of the ranks and the
/// communicator the engine refreshed (Engine::last_refreshed) are looked at, found in the
/// canonically ordered options by binary search; the priced actions sit in a min-heap by
/// (end, canonical order), stale entries dropped as they surface. A step then costs
/// O(touched log n), not O(enabled).
///
/// Contention: a completion priced while other collectives run on one of its ranks shares the
/// bandwidth with them while both transfer: its transfer takes longer by the others' transfer
/// time left (at most its own), so a tiny collective beside a large one costs the large one
/// next to nothing and is itself slowed by its own transfer (CostModel's header). Each rank
/// keeps the collectives priced on it that have not ended yet.
///
/// Topology: a rank's node follows from the device indices (Rank::device is the local rank:
/// a device index that does not grow starts a new node), so `--ranks-per-node` places ranks.
///
/// The result is a TimedRun: each op's issue interval and execution interval (for a
/// collective: from its member's join to the collective's completion) and each rank's
/// iteration time (the end of its last step). Cost metrics (exposed amax latency, queueing
/// behind gradient buckets) are derived from these by the callers, by op name.
///
/// As an exploration's strategy (the table's "timed"; its parameters are the cost model's:
/// --launch-us, --kernel-us, --topology, --channels, --collective-algo, --comm-init, and the
/// flat model's --alpha-us, --bus-gbps) it runs once and reports its TimedRun.

#include <cstdint>
#include <memory>
#include <queue>
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
  std::vector<std::uint32_t> rank_node;  ///< per rank: its node (from the device indices)
  CostModel cost;                    ///< the model the run was priced with (its figures read it)
  /// The run reached its end. A run that got stuck (a deadlock, a collective some member never
  /// joins) keeps its times for its trace's timeline, but they are no iteration's cost.
  bool finished = false;
};

/// Node of each rank: a device index that does not grow past the previous rank's starts a node.
std::vector<std::uint32_t> nodes_of_ranks(const Scenario& scenario);

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
  /// One actor's state: its lane's free time and, while its action stays enabled, that
  /// action's price.
  struct ActorState {
    double lane_free_us = 0;
    bool enabled = false;          ///< its action is among the options
    std::uint32_t generation = 0;  ///< bumped whenever its heap entry goes stale
    std::uint64_t touched = 0;     ///< the refresh that last saw it enabled
    Action action;
    double start_us = 0;
    double end_us = 0;
  };
  struct Candidate {
    double end_us = 0;
    std::uint64_t order = 0;  ///< canonical_order(action): ties go to the earlier option
    std::uint32_t actor = 0;
    std::uint32_t generation = 0;
    bool operator>(const Candidate& o) const { return end_us != o.end_us ? end_us > o.end_us : order > o.order; }
  };
  struct Running {
    double end_us = 0;
    double transfer_us = 0;  ///< its transfer at the full bandwidth (the tail of its interval)
    CommId comm = 0;
  };

  const Op& op_at(const OpRef& ref) const;
  std::size_t actor_index(const Action& action) const;
  void price(ActorState& actor, const Action& action);
  /// Re-prices the options in [lo, hi) whose actor is new or changed; `actors` [first, last) are
  /// those the block covers (the ones not offered any more are dropped).
  void refresh_block(std::span<const Action> block, std::size_t first, std::size_t last);
  void offer(std::size_t index, const Action& action);
  double complete_us(const Action& action, double start);
  OpTiming& timing_of(const OpRef& ref);

  const Scenario& scenario_;
  CostModel cost_;
  const Engine* engine_ = nullptr;
  TimedRun run_;
  std::vector<std::vector<std::vector<std::int64_t>>> timing_index_;  ///< [rank][thread][op]
  std::vector<std::size_t> thread_base_, stream_base_;  ///< dense actor numbers, per rank
  std::size_t comm_base_ = 0;
  std::vector<ActorState> actors_;
  std::vector<std::size_t> comm_nodes_;           ///< per comm: nodes its members span
  std::vector<std::vector<Running>> running_;     ///< per rank: collectives priced, not yet ended
  std::vector<OpRef> picked_members_;  ///< a picked complete: the members' ops it finishes
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap_;
  std::uint64_t refreshes_ = 0;
  bool primed_ = false;  ///< the first pick scanned every option
  std::size_t picked_actor_ = ~std::size_t{0};
  double picked_start_us_ = 0;
  double picked_end_us_ = 0;
  double last_end_us_ = 0;
  bool keep_timing_ = false;  ///< the run ended, not at its step cap
};

/// The strategy table's "timed": its parameters (the cost model's) and its factory.
std::span<const StrategyParam> timed_params();
std::unique_ptr<Strategy> make_timed_strategy(const StrategySetup& setup);

}  // namespace amaxcheck::sched
