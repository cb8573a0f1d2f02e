#pragma once
/// Internal run state of the Engine (not part of the public API).

#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "engine/buffer_values.h"
#include "engine/engine.h"
#include "engine/fifo.h"
#include "engine/per_rank.h"
#include "engine/vector_clock.h"

namespace amaxcheck {

/// One cudaEventRecord: completes when its stream reaches it.
struct RecordState {
  std::uint64_t op_key = 0;  ///< the record op's object key (ObjectType::queued_op)
  bool done = false;
  RankId rank = 0;
  StreamId stream = 0;
  VectorClock clock;  ///< the recording stream's clock when it completed
};

/// A device op waiting in (or at the head of) a stream.
struct QueuedOp {
  QueuedOp() = default;
  /// A newly issued op, built in its slot: the issue sets the rest as the op's kind needs.
  QueuedOp(const OpRef& issued, std::uint32_t issued_number, const Op* issued_op, std::uint32_t version, Epoch epoch)
      : ref(issued), number(issued_number), op(issued_op), issue_version(version), issue_epoch(epoch) {}

  OpRef ref;
  std::uint32_t number = 0;  ///< the op's OpSite::number: its OpPlan, its access test
  const Op* op = nullptr;
  /// The issuing thread's clock at issue, as the thread's clock version then and the op's own
  /// epoch (ThreadState::versions): a copy of the clock was most of what queuing an op cost.
  std::uint32_t issue_version = 0;
  Epoch issue_epoch = 0;
  RecordState* record = nullptr;              ///< event_record: its record; waits: the awaited one (in State::records)
  std::uint64_t seq = 0;                      ///< collectives: index on op->comm for this rank; p2p: pair index
  std::uint64_t order = 0;  ///< comm ops (collective or p2p): index among this rank's ops on op->comm
  bool joined = false;
  bool done = false;        ///< p2p: its pair completed (a grouped op leaves its stream once the ops ahead did)
};
// One cache line: every issue writes one and every execute reads one. Plain data, so a pop
// leaves its slot as it is (Fifo::pop_front).
static_assert(sizeof(QueuedOp) == 64 && std::is_trivially_destructible_v<QueuedOp>);

struct ThreadState {
  std::uint32_t pc = 0;
  ActorId actor = 0;
  VectorClock clock;
  /// The thread's clock after each of this run's host ops so far, versions[0] the run's start
  /// (the root), versions[version] the latest. Between two host ops the clock moves only by the
  /// thread's own ticks, so the clock an op was issued with is its version's, with the op's own
  /// epoch (QueuedOp::issue_version, issue_epoch). Sized once, for every host op of the thread's
  /// program: a run overwrites the slots, and never moves them.
  std::vector<VectorClock> versions;
  std::uint32_t version = 0;
  /// The ops of a send/recv group issued so far, held here until its last op is issued: NCCL
  /// launches a group at ncclGroupEnd, so nothing of it reaches the stream before then, and an
  /// op another thread puts on the stream in between runs before the whole group, not inside it.
  std::vector<QueuedOp> held;
};

struct StreamState {
  ActorId actor = 0;
  Fifo<QueuedOp> queue;
  VectorClock clock;
  /// Per thread of the rank: the latest of its clock versions this stream's clock has joined
  /// (ThreadState::versions). Ops a thread issues run in issue order, so most find theirs
  /// joined already, and join only their own epoch.
  std::vector<std::uint32_t> joined_versions;
  /// Its lane's bit (State::LaneBits; beyond 64 lanes some bit, unread), and the threads that
  /// host-synchronize on it (stream_synchronize on it, or device_synchronize), a bit per thread
  /// (threads beyond 64 share the top bit, which only makes Touch::disables more often true):
  /// the lanes its steps may change.
  std::uint64_t lane_bit = 0;
  std::uint64_t syncers = 0;
};

/// One rank's counts on one communicator. One struct, not a list per count: a rank's lists are
/// most of what building an engine allocates.
struct RankCommState {
  std::uint64_t issued = 0;      ///< collectives issued
  std::uint64_t completed = 0;   ///< collectives completed
  std::uint64_t ops_issued = 0;  ///< collectives and p2p ops issued
  std::uint64_t ops_done = 0;    ///< collectives and p2p ops completed
  VectorClock last_clock;        ///< clock after the last completion; empty before it
};

struct RankState {
  std::vector<ThreadState> threads;
  std::vector<StreamState> streams;
  std::vector<RecordState*> latest_record;  ///< per event (in State::records); null = never recorded
  /// Per host flag, per signal so far: the signalling thread's clock joined with the entry
  /// before it, so entry i covers the first i + 1 signals (what a wait for i + 1 joins).
  std::vector<std::vector<VectorClock>> flag_signals;
  BufferValues buffers;
  /// Per communicator of the scenario (indexed by CommId, whether or not the rank is a member).
  std::vector<RankCommState> per_comm;
  /// Comm ops (collectives and p2p) in launch order, as (comm, order).
  Fifo<std::pair<CommId, std::uint64_t>> uncompleted;
  /// p2p ops issued, per (comm, peer rank, is a send): the next op's pair index.
  std::map<std::tuple<CommId, RankId, bool>, std::uint64_t> p2p_issued;
};

/// One member's part of a rendezvous.
struct Joined {
  RankId rank = 0;
  StreamId stream = 0;
  OpRef ref;
  const Op* op = nullptr;
  VectorClock clock;
  std::uint64_t order = 0;  ///< the op's index among the rank's ops on the communicator
  bool grouped = false;     ///< p2p: joined with other ops of its ncclGroup (its access is at its completion)
  std::size_t joined_at = 0;  ///< p2p: the step of its join (complete_p2p_pair's Touch::needs)
};

struct Rendezvous {
  std::vector<std::optional<Joined>> members;  ///< by member index
  std::size_t joined = 0;
};

/// A send / recv pair: the k-th send from `sender` to `receiver` and the k-th recv there from it.
struct P2pKey {
  RankId sender = 0;
  RankId receiver = 0;
  std::uint64_t index = 0;
  friend auto operator<=>(const P2pKey&, const P2pKey&) = default;
};

struct P2pPair {
  std::optional<Joined> send, recv;
};

struct CommState {
  using PendingMap = std::map<std::uint64_t, Rendezvous>;
  std::uint64_t next_seq = 0;  ///< the sequence number of the next collective to complete
  PendingMap pending;
  std::map<P2pKey, P2pPair> p2p;  ///< pairs with at least one side started
  /// Rendezvous of completed collectives (map node and member slots, emptied), reused by the
  /// next collectives' first joins: an engine allocates them once, not once per collective.
  std::vector<PendingMap::node_type> spare;

  /// The rendezvous of collective `seq`, started with `members` empty slots at its first join.
  Rendezvous& rendezvous(std::uint64_t seq, std::size_t members);
  /// Keeps a completed collective's node (extracted from `pending`) for a later one.
  void recycle(PendingMap::node_type node);
  /// Back to a new run's state, keeping the nodes of every pending rendezvous as spares.
  void reset();
};

/// The pair a complete on `comm` finishes next: the first (in P2pKey order) whose two sides
/// started and agree; null when none.
const std::pair<const P2pKey, P2pPair>* ready_pair(const CommState& comm);
/// Whether a complete on `comm` now finishes a collective (else it finishes ready_pair()).
bool completes_collective(const Engine::State& st, CommId comm);
/// Ops in the ncclGroup that starts at `first` (1 when it is not grouped), from the program.
std::size_t p2p_group_size(const Scenario& s, const OpRef& first);
/// Ops of the head's group queued, contiguous, at the head of `queue` (1 when not grouped).
std::size_t queued_group_size(const Fifo<QueuedOp>& queue);

/// One lane of a rank (threads first, then streams) as the enabled-set upkeep reads it, found
/// once when the engine is built: a step's refresh (and an issue) then reads a row of this table
/// instead of walking the scenario's and the rank's nested tables to the lane's program or queue.
struct LaneRef {
  ThreadState* thread = nullptr;         ///< a thread lane's state; null for a stream lane
  const Op* program = nullptr;           ///< a thread lane's program
  std::uint32_t program_size = 0;
  std::uint32_t stream = 0;              ///< a stream lane's stream id
  const Fifo<QueuedOp>* queue = nullptr; ///< a stream lane's queue
  std::uint32_t first_number = 0;        ///< a thread lane's first op's OpSite::number
};

/// What the steps of one op would otherwise look up each time, found once when the engine is
/// built (op_plans.cpp): a step then reads a row of State::op_plans instead of walking the
/// rank's tables to the op's stream, lane bit and synchronizing threads, or its buffers.
struct OpPlan {
  /// A device op's stream: its queue, its lane's bit (State::LaneBits) and the threads that
  /// synchronize on it (StreamState::syncers). Null and zero for a host op.
  Fifo<QueuedOp>* queue = nullptr;
  std::uint64_t stream_bit = 0;
  std::uint64_t stream_syncers = 0;
  /// The thread's next op exists and is a device op (Applier::kept after this op's issue).
  bool next_is_device = false;
  /// A send or recv of a group whose next op is of the same group: its issue holds it on the
  /// thread (ThreadState::held), and the group's last issue (`ends_group`) queues them all.
  bool held_for_group = false;
  bool ends_group = false;
  /// A kernel whose ranges lie in its rank's buffers and are as many as it indexes: its views,
  /// reads then writes, are State::kernel_views from `first_view` on. Any other kernel runs
  /// through the checked path (run_kernel over the buffers), which reports the bad range when
  /// the kernel runs, as it did before there were plans.
  bool has_views = false;
  std::uint32_t first_view = 0;
};

/// A kernel's buffer ranges as views of its rank's buffers (OpPlan).
struct KernelViews {
  std::span<const std::span<float>> reads, writes;
};

struct Engine::State {
  const Scenario& scenario;
  EngineOptions options;
  /// step_enabled applies each step in its lean form (engine_apply.cpp): the options ask
  /// nothing of the Step and plant no mutant. Follows `options`.
  bool lean = false;
  static bool lean_for(const EngineOptions& o) { return !o.step_detail.any() && o.mutant == Mutant::none; }
  std::vector<Observer*> observers;  ///< every one, in the order added (on_finish)
  /// Those that handle each per-step event (Observer::events), in the same order. An issue of a
  /// communicator op goes to comm_issue_observers, any other issue to issue_observers (those
  /// without Events::comm_issues_only).
  std::vector<Observer*> issue_observers, comm_issue_observers, access_observers, complete_observers;
  /// Per access observer: the ops whose accesses it watches (Observer::Events::access_ops); null
  /// for every op. `watched_accesses` joins them: an access of an op outside it builds no event.
  std::vector<const OpSet*> access_ops;
  OpSet watched_accesses;
  std::vector<RankState> ranks;
  /// The event records of the run, one per event_record op issued: the first `records_issued`.
  /// Made at construction, one for every such op of the scenario (each is issued at most once a
  /// run), so the pointers queued ops and latest_record hold stay valid all run, and a run
  /// allocates no record of its own. An issue sets a record's fields but its clock, which keeps
  /// the last run's value until the record's execute sets it: nothing reads the clock of a
  /// record that is not done, and zeroing it at every issue was a tenth of a record's issue.
  std::vector<RecordState> records;
  std::size_t records_issued = 0;
  std::vector<CommState> comms;
  std::vector<ActorId> actor_base;  ///< per rank: first actor id (threads, then streams)
  PerRank<std::uint32_t> op_base;  ///< per rank, per thread: first op's ordinal on the rank
  PerRank<std::uint32_t> op_number;  ///< per rank, per thread: first op's OpSite::number
  /// Per rank: which threads host-synchronize on each event, as a bit per thread (threads beyond
  /// 64 share the top bit, which only makes Touch::disables more often true). A stream's are its
  /// own (StreamState::syncers).
  PerRank<std::uint64_t> event_syncers;
  /// Per rank, per event: the stream lanes (State::LaneBits; none beyond 64 lanes, where they go
  /// unread) whose stream holds a wait on the event: the streams a record of it can release.
  PerRank<std::uint64_t> event_waiters;
  std::size_t actor_count = 0;
  std::size_t step = 0;
  /// Enabled actions in canonical order, kept up to date step by step (refresh_rank /
  /// refresh_comm) so a step costs what it touches, not the size of the world.
  mutable std::vector<Action> enabled;
  mutable bool enabled_valid = false;  ///< false until the first full computation
  /// refresh_rank's scratch list: one slot per lane of the rank with the most, sized once.
  std::vector<Action> fresh;
  /// Per rank, the lanes (threads, then streams: bit t, bit threads + k) whose action is in
  /// `enabled`, and which of those are joins. A step re-asks only the lanes it could change and
  /// touches the list only when their bits moved. Kept when every rank has at most 64 lanes
  /// (lane_bits_ok); otherwise refresh_rank recomputes the acting rank's whole block.
  struct LaneBits {
    std::uint64_t enabled = 0, join = 0;
  };
  std::vector<LaneBits> lane_bits;
  bool lane_bits_ok = false;
  /// Per rank, per lane: where its thread and program, or its queue, are (LaneRef). Points into
  /// `ranks` and the scenario, neither of which changes shape after construction.
  PerRank<LaneRef> lane_refs;
  /// Per op, by OpSite::number (OpPlan), and the kernels' views of their buffers, which keep
  /// their places: a buffer is sized once, when the engine is built, and reset() rewrites it in
  /// place.
  std::vector<OpPlan> op_plans;
  std::vector<std::span<float>> kernel_views;
  /// The last apply()'s refresh (Engine::last_refreshed): one acting rank, or a completed
  /// collective's members (refreshed_members), and the communicator rechecked.
  RankId refreshed_rank = 0;
  const std::vector<RankId>* refreshed_members = nullptr;
  bool refreshed_any = false;
  std::optional<CommId> refreshed_comm;
  /// Lane names ("thread main", "stream compute", "comm dp"), built once: every issue, execute
  /// and join names its lane for the observers.
  PerRank<std::string> thread_lanes;  ///< per rank, per thread
  PerRank<std::string> stream_lanes;  ///< per rank, per stream
  std::vector<std::string> comm_lanes;                 ///< per communicator
  bool finished = false;
  /// Engine::step_enabled's Step, reused from step to step.
  Step scratch_step;
  /// The all-zero clock every thread and stream starts from (copies share its base).
  VectorClock root;
  /// A collective completion's members and their clocks (Applier::complete), reused.
  std::vector<const Joined*> completing;
  std::vector<const VectorClock*> completing_clocks;
  /// A completion's ops by OpSite::number, for CompleteEvent::ops (Applier::notify_complete), reused.
  std::vector<std::uint32_t> completed_ops;

  State(const Scenario& s, EngineOptions o);
  /// Back to the state the constructor left, keeping what it allocated (Engine::reset).
  void reset(EngineOptions o);
};

/// Every lane of a rank, for refresh_rank.
inline constexpr std::uint64_t all_lanes = ~std::uint64_t{0};
/// The bits of every lane below `count` (all 64 for 64 and more).
inline constexpr std::uint64_t lanes_below(std::size_t count) { return count < 64 ? (std::uint64_t{1} << count) - 1 : all_lanes; }
/// Brings the enabled actions of one rank up to date after a step that can only have changed
/// `lanes` of it (bits as in State::LaneBits, only of lanes the rank has, or all_lanes; the
/// others must be as they were) / rechecks one communicator's rendezvous (enabled_set.cpp).
void refresh_rank(Engine::State& st, RankId rank, std::uint64_t lanes = all_lanes);
void refresh_comm(Engine::State& st, CommId comm);
/// Whether `action` is in the (valid) enabled list: a scan of a short list, a binary search in
/// its canonical order of a long one, so a step's check never costs a pass over the world's.
bool in_enabled(const Engine::State& st, const Action& action);
/// Whether a complete on communicator `c` is enabled (engine.cpp). The lanes' conditions (a host
/// op's, a comm op at a stream's head joining, a stream head running) are enabled_set.cpp's own.
bool rendezvous_ready(const Engine::State& st, CommId c);

/// Object keys for partial-order reduction footprints (Step::touches). The dependence relation
/// they induce, and why each case is exact, is written down in sim/scheduler/dependence.h.
/// - thread:      a host thread's program counter and clock (its own issues);
/// - stream:      a stream's head and clock (execute, join, complete pop or advance it; host
///                synchronization reads it);
/// - stream_tail: a stream's tail (issue appends there; host synchronization reads it, since a
///                queued op makes the stream busy);
/// - queued_op:   one op of a rank (index: its ordinal on the rank), queued by its issue and
///                consumed by its execute / join / complete; an event record's completion
///                state and clock live here too;
/// - event:       which record an event names last (issue of a record writes it, issue of a
///                wait and event synchronization read it);
/// - flag:        a host flag's signals;
/// - comm_issue:  a rank's count of collectives issued on a communicator (sequence numbers);
/// - comm_done:   a rank's count of collectives completed on a communicator and the clock of
///                the last one (join reads both);
/// - rendezvous:  one member's slot in a communicator's pending rendezvous (rank: the member);
/// - launch_tail: a rank's collective launch order, appended by collective issues;
/// - launch_head: the same list's completions (complete removes; a join reads its front under
///                serialized kernels);
/// - buffer:      one buffer of a rank (kernels, joins and completes read and write them).
enum class ObjectType : std::uint64_t {
  thread = 1,
  stream,
  event,
  flag,
  comm_issue,
  rendezvous,
  launch_tail,
  buffer,
  stream_tail,
  queued_op,
  comm_done,
  launch_head,
};
std::uint64_t object_key(ObjectType type, std::uint32_t rank, std::uint32_t index);

/// Fills State::op_plans and kernel_views (op_plans.cpp), once the rest of the state is built.
void build_op_plans(Engine::State& st);

/// Whether `op` is a kernel with at least the ranges run_kernel indexes (copy: a write for every
/// read), so that views of them can be found before it runs (OpPlan).
bool kernel_has_its_ranges(const Op& op);
/// Runs a kernel / copy / scale update on views of its ranges (from its OpPlan).
void run_kernel(const Op& op, const KernelViews& views, Mutant mutant);
/// The same on one rank's buffers, each range checked as it is viewed (a kernel without views).
void run_kernel(const Op& op, BufferValues& buffers, Mutant mutant);

/// Computes and writes the outputs of a completed collective on every joined member.
void complete_collective(const std::vector<const Joined*>& members, std::vector<RankState>& ranks);
/// Copies a completed send's data into its recv's range.
void complete_p2p(const P2pPair& pair, std::vector<RankState>& ranks);

}  // namespace amaxcheck
