// What blocks a stuck run, and on whom: the raw material of deadlock reports.
#include <fmt/format.h>

#include <algorithm>

#include "engine/engine.h"
#include "engine/engine_state.h"
#include "util/check.h"

namespace amaxcheck {
namespace {

std::uint64_t thread_key(RankId r, ThreadId t) { return actor_key({ActionKind::issue, r, t}); }
std::uint64_t stream_key(RankId r, StreamId s) { return actor_key({ActionKind::execute, r, s}); }

/// Where rank `r` holds collective (comm, seq), if it issued it: its stream and queue position.
struct Held {
  StreamId stream = 0;
  std::size_t position = 0;  ///< 0 = at the stream's head
};

std::optional<Held> stream_holding(const Engine::State& st, RankId r, CommId comm, std::uint64_t seq) {
  const RankState& rank = st.ranks[r];
  for (StreamId k = 0; k < rank.streams.size(); ++k) {
    const auto& queue = rank.streams[k].queue;
    for (std::size_t i = 0; i < queue.size(); ++i) {
      if (is_collective(queue[i].op->kind) && queue[i].op->comm == comm && queue[i].seq == seq) return Held{k, i};
    }
  }
  return std::nullopt;
}

/// Where rank `r` holds its comm op number `order` on `comm` (collective or p2p).
std::optional<Held> stream_holding_order(const Engine::State& st, RankId r, CommId comm, std::uint64_t order) {
  const RankState& rank = st.ranks[r];
  for (StreamId k = 0; k < rank.streams.size(); ++k) {
    const auto& queue = rank.streams[k].queue;
    for (std::size_t i = 0; i < queue.size(); ++i) {
      if (is_comm_op(queue[i].op->kind) && queue[i].op->comm == comm && queue[i].order == order) return Held{k, i};
    }
  }
  return std::nullopt;
}

/// The op at `holder`, if found.
std::optional<OpRef> holder_ref(const Engine::State& st, RankId r, const std::optional<Held>& holder) {
  if (!holder) return std::nullopt;
  return st.ranks[r].streams[holder->stream].queue[holder->position].ref;
}

/// "collective #3 on comm dp" / "send #0 to rank 1 on comm pp (send_act)": a comm op, as the
/// rank that holds it numbers it.
std::string comm_op_label(const Engine::State& st, RankId r, const QueuedOp& q) {
  const Op& op = *q.op;
  const Communicator& comm = st.scenario.comms[op.comm];
  if (is_collective(op.kind)) return fmt::format("collective #{} on comm {}", q.seq, comm.name);
  return fmt::format("{} #{} {} rank {} on comm {}", to_string(op.kind), q.seq, op.kind == OpKind::send ? "to" : "from",
                     comm.members.at(op.peer), comm.name);
  (void)r;
}

/// "thread main at host_wait", or "its threads have finished": where a rank that never
/// issued a collective is instead.
std::string where_threads_are(const Engine::State& st, RankId r) {
  std::vector<std::string> at;
  const Rank& rank = st.scenario.ranks[r];
  for (ThreadId t = 0; t < rank.threads.size(); ++t) {
    const std::uint32_t pc = st.ranks[r].threads[t].pc;
    if (pc < rank.threads[t].program.size()) at.push_back(fmt::format("thread {} is at {}", rank.threads[t].name, rank.threads[t].program[pc].name));
  }
  return at.empty() ? "its threads have finished" : fmt::format("{}", fmt::join(at, ", "));
}

/// Threads of rank `r` whose program, from where each is, still holds an op that `wanted`
/// accepts: only they can issue what a stuck op waits for. A wait-for edge to a thread that
/// will never issue it would make a missing op read like an ordering cycle.
template <class Wanted>
std::vector<ThreadId> threads_that_may_issue(const Engine::State& st, RankId r, Wanted wanted) {
  std::vector<ThreadId> out;
  const Rank& rank = st.scenario.ranks[r];
  for (ThreadId t = 0; t < rank.threads.size(); ++t) {
    const auto& program = rank.threads[t].program;
    for (std::size_t pc = st.ranks[r].threads[t].pc; pc < program.size(); ++pc) {
      if (wanted(program[pc])) {
        out.push_back(t);
        break;
      }
    }
  }
  return out;
}

/// Members of `comm` that have not joined collective `seq`: those that never issued it, and
/// those that issued it but whose stream has not reached it, naming the op it is blocked behind.
void missing_members(const Engine::State& st, CommId comm, std::uint64_t seq, Stuck& out) {
  const Communicator& c = st.scenario.comms[comm];
  auto it = st.comms[comm].pending.find(seq);
  for (std::size_t i = 0; i < c.members.size(); ++i) {
    const bool joined = it != st.comms[comm].pending.end() && !it->second.members.empty() && it->second.members[i];
    if (joined) continue;
    const RankId r = c.members[i];
    if (auto held = stream_holding(st, r, comm, seq)) {
      out.waits_on.push_back(stream_key(r, held->stream));
      const auto& queue = st.ranks[r].streams[held->stream].queue;
      const std::string& stream = st.scenario.ranks[r].streams[held->stream].name;
      const Op& mine = *queue[held->position].op;
      out.reasons.push_back({WaitKind::blocked, r, held->position == 0 ? std::nullopt : std::optional(queue.front().ref)});
      out.blocked.push_back(held->position == 0
                                ? fmt::format("rank {} issued it ({}) on stream {} but has not started it", r, mine.name, stream)
                                : fmt::format("rank {} issued it ({}) but its stream {} is blocked behind {}", r, mine.name,
                                              stream, queue.front().op->name));
    } else {
      const auto may_issue = threads_that_may_issue(st, r, [comm](const Op& o) {
        return is_collective(o.kind) && o.comm == comm && !is_discarded_collective(o);
      });
      if (may_issue.empty()) {
        out.reasons.push_back({WaitKind::never_issues, r, std::nullopt});
        out.blocked.push_back(fmt::format("rank {} never issues it: its program has no collective left on comm {} ({})", r,
                                          c.name, where_threads_are(st, r)));
      } else {
        out.reasons.push_back({WaitKind::not_issued, r, std::nullopt});
        out.missing_ranks.push_back(r);
        for (ThreadId t : may_issue) out.waits_on.push_back(thread_key(r, t));
      }
    }
  }
}

/// "rank(s) 2 never issued it (thread main is at ...); rank 1 issued it (...) but ...".
std::string missing_text(const Engine::State& st, const Stuck& s) {
  std::vector<std::string> parts;
  for (RankId r : s.missing_ranks) parts.push_back(fmt::format("rank {} never issued it ({})", r, where_threads_are(st, r)));
  parts.insert(parts.end(), s.blocked.begin(), s.blocked.end());
  return fmt::format("{}", fmt::join(parts, "; "));
}

/// A joined send or recv waits for its peer's side of the pair.
void describe_joined_p2p(const Engine::State& st, RankId r, const QueuedOp& q, Stuck& out) {
  const Op& op = *q.op;
  const Communicator& comm = st.scenario.comms[op.comm];
  const RankId peer = comm.members.at(op.peer);
  const bool send = op.kind == OpKind::send;
  const P2pKey key = send ? P2pKey{r, peer, q.seq} : P2pKey{peer, r, q.seq};
  const auto& pairs = st.comms[op.comm].p2p;
  const auto it = pairs.find(key);
  AMAX_CHECK(it != pairs.end(), "a started p2p op has no pair");
  const char* other_kind = send ? "recv" : "send";
  out.awaited = fmt::format("{} #{} from rank {} to rank {} on comm {}", send ? "send" : "recv", q.seq, key.sender,
                            key.receiver, comm.name);
  const auto& other = send ? it->second.recv : it->second.send;
  if (it != pairs.end() && other) {
    const char* why = p2p_disagreement(*it->second.send->op, *it->second.recv->op);
    out.reasons.push_back({WaitKind::mismatched, peer, std::nullopt});
    out.blocked.push_back(fmt::format("rank {} started the matching {} ({}) but they disagree ({}): NCCL's behaviour is "
                                      "undefined (wrong data or a hang), and the model stops here",
                                      peer, other_kind, other->op->name, why ? why : "?"));
    out.waiting_for = fmt::format("the matching {} on rank {}, which disagrees with it", other_kind, peer);
    return;
  }
  // Does the peer hold the matching op (issued, not started)?
  const int mine = member_index(comm, r);
  const RankState& peer_state = st.ranks[peer];
  for (StreamId k = 0; k < peer_state.streams.size(); ++k) {
    const auto& queue = peer_state.streams[k].queue;
    for (std::size_t i = 0; i < queue.size(); ++i) {
      const Op& o = *queue[i].op;
      if (!is_p2p(o.kind) || o.kind == op.kind || o.comm != op.comm || static_cast<int>(o.peer) != mine || queue[i].seq != q.seq) continue;
      out.waits_on.push_back(actor_key({ActionKind::execute, peer, k}));
      out.reasons.push_back({WaitKind::blocked, peer, i == 0 ? std::nullopt : std::optional(queue.front().ref)});
      const std::string& stream = st.scenario.ranks[peer].streams[k].name;
      out.blocked.push_back(i == 0 ? fmt::format("rank {} issued the matching {} ({}) on stream {} but has not started it (it waits "
                                                 "for an earlier op on comm {})", peer, other_kind, o.name, stream, comm.name)
                                   : fmt::format("rank {} issued the matching {} ({}) but its stream {} is blocked behind {}",
                                                 peer, other_kind, o.name, stream, queue.front().op->name));
      out.waiting_for = fmt::format("the matching {} on rank {}: {}", other_kind, peer, out.blocked.back());
      return;
    }
  }
  const OpKind matching = send ? OpKind::recv : OpKind::send;
  const auto may_issue = threads_that_may_issue(st, peer, [&](const Op& o) {
    return o.kind == matching && o.comm == op.comm && static_cast<int>(o.peer) == mine;
  });
  if (may_issue.empty()) {
    out.reasons.push_back({WaitKind::never_issues, peer, std::nullopt});
    out.blocked.push_back(fmt::format("rank {} never issues the matching {}: its program has none left to rank {} on comm {} "
                                      "({})",
                                      peer, other_kind, r, comm.name, where_threads_are(st, peer)));
    out.waiting_for = fmt::format("the matching {} on rank {}, which its program never issues", other_kind, peer);
    return;
  }
  out.reasons.push_back({WaitKind::not_issued, peer, std::nullopt});
  out.missing_ranks.push_back(peer);
  for (ThreadId t : may_issue) out.waits_on.push_back(actor_key({ActionKind::issue, peer, t}));
  out.waiting_for = fmt::format("the matching {} on rank {}, which never issued it ({})", other_kind, peer, where_threads_are(st, peer));
}

void describe_stream_head(const Engine::State& st, RankId r, StreamId k, Stuck& out) {
  const RankState& rank = st.ranks[r];
  const QueuedOp& q = rank.streams[k].queue.front();
  const Op& op = *q.op;
  const Scenario& s = st.scenario;
  if (op.kind == OpKind::stream_wait_event || op.kind == OpKind::work_wait) {
    out.waiting_for = fmt::format("event {} recorded on stream {}", s.ranks[r].events[op.event].name,
                                  s.ranks[r].streams[q.record->stream].name);
    out.waits_on.push_back(stream_key(r, q.record->stream));
    out.reasons.push_back({WaitKind::event_record, r, std::nullopt});
    return;
  }
  if (!is_comm_op(op.kind)) return;
  const std::string comm = s.comms[op.comm].name;
  if (q.joined && is_p2p(op.kind)) return describe_joined_p2p(st, r, q, out);
  if (q.joined) {
    auto it = st.comms[op.comm].pending.find(q.seq);
    bool agree = true;
    std::vector<std::string> joined;  // "rank 1 grad_bucket_1"
    if (it != st.comms[op.comm].pending.end()) {
      for (const auto& m : it->second.members) {
        if (!m) continue;
        if (!collectives_agree(*m->op, op)) agree = false;
        joined.push_back(fmt::format("rank {} {}", m->rank, m->op->name));
      }
    }
    // A mismatched rendezvous is one collective whatever each rank calls it: name it once.
    out.awaited = agree ? fmt::format("collective #{} on comm {} ({})", q.seq, comm, op.name)
                        : fmt::format("collective #{} on comm {}", q.seq, comm);
    missing_members(st, op.comm, q.seq, out);
    if (!agree) {
      out.reasons.push_back({WaitKind::mismatched, r, std::nullopt});
      // NCCL leaves a mismatch undefined (wrong data or a hang); the model completes nothing.
      out.blocked.push_back(fmt::format("its members joined it with mismatched ops ({}): NCCL's behaviour is undefined "
                                        "(wrong data or a hang), and the model stops here",
                                        fmt::join(joined, ", ")));
    }
    out.waiting_for = agree ? fmt::format("the other members of comm {} to join collective #{}: {}", comm, q.seq, missing_text(st, out))
                            : fmt::format("collective #{} on comm {}, whose members issued mismatched ops", q.seq, comm);
    return;
  }
  const std::uint64_t completed = rank.per_comm[op.comm].ops_done;
  if (completed != q.order) {
    const auto holder = stream_holding_order(st, r, op.comm, completed);
    const std::string first = holder ? comm_op_label(st, r, rank.streams[holder->stream].queue[holder->position])
                                     : fmt::format("op #{} on comm {}", completed, comm);
    out.waiting_for = fmt::format("{} to complete first (NCCL runs a comm's ops in issue order)", first);
    if (holder) out.waits_on.push_back(stream_key(r, holder->stream));
    out.reasons.push_back({WaitKind::earlier_comm_op, r, holder_ref(st, r, holder)});
    return;
  }
  if (s.kernels == KernelConcurrency::serialized && rank.uncompleted.front() != std::make_pair(op.comm, q.order)) {
    const auto [first_comm, first_order] = rank.uncompleted.front();
    const auto holder = stream_holding_order(st, r, first_comm, first_order);
    const std::string first = holder ? comm_op_label(st, r, rank.streams[holder->stream].queue[holder->position])
                                     : fmt::format("op #{} on comm {}", first_order, s.comms[first_comm].name);
    out.waiting_for = fmt::format("{} to finish (serialized collective kernels run in launch order)", first);
    if (holder) out.waits_on.push_back(stream_key(r, holder->stream));
    out.reasons.push_back({WaitKind::launch_order, r, holder_ref(st, r, holder)});
    return;
  }
  // Otherwise nothing holds it back (a group reaches its stream whole, ThreadState::held): it
  // may join now, which only a run still in progress shows.
}

void describe_thread(const Engine::State& st, RankId r, ThreadId t, const Op& op, Stuck& out) {
  const Rank& rank = st.scenario.ranks[r];
  switch (op.kind) {
    case OpKind::stream_synchronize:
      out.waiting_for = "stream " + rank.streams[op.stream].name + " to drain";
      out.reasons.push_back({WaitKind::stream_drain, r, std::nullopt});
      out.waits_on.push_back(stream_key(r, op.stream));
      break;
    case OpKind::event_synchronize: {
      const auto& rec = st.ranks[r].latest_record[op.event];
      out.waiting_for = "event " + rank.events[op.event].name;
      out.reasons.push_back({WaitKind::event_done, r, std::nullopt});
      if (rec) out.waits_on.push_back(stream_key(r, rec->stream));
      break;
    }
    case OpKind::device_synchronize:
      out.waiting_for = "every stream of the device to drain";
      out.reasons.push_back({WaitKind::device_drain, r, std::nullopt});
      for (StreamId k = 0; k < rank.streams.size(); ++k) {
        if (!st.ranks[r].streams[k].queue.empty()) out.waits_on.push_back(stream_key(r, k));
      }
      break;
    case OpKind::host_wait:
      out.waiting_for = fmt::format("host flag {} to be signalled {} time(s)", rank.flags[op.flag], op.count);
      out.reasons.push_back({WaitKind::host_flag, r, std::nullopt});
      for (ThreadId other = 0; other < rank.threads.size(); ++other) {
        if (other != t) out.waits_on.push_back(thread_key(r, other));
      }
      break;
    default: break;
  }
}

}  // namespace

std::vector<Stuck> Engine::stuck() const {
  const State& st = *state_;
  std::vector<Stuck> result;
  const auto& en = enabled();
  for (RankId r = 0; r < st.ranks.size(); ++r) {
    const Rank& rank = st.scenario.ranks[r];
    for (ThreadId t = 0; t < rank.threads.size(); ++t) {
      const std::uint32_t pc = st.ranks[r].threads[t].pc;
      if (pc >= rank.threads[t].program.size()) continue;
      if (std::find(en.begin(), en.end(), Action{ActionKind::issue, r, t}) != en.end()) continue;
      const Op& op = rank.threads[t].program[pc];
      Stuck s{r, "thread " + rank.threads[t].name, thread_key(r, t), OpRef{r, t, pc}, op.name, op.origin, {}, {}, {}, {}, {}, {}};
      describe_thread(st, r, t, op, s);
      result.push_back(std::move(s));
    }
    for (StreamId k = 0; k < rank.streams.size(); ++k) {
      const auto& queue = st.ranks[r].streams[k].queue;
      if (queue.empty()) continue;
      const QueuedOp& q = queue.front();
      Stuck s{r, "stream " + rank.streams[k].name, stream_key(r, k), q.ref, q.op->name, q.op->origin, {}, {}, {}, {}, {}, {}};
      describe_stream_head(st, r, k, s);
      result.push_back(std::move(s));
    }
  }
  return result;
}

}  // namespace amaxcheck
