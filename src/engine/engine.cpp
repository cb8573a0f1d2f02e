// The semantics engine: enabled actions and their effects. See engine.h for the rules.
#include "engine/engine.h"

#include <fmt/format.h>

#include <algorithm>

#include "engine/engine_state.h"
#include "util/check.h"

namespace amaxcheck {

Engine::State::State(const Scenario& s, EngineOptions o) : scenario(s), options(o), lean(lean_for(o)) {
  std::size_t threads = 0, streams = 0, events = 0, event_records = 0;
  actor_base.reserve(s.ranks.size());
  for (const Rank& rank : s.ranks) {
    actor_base.push_back(static_cast<ActorId>(actor_count));
    actor_count += rank.threads.size() + rank.streams.size();
    threads += rank.threads.size();
    streams += rank.streams.size();
    events += rank.events.size();
    for (const Thread& thread : rank.threads) {
      event_records += static_cast<std::size_t>(
          std::count_if(thread.program.begin(), thread.program.end(), [](const Op& op) { return op.kind == OpKind::event_record; }));
    }
  }
  records.resize(event_records);
  op_base.reserve(s.ranks.size(), threads);
  op_number.reserve(s.ranks.size(), threads);
  thread_lanes.reserve(s.ranks.size(), threads);
  stream_lanes.reserve(s.ranks.size(), streams);
  event_syncers.reserve(s.ranks.size(), events);
  event_waiters.reserve(s.ranks.size(), events);
  // The four detectors and a strategy or two: reset keeps the room.
  for (auto* list : {&observers, &issue_observers, &comm_issue_observers, &access_observers, &complete_observers}) {
    list->reserve(8);
  }
  access_ops.reserve(8);
  ranks.resize(s.ranks.size());
  root = VectorClock(actor_count);  // every clock starts as a copy, sharing its base
  std::uint32_t scenario_ops = 0;   // the ops of the ranks before r
  for (std::size_t r = 0; r < s.ranks.size(); ++r) {
    const Rank& rank = s.ranks[r];
    RankState& st = ranks[r];
    ActorId next = actor_base[r];
    // Reserved: each list is sized once, for the rank it belongs to.
    st.threads.reserve(rank.threads.size());
    st.streams.reserve(rank.streams.size());
    for (std::size_t t = 0; t < rank.threads.size(); ++t) {
      const std::vector<Op>& program = rank.threads[t].program;
      const auto host_ops = static_cast<std::size_t>(
          std::count_if(program.begin(), program.end(), [](const Op& op) { return is_host_op(op.kind); }));
      st.threads.push_back(ThreadState{0, next++, root, std::vector<VectorClock>(host_ops + 1, root), 0, {}});
    }
    for (std::size_t k = 0; k < rank.streams.size(); ++k) {
      st.streams.push_back(StreamState{next++, {}, root, std::vector<std::uint32_t>(rank.threads.size(), 0),
                                       std::uint64_t{1} << ((rank.threads.size() + k) & 63), 0});
    }
    const std::span<std::uint32_t> op_base_of_rank = op_base.add_row(rank.threads.size());
    const std::span<std::uint32_t> op_number_of_rank = op_number.add_row(rank.threads.size());
    std::uint32_t ops = 0;
    for (std::size_t t = 0; t < rank.threads.size(); ++t) {
      op_base_of_rank[t] = ops;
      op_number_of_rank[t] = scenario_ops + ops;  // for_each_op's order
      ops += static_cast<std::uint32_t>(rank.threads[t].program.size());
    }
    scenario_ops += ops;
    const std::span<std::uint64_t> by_event = event_syncers.add_row(rank.events.size(), 0);
    const std::span<std::uint64_t> waiters = event_waiters.add_row(rank.events.size(), 0);
    for (std::size_t t = 0; t < rank.threads.size(); ++t) {
      const std::uint64_t bit = std::uint64_t{1} << std::min<std::size_t>(t, 63);
      for (const Op& op : rank.threads[t].program) {
        if (op.kind == OpKind::stream_wait_event || op.kind == OpKind::work_wait) {
          AMAX_CHECK(op.event < waiters.size(), "a wait names an event the rank does not have");
          const std::size_t lane = rank.threads.size() + op.stream;
          if (lane < 64) waiters[op.event] |= std::uint64_t{1} << lane;
        }
        if (op.kind == OpKind::stream_synchronize) {
          AMAX_CHECK(op.stream < st.streams.size(), "stream_synchronize names a stream the rank does not have");
          st.streams[op.stream].syncers |= bit;
        }
        if (op.kind == OpKind::device_synchronize) {
          for (StreamState& stream : st.streams) stream.syncers |= bit;
        }
        if (op.kind == OpKind::event_synchronize) {
          AMAX_CHECK(op.event < by_event.size(), "event_synchronize names an event the rank does not have");
          by_event[op.event] |= bit;
        }
      }
    }
    st.latest_record.resize(rank.events.size());
    st.per_comm.resize(s.comms.size());
    st.flag_signals.resize(rank.flags.size());
    const std::span<std::string> thread_names = thread_lanes.add_row(rank.threads.size());
    for (std::size_t t = 0; t < rank.threads.size(); ++t) thread_names[t] = "thread " + rank.threads[t].name;
    const std::span<std::string> stream_names = stream_lanes.add_row(rank.streams.size());
    for (std::size_t k = 0; k < rank.streams.size(); ++k) stream_names[k] = "stream " + rank.streams[k].name;
    st.buffers = BufferValues(rank.buffers);
  }
  std::size_t most_lanes = 0;
  for (const Rank& rank : s.ranks) most_lanes = std::max(most_lanes, rank.threads.size() + rank.streams.size());
  lane_refs.reserve(s.ranks.size(), threads + streams);
  for (std::size_t r = 0; r < s.ranks.size(); ++r) {
    const Rank& rank = s.ranks[r];
    const std::span<LaneRef> refs = lane_refs.add_row(rank.threads.size() + rank.streams.size());
    for (std::size_t t = 0; t < rank.threads.size(); ++t) {
      const std::vector<Op>& program = rank.threads[t].program;
      refs[t] = LaneRef{&ranks[r].threads[t], program.data(), static_cast<std::uint32_t>(program.size()), 0, nullptr, op_number[r][t]};
    }
    for (std::size_t k = 0; k < rank.streams.size(); ++k) {
      refs[rank.threads.size() + k] = LaneRef{nullptr, nullptr, 0, static_cast<std::uint32_t>(k), &ranks[r].streams[k].queue};
    }
  }
  fresh.assign(most_lanes, Action{});
  lane_bits_ok = most_lanes <= 64;
  build_op_plans(*this);
  if (lane_bits_ok) lane_bits.resize(s.ranks.size());
  comms.resize(s.comms.size());
  comm_lanes.reserve(s.comms.size());
  for (const Communicator& c : s.comms) comm_lanes.push_back("comm " + c.name);
  watched_accesses = OpSet(scenario_ops);
}

void Engine::State::reset(EngineOptions o) {
  options = o;
  lean = lean_for(o);
  observers.clear();
  issue_observers.clear();
  comm_issue_observers.clear();
  access_observers.clear();
  access_ops.clear();
  watched_accesses.fill(false);
  complete_observers.clear();
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const Rank& rank = scenario.ranks[r];
    RankState& st = ranks[r];
    for (ThreadState& t : st.threads) {
      t.pc = 0;
      t.held.clear();
      t.clock = root;
      t.version = 0;  // versions[0] is the root: later slots are written before they are read
    }
    for (StreamState& k : st.streams) {
      k.queue.clear();
      k.clock = root;
      std::fill(k.joined_versions.begin(), k.joined_versions.end(), 0);
    }
    std::fill(st.latest_record.begin(), st.latest_record.end(), nullptr);
    for (auto& signals : st.flag_signals) signals.clear();
    st.buffers.restore(rank.buffers);
    for (RankCommState& c : st.per_comm) c = RankCommState{};
    st.uncompleted.clear();
    st.p2p_issued.clear();
  }
  for (CommState& c : comms) c.reset();
  records_issued = 0;  // the records stay where they are: the next run's pointers are valid too
  step = 0;
  enabled.clear();
  enabled_valid = false;  // the first enabled() recomputes the list and lane_bits
  refreshed_rank = 0;
  refreshed_members = nullptr;
  refreshed_any = false;
  refreshed_comm.reset();
  finished = false;
  // Emptied whole: this run's step detail may leave out what the last run's filled.
  scratch_step.op_name.clear();
  scratch_step.lane.clear();
  scratch_step.written.clear();
  scratch_step.touches.clear();
}

Rendezvous& CommState::rendezvous(std::uint64_t seq, std::size_t members) {
  const auto at = pending.lower_bound(seq);
  if (at != pending.end() && at->first == seq) return at->second;
  if (spare.empty()) return pending.emplace_hint(at, seq, Rendezvous{std::vector<std::optional<Joined>>(members), 0})->second;
  PendingMap::node_type node = std::move(spare.back());
  spare.pop_back();
  node.key() = seq;
  node.mapped().members.resize(members);  // the same communicator: already this size
  return pending.insert(at, std::move(node))->second;
}

void CommState::recycle(PendingMap::node_type node) {
  Rendezvous& rv = node.mapped();
  for (auto& member : rv.members) member.reset();
  rv.joined = 0;
  spare.push_back(std::move(node));
}

void CommState::reset() {
  next_seq = 0;
  while (!pending.empty()) recycle(pending.extract(pending.begin()));
  p2p.clear();
}

void Engine::reset(EngineOptions options) {
  enabled_ = nullptr;
  state_->reset(options);
}

Engine::Engine(const Scenario& scenario, EngineOptions options)
    : state_(std::make_unique<State>(scenario, options)) {}
Engine::~Engine() = default;

void Engine::add_observer(Observer* observer) {
  State& st = *state_;
  st.observers.push_back(observer);
  const Observer::Events events = observer->events();
  if (events.issue) st.comm_issue_observers.push_back(observer);
  if (events.issue && !events.comm_issues_only) st.issue_observers.push_back(observer);
  if (events.access) {
    AMAX_CHECK(!events.access_ops || events.access_ops->size() == st.watched_accesses.size(),
               "an observer's set of watched ops does not match the scenario's ops");
    st.access_observers.push_back(observer);
    st.access_ops.push_back(events.access_ops);
    if (events.access_ops) {
      st.watched_accesses.insert_all(*events.access_ops);
    } else {
      st.watched_accesses.fill(true);
    }
  }
  if (events.complete) st.complete_observers.push_back(observer);
}
std::size_t Engine::steps() const { return state_->step; }
const Scenario& Engine::scenario() const { return state_->scenario; }
std::size_t Engine::actor_count() const { return state_->actor_count; }
ActorId Engine::thread_actor(RankId rank, ThreadId thread) const { return state_->actor_base[rank] + thread; }
ActorId Engine::stream_actor(RankId rank, StreamId stream) const {
  return state_->actor_base[rank] + static_cast<ActorId>(state_->scenario.ranks[rank].threads.size()) + stream;
}

std::vector<float> Engine::read(RankId rank, const Range& range) const {
  const std::span<const float> values = view(rank, range);
  return {values.begin(), values.end()};
}

std::span<const float> Engine::view(RankId rank, const Range& range) const {
  const BufferValues& buffers = state_->ranks.at(rank).buffers;
  AMAX_CHECK(range.buffer < buffers.size(), "read of a buffer the rank does not have");
  const std::span<const float> buf = buffers[range.buffer];
  AMAX_CHECK(range.offset + range.count <= buf.size(), "read past the end of a buffer");
  return buf.subspan(range.offset, range.count);
}

const std::string& Engine::lane_name(const Action& action) const {
  const State& st = *state_;
  switch (action.kind) {
    case ActionKind::issue: return st.thread_lanes.at(action.rank, action.lane);
    case ActionKind::execute:
    case ActionKind::join: return st.stream_lanes.at(action.rank, action.lane);
    case ActionKind::complete: return st.comm_lanes.at(action.lane);
  }
  static const std::string unknown = "?";
  return unknown;
}

bool collective_ready(const Engine::State& st, CommId c) {
  const CommState& comm = st.comms[c];
  auto it = comm.pending.find(comm.next_seq);
  if (it == comm.pending.end()) return false;
  const Rendezvous& rv = it->second;
  if (st.options.mutant == Mutant::complete_without_all_members) return rv.joined > 0;
  if (rv.joined != rv.members.size()) return false;
  const Op* first = rv.members.front()->op;
  for (std::size_t i = 1; i < rv.members.size(); ++i) {
    if (!collectives_agree(*first, *rv.members[i]->op)) return false;
  }
  return true;
}

bool rendezvous_ready(const Engine::State& st, CommId c) { return collective_ready(st, c) || ready_pair(st.comms[c]) != nullptr; }

std::size_t p2p_group_size(const Scenario& s, const OpRef& first) {
  const auto& program = s.ranks[first.rank].threads[first.thread].program;
  const std::uint32_t group = program[first.index].group;
  if (group == 0 || !is_p2p(program[first.index].kind)) return 1;
  std::size_t n = 1;
  while (first.index + n < program.size() && program[first.index + n].group == group && is_p2p(program[first.index + n].kind)) ++n;
  return n;
}

std::size_t queued_group_size(const Fifo<QueuedOp>& queue) {
  const QueuedOp& head = queue.front();
  if (head.op->group == 0 || !is_p2p(head.op->kind)) return 1;
  std::size_t n = 1;
  while (n < queue.size() && queue[n].ref.rank == head.ref.rank && queue[n].ref.thread == head.ref.thread &&
         queue[n].ref.index == head.ref.index + n && queue[n].op->group == head.op->group && is_p2p(queue[n].op->kind)) {
    ++n;
  }
  return n;
}

const std::pair<const P2pKey, P2pPair>* ready_pair(const CommState& comm) {
  for (const auto& entry : comm.p2p) {
    const P2pPair& pair = entry.second;
    if (pair.send && pair.recv && p2p_disagreement(*pair.send->op, *pair.recv->op) == nullptr) return &entry;
  }
  return nullptr;
}

bool completes_collective(const Engine::State& st, CommId c) { return collective_ready(st, c); }

Engine::Refreshed Engine::last_refreshed() const {
  const State& st = *state_;
  if (!st.refreshed_any) return {};
  if (st.refreshed_members) return Refreshed{std::span<const RankId>(*st.refreshed_members), st.refreshed_comm};
  return Refreshed{std::span<const RankId>(&st.refreshed_rank, 1), st.refreshed_comm};
}

const Op* Engine::pending_op(const Action& action) const {
  const State& st = *state_;
  const Scenario& s = st.scenario;
  if (action.kind == ActionKind::complete) {
    if (action.lane >= st.comms.size()) return nullptr;
    const CommState& comm = st.comms[action.lane];
    if (!collective_ready(st, action.lane)) {
      if (const auto* pair = ready_pair(comm)) return pair->second.send->op;
    }
    const auto it = comm.pending.find(comm.next_seq);
    if (it == comm.pending.end()) return nullptr;
    for (const auto& m : it->second.members) {
      if (m) return m->op;
    }
    return nullptr;
  }
  if (action.rank >= s.ranks.size()) return nullptr;
  const RankState& rank = st.ranks[action.rank];
  if (action.kind == ActionKind::issue) {
    if (action.lane >= rank.threads.size()) return nullptr;
    const auto& program = s.ranks[action.rank].threads[action.lane].program;
    const std::uint32_t pc = rank.threads[action.lane].pc;
    return pc < program.size() ? &program[pc] : nullptr;
  }
  if (action.lane >= rank.streams.size() || rank.streams[action.lane].queue.empty()) return nullptr;
  return rank.streams[action.lane].queue.front().op;
}

std::vector<OpRef> Engine::joined_members(CommId comm) const {
  std::vector<OpRef> refs;
  const State& st = *state_;
  if (comm >= st.comms.size()) return refs;
  if (!collective_ready(st, comm)) {
    if (const auto* pair = ready_pair(st.comms[comm])) return {pair->second.send->ref, pair->second.recv->ref};
  }
  const auto it = st.comms[comm].pending.find(st.comms[comm].next_seq);
  if (it == st.comms[comm].pending.end()) return refs;
  for (const auto& m : it->second.members) {
    if (m) refs.push_back(m->ref);
  }
  return refs;
}

bool Engine::done() const {
  const State& st = *state_;
  for (RankId r = 0; r < st.ranks.size(); ++r) {
    for (ThreadId t = 0; t < st.ranks[r].threads.size(); ++t) {
      if (st.ranks[r].threads[t].pc < st.scenario.ranks[r].threads[t].program.size()) return false;
    }
    for (const auto& s : st.ranks[r].streams) {
      if (!s.queue.empty()) return false;
    }
  }
  return true;
}

void Engine::finish() {
  AMAX_CHECK(!state_->finished, "finish() called twice");
  AMAX_CHECK(enabled().empty(), "finish() called while actions are enabled");
  state_->finished = true;
  for (Observer* o : state_->observers) o->on_finish(*this);
}

}  // namespace amaxcheck
