// The effect of each action on the run state, the observers and the step record.
#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "engine/engine.h"
#include "engine/engine_state.h"
#include "util/check.h"

namespace amaxcheck {
namespace {

/// `Full`: the step records what the options' StepDetail asks, and the options may plant a
/// mutant. The lean instance (Full false) serves runs that read no Step and plant no mutant
/// (Engine::State::lean: random and PCT exploration): every record of the step and every mutant
/// test is left out when it is compiled, where the full instance tests a flag for each (issue 19).
template <bool Full>
struct Applier {
  Engine& engine;
  Engine::State& st;
  Step& step;
  /// The acting rank's lanes whose action this step may have changed (State::LaneBits): its
  /// own; a stream whose head it changed, or whose comm head's group it grew; the threads that
  /// synchronize on a stream it filled or drained, or on an event it recorded; the streams that
  /// may wait on a record it completed. refresh_rank re-asks only these; a completion refreshes
  /// its members whole.
  std::uint64_t lanes = 0;
  /// Set when the step left every lane of the acting rank as it was (only_lane, below): its
  /// refresh is skipped. The engine model property test compares the enabled list with a plain
  /// model after every step, so a case wrongly taken here fails it, and
  /// tests/engine/kept_lanes_test.cpp pins the cases next to these.
  bool kept = false;

  bool touches() const { return Full && st.options.step_detail.touches; }
  bool names() const { return Full && st.options.step_detail.names; }
  bool written() const { return Full && st.options.step_detail.written; }
  Mutant mutant() const { return Full ? st.options.mutant : Mutant::none; }
  /// The Step's fields of an op's step, of a communicator op's: only in the full instance.
  void record_op(const OpRef& ref) {
    if constexpr (Full) step.op = ref;
  }
  void record_comm(CommId comm, std::uint64_t seq) {
    if constexpr (Full) {
      step.collective = true;
      step.comm = comm;
      step.seq = seq;
    }
  }
  /// A join's communicator, for the engine to recheck its rendezvous after the step.
  CommId joined_comm = 0;

  /// The bit of one lane. Beyond 64 lanes it is some other lane's: `lanes` then goes unread
  /// (refresh_rank re-asks the whole rank where lane_bits_ok is false, and only_lane is false).
  static std::uint64_t lane_bit(std::size_t lane) { return std::uint64_t{1} << (lane & 63); }
  /// Whether a step whose only changed lane is `lane` (lanes holds that bit alone) left it with
  /// the action it had. Most steps do, and a refresh that finds so costs a call and a re-ask of
  /// the lane (issue 19):
  /// - a thread that issued a device op is still enabled when its next op is a device op too
  ///   (only a host op can wait);
  /// - a stream that ran a kernel, a copy or a record still executes when its new head is an op
  ///   of the same sort (a wait waits on its record, a comm op joins).
  /// Only where lane bits are kept (lane_bits_ok): beyond 64 lanes `lanes` cannot name them all.
  bool only_lane(std::uint64_t lane) const { return st.lane_bits_ok && lanes == lane && lane != 0; }
  static bool runs_when_at_head(OpKind kind) {
    return !is_comm_op(kind) && kind != OpKind::stream_wait_event && kind != OpKind::work_wait;
  }
  /// Every thread lane of rank r.
  std::uint64_t thread_lanes(RankId r) const { return lanes_below(st.ranks[r].threads.size()); }

  // Touches are off in exploration runs that keep no steps: the calls below reduce to one test
  // of the flag, and the key (a call) is worked out only when it is on.
  [[gnu::noinline]] void add_touch(const Touch& touch) { step.touches.push_back(touch); }
  void touch(ObjectType type, std::uint32_t rank, std::uint32_t index, bool write, bool needs = false) {
    if (touches()) add_touch({object_key(type, rank, index), write, needs});
  }
  void touch_key(std::uint64_t key, bool write, bool needs = false) {
    if (touches()) add_touch({key, write, needs});
  }
  /// touch_key of an op's queued_op object.
  void touch_op(const OpRef& ref, bool write, bool needs = false) {
    if (touches()) add_touch({op_key(ref), write, needs});
  }
  /// Whether a thread other than `thread` of rank `r` synchronizes on one of `syncers`.
  static bool others_sync(std::uint64_t syncers, ThreadId thread) {
    return (syncers & ~(std::uint64_t{1} << std::min<ThreadId>(thread, 63))) != 0;
  }
  /// A write of object `index` that disables another thread's synchronization when one of
  /// `syncers` other than `thread` synchronizes on it (Touch::disables). Worked out only when
  /// touches are on.
  void touch_disabling(ObjectType type, RankId r, std::uint32_t index, std::uint64_t syncers, ThreadId thread) {
    if (touches()) add_touch({object_key(type, r, index), true, false, others_sync(syncers, thread)});
  }
  /// The queued_op object of one op (its ordinal on the rank).
  std::uint64_t op_key(const OpRef& ref) const {
    return object_key(ObjectType::queued_op, ref.rank, st.op_base[ref.rank][ref.thread] + ref.index);
  }
  /// Host synchronization reads a stream's head and tail: it waits for the stream to drain (the
  /// last write of its head, if any, is the step that drained it) and takes its clock.
  void touch_stream_drained(RankId r, StreamId k) {
    touch(ObjectType::stream, r, k, false, true);
    // An issue by another thread can take the drained state away again (Touch::disables).
    if (touches()) step.touches.push_back({object_key(ObjectType::stream_tail, r, k), false, false, true});
  }
  void touch_buffers(RankId r, const Op& op) {
    if (!touches()) return;
    for (const Range& range : op.reads) touch(ObjectType::buffer, r, range.buffer, false);
    for (const Range& range : op.writes) touch(ObjectType::buffer, r, range.buffer, true);
  }
  void name_op(const Op& op) {
    if (names()) step.op_name = op.name;
  }
  void record_written(RankId r, const Op& op) {
    if (!written()) return;
    for (const Range& range : op.writes) {
      if (range.count > st.options.record_values_up_to) continue;
      step.written.push_back({r, range, engine.read(r, range)});
    }
  }
  /// Engine::lane_name without its bounds checks: `a` is an action being applied, so valid.
  const std::string& lane_of(const Action& a) const {
    switch (a.kind) {
      case ActionKind::issue: return st.thread_lanes[a.rank][a.lane];
      case ActionKind::execute:
      case ActionKind::join: return st.stream_lanes[a.rank][a.lane];
      case ActionKind::complete: break;
    }
    return st.comm_lanes[a.lane];
  }
  /// An op's dense number (OpSite::number).
  std::uint32_t number_of(const OpRef& ref) const { return st.op_number[ref.rank][ref.thread] + ref.index; }
  OpSite site(const OpRef& ref, const Op* op, const std::string& lane) const { return site(ref, number_of(ref), op, lane); }
  OpSite site(const OpRef& ref, std::uint32_t number, const Op* op, const std::string& lane) const {
    return OpSite{ref, number, op, lane, st.step};
  }
  /// The access event of an op, to the observers that watch it (Observer::Events::access_ops):
  /// built only when one does. The test is inlined where an op accesses memory, the event out of
  /// line: a call's register saves were most of what an unwatched access cost.
  [[gnu::always_inline]] void notify_access(RankId r, ActorId actor, const VectorClock& clock, const QueuedOp& q,
                                            const Action& a) {
    const Op& op = *q.op;
    if (op.reads.empty() && op.writes.empty()) return;
    if (st.watched_accesses.contains(q.number)) deliver_access(r, actor, clock, q.ref, a, op, q.number);
  }
  [[gnu::noinline]] void deliver_access(RankId r, ActorId actor, const VectorClock& clock, const OpRef& ref, const Action& a,
                                        const Op& op, std::uint32_t number) {
    const AccessEvent event{site(ref, number, &op, lane_of(a)), r, actor, clock[actor], &clock, &op.reads, &op.writes};
    for (std::size_t i = 0; i < st.access_observers.size(); ++i) {
      if (st.access_ops[i] == nullptr || st.access_ops[i]->contains(number)) st.access_observers[i]->on_access(event);
    }
  }

  void issue(RankId rank_id, std::uint32_t thread_id) {
    const Action a{ActionKind::issue, rank_id, thread_id};
    RankState& rank = st.ranks[a.rank];
    const LaneRef& lane = st.lane_refs[a.rank][a.lane];  // the thread and its program, found once
    ThreadState& thread = *lane.thread;
    const OpRef ref{a.rank, a.lane, thread.pc};
    const Op& op = lane.program[thread.pc];
    const std::uint32_t number = lane.first_number + thread.pc;
    const OpPlan& plan = st.op_plans[number];
    ++thread.pc;
    const Epoch epoch = thread.clock.tick(thread.actor);
    record_op(ref);
    name_op(op);
    touch(ObjectType::thread, a.rank, a.lane, true);
    lanes |= lane_bit(a.lane);
    std::uint64_t seq = 0;
    if (is_host_op(op.kind)) {
      host_effect(a.rank, thread, op);
      thread.versions[++thread.version] = thread.clock;  // a host op may have joined a clock
      lanes |= thread_lanes(a.rank);  // a signal can release another thread's wait
    } else if (is_discarded_collective(op)) {
      // NCCL discards a zero-element collective at the call: nothing is queued or matched.
    } else if (plan.held_for_group) {
      // Not queued yet: the group's last issue queues it (ThreadState::held). Its number on the
      // communicator is its issue's, and the touches are those of a queued op's issue, so
      // whatever orders against the issue still does.
      QueuedOp& q = thread.held.emplace_back(ref, number, &op, thread.version, epoch);
      touch_disabling(ObjectType::stream_tail, a.rank, op.stream, plan.stream_syncers, a.lane);
      touch_op(ref, true);
      seq = number_comm_op(rank, q, a.rank);
    } else {
      // Built in its slot at the stream's tail, not moved there: nothing reads the queue before
      // the issue is done.
      Fifo<QueuedOp>& queue = *plan.queue;
      // Behind a head that is not a comm op, a new op changes no lane but the thread's: the head
      // stays, and a stream that was busy stays busy. A comm head's lane is refreshed as well.
      if (queue.empty() || is_comm_op(queue.front().op->kind)) lanes |= plan.stream_bit;
      if (queue.empty()) lanes |= plan.stream_syncers;  // drained no more
      if (plan.ends_group) {  // the group's ops before its last, held until now
        for (const QueuedOp& held : thread.held) queue.push_back(held);
        thread.held.clear();
      }
      QueuedOp& q = queue.emplace_back(ref, number, &op, thread.version, epoch);  // the rest as a new QueuedOp has it
      // Appending at the tail commutes with running the head; the op itself is the object
      // that orders this issue before its own execute / join (see dependence.h).
      touch_disabling(ObjectType::stream_tail, a.rank, op.stream, plan.stream_syncers, a.lane);
      touch_op(ref, true);
      if (op.kind == OpKind::event_record) {
        lanes |= st.event_syncers[a.rank][op.event];  // the event names another record now
        AMAX_CHECK(st.records_issued < st.records.size(), "more event records issued than the scenario has");
        RecordState& record = st.records[st.records_issued++];
        record.op_key = op_key(ref);
        record.done = false;
        record.rank = a.rank;
        record.stream = op.stream;
        q.record = &record;
        rank.latest_record[op.event] = q.record;
        touch_disabling(ObjectType::event, a.rank, op.event, st.event_syncers[a.rank][op.event], a.lane);
      } else if (op.kind == OpKind::stream_wait_event || op.kind == OpKind::work_wait) {
        q.record = rank.latest_record[op.event];
        touch(ObjectType::event, a.rank, op.event, false);
      } else if (is_comm_op(op.kind)) {
        seq = number_comm_op(rank, q, a.rank);
      }
    }
    if (!is_host_op(op.kind) && only_lane(lane_bit(a.lane))) kept = plan.next_is_device;
    // Most issues (kernels, copies, records) have no observer: no event is built for them.
    const std::vector<Observer*>& observers = is_comm_op(op.kind) ? st.comm_issue_observers : st.issue_observers;
    if (observers.empty()) return;
    IssueEvent event{site(ref, &op, lane_of(a)), &thread.clock, thread.actor, seq};
    for (Observer* o : observers) o->on_issue(event);
  }

  /// Numbers an issued comm op on its communicator: a collective's seq there, a send's or recv's
  /// pair index, and its place in the rank's order on the communicator and in launch order.
  /// Returns the seq.
  std::uint64_t number_comm_op(RankState& rank, QueuedOp& q, RankId r) {
    const Op& op = *q.op;
    if (is_collective(op.kind)) {
      q.seq = rank.per_comm[op.comm].issued++;
    } else {
      const RankId peer = st.scenario.comms[op.comm].members.at(op.peer);
      q.seq = rank.p2p_issued[{op.comm, peer, op.kind == OpKind::send}]++;
    }
    q.order = rank.per_comm[op.comm].ops_issued++;
    rank.uncompleted.emplace_back(op.comm, q.order);
    touch(ObjectType::comm_issue, r, op.comm, true);
    touch(ObjectType::launch_tail, r, 0, true);
    record_comm(op.comm, q.seq);
    return q.seq;
  }

  void host_effect(RankId r, ThreadState& thread, const Op& op) {
    RankState& rank = st.ranks[r];
    switch (op.kind) {
      case OpKind::stream_synchronize:
        thread.clock.join(rank.streams[op.stream].clock);
        touch_stream_drained(r, op.stream);
        break;
      case OpKind::event_synchronize:
        // A record issued by another thread can make the event pending again (Touch::disables).
        if (touches()) step.touches.push_back({object_key(ObjectType::event, r, op.event), false, false, true});
        if (const auto& rec = rank.latest_record[op.event]) {
          thread.clock.join(rec->clock);
          touch_key(rec->op_key, false, true);  // waited for the record's execute
        }
        break;
      case OpKind::device_synchronize:
        for (StreamId k = 0; k < rank.streams.size(); ++k) {
          thread.clock.join(rank.streams[k].clock);
          touch_stream_drained(r, k);
        }
        break;
      case OpKind::host_signal: {
        // Each entry joins the signals before it (see host_wait): a wait then joins one clock.
        auto& signals = rank.flag_signals[op.flag];
        signals.push_back(thread.clock);
        if (signals.size() > 1) signals.back().join(signals[signals.size() - 2]);
        touch(ObjectType::flag, r, op.flag, true);
        break;
      }
      case OpKind::host_wait:
        // A counter that reached `count` was incremented by every one of the first `count`
        // signals, from whichever threads: the wait is ordered after each of them, not only
        // after the count-th (whose thread need not have seen the others). Entry count - 1
        // joins them all (host_signal).
        if (op.count > 0) thread.clock.join(rank.flag_signals[op.flag][op.count - 1]);
        touch(ObjectType::flag, r, op.flag, false);
        break;
      default: AMAX_CHECK(false, "not a host op");
    }
  }

  /// Joins into `stream`'s clock the clock op `q`'s thread issued it with: the thread's clock
  /// version, unless the stream joined that one (or a later one) already, and the op's own epoch.
  /// Versions only grow, so the later one covers it.
  static void join_issue_clock(const RankState& rank, StreamState& stream, const QueuedOp& q) {
    const ThreadState& thread = rank.threads[q.ref.thread];
    std::uint32_t& joined = stream.joined_versions[q.ref.thread];
    if (joined < q.issue_version) {
      stream.clock.join(thread.versions[q.issue_version]);
      joined = q.issue_version;
    }
    stream.clock.advance(thread.actor, q.issue_epoch);
  }

  void execute(RankId rank_id, std::uint32_t stream_id) {
    const Action a{ActionKind::execute, rank_id, stream_id};
    RankState& rank = st.ranks[a.rank];
    StreamState& stream = rank.streams[a.lane];
    // Popped at the end, not moved out first: nothing below touches the queue.
    QueuedOp& q = stream.queue.front();
    const Op& op = *q.op;
    join_issue_clock(rank, stream, q);
    stream.clock.tick(stream.actor);
    record_op(q.ref);
    name_op(op);
    touch(ObjectType::stream, a.rank, a.lane, true);
    touch_op(q.ref, true, true);  // after its issue; for a record, this is its done flag and clock
    lanes |= stream.lane_bit;  // a new head
    switch (op.kind) {
      case OpKind::event_record:
        lanes |= st.event_waiters[a.rank][op.event] | st.event_syncers[a.rank][op.event];  // waits on it may run
        q.record->done = true;
        q.record->clock = stream.clock;
        break;
      case OpKind::stream_wait_event:
      case OpKind::work_wait:
        if (q.record && mutant() != Mutant::ignore_event_waits) stream.clock.join(q.record->clock);
        if (q.record) touch_key(q.record->op_key, false, mutant() != Mutant::ignore_event_waits);
        break;
      default:
        if (const OpPlan& plan = st.op_plans[q.number]; plan.has_views) {
          const std::span<const std::span<float>> views(st.kernel_views.data() + plan.first_view, op.reads.size() + op.writes.size());
          run_kernel(op, KernelViews{views.first(op.reads.size()), views.subspan(op.reads.size())}, mutant());
        } else {
          run_kernel(op, rank.buffers, mutant());
        }
        touch_buffers(a.rank, op);
        record_written(a.rank, op);
        notify_access(a.rank, stream.actor, stream.clock, q, a);
    }
    stream.queue.pop_front();
    if (stream.queue.empty()) {
      lanes |= stream.syncers;  // drained: syncs may return
    } else if (only_lane(stream.lane_bit)) {
      kept = runs_when_at_head(stream.queue.front().op->kind);
    }
  }

  void join(RankId rank_id, std::uint32_t stream_id) {
    const Action a{ActionKind::join, rank_id, stream_id};
    RankState& rank = st.ranks[a.rank];
    StreamState& stream = rank.streams[a.lane];
    lanes |= stream.lane_bit;  // its head has joined
    if (is_p2p(stream.queue.front().op->kind)) return join_p2p(a);
    QueuedOp& q = stream.queue.front();
    const Op& op = *q.op;
    join_issue_clock(rank, stream, q);
    if (mutant() != Mutant::drop_comm_ordering) {
      if (rank.per_comm[op.comm].ops_done > 0) stream.clock.join(rank.per_comm[op.comm].last_clock);
    }
    stream.clock.tick(stream.actor);
    q.joined = true;
    joined_comm = op.comm;
    record_op(q.ref);
    name_op(op);
    record_comm(op.comm, q.seq);
    touch(ObjectType::stream, a.rank, a.lane, true);
    touch_op(q.ref, true, true);
    // Joins after the previous collective on the communicator completed (the last write).
    touch(ObjectType::comm_done, a.rank, op.comm, false, q.seq > 0 && mutant() != Mutant::drop_comm_ordering);
    if (st.scenario.kernels == KernelConcurrency::serialized) touch(ObjectType::launch_head, a.rank, 0, false);
    // Only this member's slot: joins of one collective by different members commute.
    touch(ObjectType::rendezvous, a.rank, op.comm, true);
    touch_buffers(a.rank, op);
    const Communicator& comm = st.scenario.comms[op.comm];
    const int member = member_index(comm, a.rank);
    AMAX_CHECK(member >= 0, "a collective was issued by a rank outside its communicator");
    Rendezvous& rv = st.comms[op.comm].rendezvous(q.seq, comm.members.size());
    rv.members[static_cast<std::size_t>(member)] = Joined{a.rank, a.lane, q.ref, &op, stream.clock, q.order};
    ++rv.joined;
    notify_access(a.rank, stream.actor, stream.clock, q, a);
  }

  /// Starts the p2p op at the stream's head, with the rest of its group: each op takes its
  /// side of its pair (the k-th send from a to b, the k-th recv at b from a).
  void join_p2p(const Action& a) {
    RankState& rank = st.ranks[a.rank];
    StreamState& stream = rank.streams[a.lane];
    const std::size_t n = queued_group_size(stream.queue);
    const Op& first = *stream.queue.front().op;
    for (std::size_t i = 0; i < n; ++i) join_issue_clock(rank, stream, stream.queue[i]);
    if (mutant() != Mutant::drop_comm_ordering) {
      if (rank.per_comm[first.comm].ops_done > 0) stream.clock.join(rank.per_comm[first.comm].last_clock);
    }
    stream.clock.tick(stream.actor);
    joined_comm = first.comm;
    record_op(stream.queue.front().ref);
    name_op(first);
    record_comm(first.comm, stream.queue.front().seq);
    touch(ObjectType::stream, a.rank, a.lane, true);
    touch(ObjectType::comm_done, a.rank, first.comm, false,
          stream.queue.front().order > 0 && mutant() != Mutant::drop_comm_ordering);
    if (st.scenario.kernels == KernelConcurrency::serialized) touch(ObjectType::launch_head, a.rank, 0, false);
    touch(ObjectType::rendezvous, a.rank, first.comm, true);
    const Communicator& comm = st.scenario.comms[first.comm];
    for (std::size_t i = 0; i < n; ++i) {
      QueuedOp& q = stream.queue[i];
      const Op& op = *q.op;
      q.joined = true;
      touch_op(q.ref, true, true);
      touch_buffers(a.rank, op);
      const RankId peer = comm.members.at(op.peer);
      const bool send = op.kind == OpKind::send;
      P2pPair& pair = st.comms[op.comm].p2p[send ? P2pKey{a.rank, peer, q.seq} : P2pKey{peer, a.rank, q.seq}];
      (send ? pair.send : pair.recv) = Joined{a.rank, a.lane, q.ref, &op, stream.clock, q.order, n > 1, st.step};
      // A grouped op's access is its pair's completion's (complete_p2p_pair): the pairs of a
      // group complete one by one, and the first to complete hands the stream's clock at the
      // join to its peer, which must not cover what the others read and write later.
      if (n == 1) notify_access(a.rank, stream.actor, stream.clock, q, a);
    }
  }

  /// The tail every completed member shares, collective or p2p (its op already off its stream
  /// or marked done): its stream takes the completion's clock `all`, the rank's order on the
  /// communicator moves on, and the step records what the completion touched and wrote.
  /// `covers_stream`: `all` already covers the stream's clock, so the join is a copy that shares
  /// `all`'s base (a collective member's stream has not moved since it joined: the collective
  /// held its head). Every member then shares one base, and the next collective over them joins
  /// that base once instead of each member's own.
  void leave_comm(const Joined& m, CommId c, const VectorClock& all, bool covers_stream) {
    RankState& rank = st.ranks[m.rank];
    StreamState& stream = rank.streams[m.stream];
    if (covers_stream) {
      stream.clock = all;
    } else {
      stream.clock.join(all);
    }
    stream.clock.tick(stream.actor);
    ++rank.per_comm[c].ops_done;
    rank.per_comm[c].last_clock = stream.clock;
    auto it = std::find(rank.uncompleted.begin(), rank.uncompleted.end(), std::make_pair(c, m.order));
    if (it != rank.uncompleted.end()) rank.uncompleted.erase(it);
    touch(ObjectType::stream, m.rank, m.stream, true);
    touch_op(m.ref, true);
    touch(ObjectType::comm_done, m.rank, c, true);
    // Only serialized joins read the launch order's front; under concurrent kernels the
    // completions of different communicators commute.
    if (st.scenario.kernels == KernelConcurrency::serialized) touch(ObjectType::launch_head, m.rank, 0, true);
    touch_buffers(m.rank, *m.op);
    record_written(m.rank, *m.op);
  }

  void complete(CommId c) {
    CommState& comm = st.comms[c];
    if (!completes_collective(st, c)) return complete_p2p_pair(c);
    auto node = comm.pending.extract(comm.next_seq);
    Rendezvous& rv = node.mapped();
    const std::uint64_t seq = comm.next_seq++;
    std::vector<const Joined*>& members = st.completing;
    std::vector<const VectorClock*>& clocks = st.completing_clocks;
    members.clear();
    clocks.clear();
    for (const auto& m : rv.members) {
      if (!m) continue;
      members.push_back(&*m);
      clocks.push_back(&m->clock);
    }
    // One shared base for every member's clock after the collective.
    const VectorClock all = VectorClock::join_all(clocks);
    complete_collective(members, st.ranks);
    record_op(members.front()->ref);
    name_op(*members.front()->op);
    record_comm(c, seq);
    // Every member's slot, joined or not: a join may never be reordered across the completion
    // it is (or, under complete_without_all_members, is not) part of.
    const bool needs_all = mutant() != Mutant::complete_without_all_members;
    for (RankId member : st.scenario.comms[c].members) touch(ObjectType::rendezvous, member, c, true, needs_all);
    for (const Joined* m : members) {
      RankState& rank = st.ranks[m->rank];
      StreamState& stream = rank.streams[m->stream];
      AMAX_CHECK(!stream.queue.empty() && stream.queue.front().joined, "completing a collective not at its stream's head");
      stream.queue.pop_front();
      rank.per_comm[c].completed = seq + 1;
      leave_comm(*m, c, all, true);
    }
    notify_complete(c, seq, members);  // before the recycle, which may clear what `members` point to
    comm.recycle(std::move(node));
  }

  /// The completion's event, to the observers of completions (its ops numbered only for them).
  template <class Members>
  void notify_complete(CommId c, std::uint64_t seq, const Members& members) {
    if (st.complete_observers.empty()) return;
    st.completed_ops.clear();
    for (const Joined* m : members) st.completed_ops.push_back(number_of(m->ref));
    const CompleteEvent event{c, seq, st.step, st.completed_ops};
    for (Observer* o : st.complete_observers) o->on_complete(event);
  }

  /// Whether a pair of `comm` (not the one completing, already taken out) is ready and neither
  /// of its sides joined at step `join`, so that it need not wait for that join.
  static bool another_pair_ready_without(const CommState& comm, std::size_t join) {
    for (const auto& [key, other] : comm.p2p) {
      if (other.send && other.recv && other.send->joined_at != join && other.recv->joined_at != join &&
          p2p_disagreement(*other.send->op, *other.recv->op) == nullptr) {
        return true;
      }
    }
    return false;
  }

  /// Completes the first ready send / recv pair of the communicator: the recv's range gets the
  /// send's data, and each side leaves its stream once the ops of its group ahead of it did.
  void complete_p2p_pair(CommId c) {
    CommState& comm = st.comms[c];
    const auto* ready = ready_pair(comm);
    AMAX_CHECK(ready != nullptr, "complete with no ready rendezvous");
    auto node = comm.p2p.extract(ready->first);
    const P2pPair& pair = node.mapped();
    const VectorClock all = VectorClock::join_all({&pair.send->clock, &pair.recv->clock});
    complete_p2p(pair, st.ranks);
    record_op(pair.send->ref);
    name_op(*pair.send->op);
    record_comm(c, node.key().index);
    // Every member's slot: which pair completes next depends on every member's joins. A side's
    // join is needed (Touch::needs) only when no other pair is ready that could have been ready
    // without it: the complete could then have run before that join, finishing the other pair
    // (the same action doing another thing), so the search must try that order. A pair ready
    // now but started by the same join (a group's other op) needs it too. Pairs leave the ready
    // set only by completing, so any pair that was ready before is still in the map.
    if (touches()) {
      const bool send_needed = !another_pair_ready_without(comm, pair.send->joined_at);
      const bool recv_needed = !another_pair_ready_without(comm, pair.recv->joined_at);
      for (RankId member : st.scenario.comms[c].members) {
        const bool side = member == pair.send->rank || member == pair.recv->rank;
        const bool needed = side && (member != pair.send->rank || send_needed) && (member != pair.recv->rank || recv_needed);
        touch(ObjectType::rendezvous, member, c, true, needed);
      }
    }
    for (const Joined* m : {&*pair.send, &*pair.recv}) {
      RankState& rank = st.ranks[m->rank];
      StreamState& stream = rank.streams[m->stream];
      auto q = std::find_if(stream.queue.begin(), stream.queue.end(), [&](const QueuedOp& x) { return x.ref == m->ref; });
      AMAX_CHECK(q != stream.queue.end() && q->joined, "completing a p2p op its stream does not hold");
      q->done = true;
      const QueuedOp completed = *q;  // the pop below may leave its slot to the next issue
      while (!stream.queue.empty() && stream.queue.front().done) stream.queue.pop_front();
      // A grouped op's stream may have moved on (an earlier pair of its group left): join.
      leave_comm(*m, c, all, false);
      // A grouped op's access, at its own completion (join_p2p): with what its pair knows (the
      // two sides' join clocks) and the stream's new epoch. Not the stream's clock, which has
      // joined the pairs of the group that completed before, and their peers' pasts with them.
      if (m->grouped) {
        VectorClock access = all;
        access.advance(stream.actor, stream.clock[stream.actor]);
        notify_access(m->rank, stream.actor, access, completed, Action{ActionKind::join, m->rank, m->stream});
      }
    }
    notify_complete(c, node.key().index, std::array<const Joined*, 2>{&*pair.send, &*pair.recv});
  }
};

}  // namespace

Step Engine::apply(const Action& requested) {
  // A copy: callers often pass an element of enabled(), which this step rewrites.
  const Action action = requested;
  State& st = *state_;
  // The incremental list exists before it is patched, and is exact (the model-based property
  // tests compare it with a plain model after every step), so being in it is being enabled: a
  // binary search instead of re-deriving the action's condition.
  enabled();
  AMAX_CHECK(in_enabled(st, action),
             fmt::format("action {} rank {} lane {} is not enabled", to_string(action.kind), action.rank, action.lane));
  Step step;
  apply_checked<true>(action, step);
  return step;
}

namespace {

/// enabled()[index], checked (the message is built only on failure, out of line: this runs
/// every step).
[[noreturn, gnu::noinline, gnu::cold]] void no_such_action(std::size_t index, std::size_t count) {
  check_failed("index < actions.size()", __FILE__, __LINE__, fmt::format("enabled action {} does not exist ({} enabled)", index, count));
}
const Action& enabled_at(const Engine& engine, std::size_t index) {
  const std::vector<Action>& actions = engine.enabled();
  if (index >= actions.size()) no_such_action(index, actions.size());
  return actions[index];
}

/// A used Step back to what a new one holds, keeping its memory. What `detail` leaves out no
/// step of this run fills, so it is empty already (State::reset empties the whole Step).
void clear_step(Step& step, const StepDetail& detail) {
  step.op = OpRef{};
  step.collective = false;
  step.comm = 0;
  step.seq = 0;
  if (detail.names) {
    step.op_name.clear();
    step.lane.clear();
  }
  if (detail.written) step.written.clear();
  if (detail.touches) step.touches.clear();
}

}  // namespace

Step Engine::apply_enabled(std::size_t index) {
  Step step;
  apply_checked<true>(enabled_at(*this, index), step);
  return step;
}

const Step& Engine::step_enabled(std::size_t index) {
  Step& step = state_->scratch_step;
  if (state_->lean) {  // nothing reads the Step: it stays as it is
    apply_checked<false>(enabled_at(*this, index), step);
    return step;
  }
  clear_step(step, state_->options.step_detail);
  apply_checked<true>(enabled_at(*this, index), step);
  return step;
}

Engine::StepsTaken Engine::run_steps(ActionPicker& picker, std::size_t max_steps) {
  StepsTaken taken;
  State& st = *state_;
  while (taken.steps < max_steps) {
    const std::vector<Action>& actions = enabled();
    if (actions.empty()) break;
    const std::size_t chosen = picker.pick_action(std::span<const Action>(actions));
    if (chosen == ActionPicker::stop) {
      taken.stopped = true;
      break;
    }
    if (chosen >= actions.size()) no_such_action(chosen, actions.size());
    if (st.lean) {
      apply_checked<false>(actions[chosen], st.scratch_step);
    } else {
      clear_step(st.scratch_step, st.options.step_detail);
      apply_checked<true>(actions[chosen], st.scratch_step);
    }
    ++taken.steps;
  }
  return taken;
}

// Inlined into its callers: as a call, its register saves and step_enabled's were a tenth of a
// step's cost in the engine (issue 19).
template <bool Full>
[[gnu::always_inline]] inline void Engine::apply_checked(const Action& requested, Step& step) {
  // A copy: `requested` may be an element of enabled(), which this step rewrites.
  const Action action = requested;
  State& st = *state_;
  if constexpr (Full) {
    step.index = st.step;
    step.action = action;
    if (st.options.step_detail.names) step.lane = lane_name(action);
    // A step touches a handful of objects; one allocation instead of growing 1, 2, 4, 8.
    if (st.options.step_detail.touches) step.touches.reserve(8);
  }
  Applier<Full> applier{*this, st, step};
  // Rank and lane passed as scalars: read back field by field from the copy above, which is
  // stored whole, they measured slower (issue 19).
  switch (action.kind) {
    case ActionKind::issue: applier.issue(action.rank, action.lane); break;
    case ActionKind::execute: applier.execute(action.rank, action.lane); break;
    case ActionKind::join: applier.join(action.rank, action.lane); break;
    case ActionKind::complete: applier.complete(action.lane); break;
  }
  ++st.step;
  // Enabledness depends only on the acting rank's own state, plus rendezvous for collectives.
  st.refreshed_any = true;
  st.refreshed_members = nullptr;
  st.refreshed_comm.reset();
  if (action.kind == ActionKind::complete) {
    refresh_comm(st, action.lane);
    for (RankId member : st.scenario.comms[action.lane].members) refresh_rank(st, member);
    st.refreshed_members = &st.scenario.comms[action.lane].members;
    st.refreshed_comm = action.lane;
  } else {
    if (!applier.kept) refresh_rank(st, action.rank, applier.lanes);
    st.refreshed_rank = action.rank;
    if (action.kind == ActionKind::join) {
      refresh_comm(st, applier.joined_comm);
      st.refreshed_comm = applier.joined_comm;
    }
  }
}

std::vector<Step> run_first_enabled(Engine& engine) {
  std::vector<Step> steps;
  while (!engine.enabled().empty()) steps.push_back(engine.apply(engine.enabled().front()));
  engine.finish();
  return steps;
}

}  // namespace amaxcheck
