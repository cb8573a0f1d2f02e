#pragma once
/// The semantics engine: the simulated GPU/NCCL execution model and the oracle of amaxcheck.
///
/// Given a Scenario, the engine holds the run state (host program counters, stream queues,
/// events, communicator rendezvous, buffer values, vector clocks). It answers which actions
/// are enabled and applies one at a time. It never chooses: a scheduler (sim/) picks.
///
/// Semantics (see shared/DESIGN.md section 3):
/// - streams are FIFOs; an op runs after the previous op of its stream completed;
/// - stream_wait_event / work_wait capture the event's latest record at issue time;
/// - host-blocking ops return only when their stream / event / device has drained;
/// - the k-th collective a rank issues on a communicator matches the k-th of every member; a
///   collective occupies its stream until every member joined, then completes atomically;
/// - a collective joins only after the rank's previous collective on the same communicator
///   completed (NCCL's implicit edge, in host issue order, across streams);
/// - under KernelConcurrency::serialized, a collective joins only after every collective its
///   rank issued earlier (on any communicator) completed;
/// - a rendezvous whose members disagree on kind, count, dtype, op or root never completes
///   (NCCL's behaviour is undefined; a hang is the usual outcome) and is reported;
/// - send / recv (ncclSend / ncclRecv): the k-th send from member a to member b matches the
///   k-th recv at b from a; each side joins (in the communicator's issue order, like a
///   collective) and the pair completes, in one `complete` of the communicator, once both have
///   joined and agree on count and dtype; neither side's stream moves on before that. A group
///   (ncclGroupStart / End: consecutive p2p ops of one thread with one `group`) joins as one
///   launch once all of it is queued, so a group that sends and receives does not deadlock
///   where the same ops ungrouped do.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/action.h"
#include "engine/observer.h"
#include "engine/wait_reason.h"
#include "model/scenario.h"

namespace amaxcheck {

/// Deliberately planted bugs, so the test suites can prove they would notice them.
enum class Mutant : std::uint8_t {
  none,
  complete_without_all_members,  ///< a collective completes once any member joined
  ignore_event_waits,            ///< stream_wait_event / work_wait do nothing
  drop_comm_ordering,            ///< no implicit edge between ops of one communicator
  skip_finite_check,             ///< scale update uses a zero / inf / NaN amax
};

/// Mutant names, as trace headers write them (`engine.mutant`).
template <>
struct EnumNames<Mutant> {
  static constexpr std::array table{
      EnumName<Mutant>{Mutant::none, "none"},
      EnumName<Mutant>{Mutant::complete_without_all_members, "complete_without_all_members"},
      EnumName<Mutant>{Mutant::ignore_event_waits, "ignore_event_waits"},
      EnumName<Mutant>{Mutant::drop_comm_ordering, "drop_comm_ordering"},
      EnumName<Mutant>{Mutant::skip_finite_check, "skip_finite_check"},
  };
};

/// The parts of a Step that cost work to build, and which readers need them. Observers see
/// the same events whatever is asked for; only the returned Step gets thinner.
struct StepDetail {
  bool names = true;    ///< op_name and lane: traces, exports, replay's step check
  bool written = true;  ///< written: traces, replay's value check
  bool touches = true;  ///< touches: partial-order reduction (exhaustive search)
  /// index, action, op, collective, comm and seq. Off only for a reader of no Step at all (a
  /// random or PCT run): with everything else off too, and no mutant, the engine applies each
  /// step in its lean form, which leaves the Step untouched (issue 19).
  bool fields = true;

  /// Whether a Step with this detail holds anything at all.
  bool any() const { return names || written || touches || fields; }
};

struct EngineOptions {
  Mutant mutant = Mutant::none;
  /// Record the values each step writes in its Step, when the write is at most this many
  /// elements (for traces).
  std::size_t record_values_up_to = 16;
  /// What apply() puts in each Step. Exploration runs that keep no steps turn most of it off.
  StepDetail step_detail{};
};

/// Values written by one step to one range of one rank.
struct WrittenValues {
  RankId rank = 0;
  Range range;
  std::vector<float> values;
};

/// The record of one applied action: what a trace line holds.
struct Step {
  std::size_t index = 0;
  Action action;
  OpRef op;               ///< complete: the op of the first member
  std::string op_name;    ///< empty unless StepDetail::names
  std::string lane;       ///< "thread main" / "stream compute" / "comm dp"; empty unless StepDetail::names
  bool collective = false;
  CommId comm = 0;
  std::uint64_t seq = 0;  ///< collectives: index on the communicator
  std::vector<WrittenValues> written;  ///< empty unless StepDetail::written
  std::vector<Touch> touches;          ///< empty unless StepDetail::touches
};

/// Something that cannot progress, for deadlock reports.
struct Stuck {
  RankId rank = 0;
  std::string lane;            ///< "thread main" / "stream grad"
  std::uint64_t lane_key = 0;  ///< actor key of the lane (matches waits_on entries)
  OpRef op;
  std::string op_name;
  std::string origin;
  std::string waiting_for;     ///< human-readable reason
  std::vector<std::uint64_t> waits_on;  ///< actor keys of the lanes it waits for
  std::vector<RankId> missing_ranks;    ///< collectives: members that never issued it
  /// Collectives: what else keeps it from completing: members that issued it but whose stream
  /// is blocked behind an earlier op ("rank 1 issued it (amax_reduce) but its stream nccl is
  /// blocked behind grad_bucket_0"), or members that joined it with mismatched ops.
  std::vector<std::string> blocked;
  std::string awaited;  ///< collectives: "collective #N on comm C (NAME)", what the two lists refer to
  std::vector<WaitReason> reasons;  ///< what waiting_for says, as kinds and ranks (wait_reason.h)
};

/// What Engine::run_steps asks for each step's action: a scheduler's choice, which the engine
/// never makes itself (the scheduler's Strategy is one).
class ActionPicker {
 public:
  /// Returned by pick_action() to end run_steps before its step.
  static constexpr std::size_t stop = static_cast<std::size_t>(-1);
  /// The index of the action to apply among `enabled` (never empty), or `stop`.
  virtual std::size_t pick_action(std::span<const Action> enabled) = 0;

 protected:
  ~ActionPicker() = default;
};

class Engine {
 public:
  explicit Engine(const Scenario& scenario, EngineOptions options = {});
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  void add_observer(Observer* observer);
  /// Starts over: the state of a new Engine(scenario(), options), without its observers,
  /// reusing the memory of this one's (runs of one scenario, one after another, pay for their
  /// set-up once). Every run from a reset engine is the run a new engine would make.
  void reset(EngineOptions options);

  /// Enabled actions in a canonical order (ranks, then threads, streams, comms). Inline: a run's
  /// loop asks every step, and after the first the list is kept up to date by each step.
  const std::vector<Action>& enabled() const { return enabled_ ? *enabled_ : build_enabled(); }
  /// Applies an enabled action; throws InternalError if it is not enabled. `action` may be an
  /// element of enabled() (it is copied before the list changes).
  Step apply(const Action& action);
  /// Applies enabled()[index]; throws InternalError if there is no such action. For a caller
  /// that chose from enabled() (a run's loop): the action is enabled by construction, so the
  /// step skips apply()'s search for it.
  Step apply_enabled(std::size_t index);
  /// The same, recording the step in the engine's own Step instead of a new one: reused from
  /// step to step, so its strings and lists keep their memory (a run that keeps no steps
  /// builds and frees none). Valid until the next step or reset(). Where the options ask nothing
  /// of a Step (StepDetail::any() false) and plant no mutant, the step takes its lean form and
  /// the Step holds nothing of it.
  const Step& step_enabled(std::size_t index);
  /// Steps taken by run_steps, and whether its picker stopped it.
  struct StepsTaken {
    std::size_t steps = 0;
    bool stopped = false;
  };
  /// step_enabled(picker.pick_action(enabled())) until `max_steps` steps were taken, nothing is
  /// enabled, or the picker returns ActionPicker::stop, for a run that reads no Step: each step's
  /// Step is dropped. One loop in the engine instead of a call per step from the scheduler's: a call's
  /// register saves and checks were about 5% of a random run's instructions (issue 19).
  StepsTaken run_steps(ActionPicker& picker, std::size_t max_steps);
  /// Tells observers the run ended. Call once, when enabled() is empty.
  void finish();

  /// True when every program finished and every stream drained.
  bool done() const;
  /// When nothing is enabled but work remains: what is blocked, and on what.
  std::vector<Stuck> stuck() const;

  /// The op `action` would run if applied now: the thread's next op (issue), the stream's head
  /// (execute, join), the first member's op of the collective the communicator completes next
  /// (complete, the op Step::op names); nullptr when there is none. For strategies that price
  /// actions (timed) without keeping a copy of the engine's queues.
  const Op* pending_op(const Action& action) const;
  /// The members' ops of the collective communicator `comm` completes next, by member index
  /// (only those that joined).
  std::vector<OpRef> joined_members(CommId comm) const;
  /// What the last apply() recomputed of enabled(): the ranks whose actions it refreshed and
  /// the communicator whose completion it rechecked (none after an issue or execute). Every
  /// other action of enabled() is the one it was before that step (enabledness depends only
  /// on the acting rank's own state and the rendezvous), so a strategy that keeps per-action
  /// state (timed) need not rescan the whole list. Empty before the first step.
  struct Refreshed {
    std::span<const RankId> ranks;
    std::optional<CommId> comm;
  };
  Refreshed last_refreshed() const;

  std::size_t steps() const;
  const Scenario& scenario() const;
  /// Current contents of a rank's buffer range.
  std::vector<float> read(RankId rank, const Range& range) const;
  /// The same contents without a copy: valid until the next apply() or reset() (detectors
  /// compare final values with it at the end of a run).
  std::span<const float> view(RankId rank, const Range& range) const;
  /// Human-readable name of an action's lane: "thread main", "stream compute", "comm dp".
  /// Built once per engine, so the reference lives as long as the engine.
  const std::string& lane_name(const Action& action) const;
  /// The actor id (vector clock component) of a rank's thread or stream.
  ActorId thread_actor(RankId rank, ThreadId thread) const;
  ActorId stream_actor(RankId rank, StreamId stream) const;
  std::size_t actor_count() const;

  /// Opaque run state, defined in engine_state.h for the engine's own source files.
  struct State;

 private:
  /// apply(), apply_enabled() and step_enabled() after their checks: applies `action`, which is
  /// enabled, recording it in `step` (as a new Step has it). `Full` false: the lean form, which
  /// records nothing in `step` (step_enabled, when State::lean).
  template <bool Full>
  [[gnu::always_inline]] void apply_checked(const Action& action, Step& step);

  /// The first enabled() of a run (after construction or reset()): builds the list.
  const std::vector<Action>& build_enabled() const;

  std::unique_ptr<State> state_;
  /// The enabled list once built (State::enabled), kept up to date by every step; null until the
  /// first enabled() of a run.
  mutable const std::vector<Action>* enabled_ = nullptr;
};

/// Runs `engine` to the end, always picking the first enabled action (for tests).
std::vector<Step> run_first_enabled(Engine& engine);

}  // namespace amaxcheck
