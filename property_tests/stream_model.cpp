#include "stream_model.h"

#include <algorithm>
#include <cmath>

#include "sequential_reference.h"
#include "util/check.h"

namespace amaxcheck::props {

StreamModel::StreamModel(std::shared_ptr<const Scenario> scenario)
    : scenario_(std::move(scenario)), comms_(scenario_->comms.size()) {
  for (const Rank& rank : scenario_->ranks) {
    RankState st;
    st.pc.assign(rank.threads.size(), 0);
    st.streams.resize(rank.streams.size());
    st.latest_record.assign(rank.events.size(), -1);
    st.signals.assign(rank.flags.size(), 0);
    st.held.resize(rank.threads.size());
    for (const Buffer& b : rank.buffers) {
      std::vector<float> values(b.size, 0.0f);
      for (std::size_t i = 0; i < b.init.size() && i < values.size(); ++i) values[i] = b.init[i];
      st.buffers.push_back(std::move(values));
    }
    ranks_.push_back(std::move(st));
  }
}

const Op& StreamModel::op_at(const OpRef& ref) const {
  return scenario_->ranks[ref.rank].threads[ref.thread].program[ref.index];
}

const std::vector<float>& StreamModel::buffer(RankId rank, BufferId buffer) const { return ranks_.at(rank).buffers.at(buffer); }

bool StreamModel::host_ready(RankId rank, const Op& op) const {
  const RankState& st = ranks_[rank];
  switch (op.kind) {
    case OpKind::stream_synchronize: return st.streams[op.stream].empty();
    case OpKind::event_synchronize: {
      const int rec = st.latest_record[op.event];
      return rec < 0 || record_done_[static_cast<std::size_t>(rec)];
    }
    case OpKind::device_synchronize:
      return std::all_of(st.streams.begin(), st.streams.end(), [](const auto& q) { return q.empty(); });
    case OpKind::host_wait: return st.signals[op.flag] >= op.count;
    default: return true;
  }
}

bool StreamModel::may_join(RankId rank, const Queued& q) const {
  const RankState& st = ranks_[rank];
  const CommId comm = op_at(q.ref).comm;
  auto it = st.ops_done.find(comm);
  const std::uint64_t done = it == st.ops_done.end() ? 0 : it->second;
  if (done != q.order) return false;
  if (scenario_->kernels == KernelConcurrency::serialized && st.unfinished.front() != std::make_pair(comm, q.order)) return false;
  return true;
}

bool StreamModel::may_complete(CommId comm) const { return collective_ready(comm) || ready_pair(comm).has_value(); }

std::optional<StreamModel::PairKey> StreamModel::ready_pair(CommId comm) const {
  for (const auto& [key, sides] : comms_[comm].pairs) {
    if (sides.first && sides.second && p2p_disagreement(*sides.first->op, *sides.second->op) == nullptr) return key;
  }
  return std::nullopt;
}

bool StreamModel::collective_ready(CommId comm) const {
  const CommState& st = comms_[comm];
  auto it = st.joined.find(st.next);
  if (it == st.joined.end() || it->second.size() != scenario_->comms[comm].members.size()) return false;
  const Op& first = *it->second.begin()->second.op;
  for (const auto& [index, member] : it->second) {
    if (!collectives_agree(first, *member.op)) return false;  // the model's rule (model/op_kind.h)
  }
  return true;
}

std::vector<Action> StreamModel::enabled() const {
  std::vector<Action> actions;
  for (RankId r = 0; r < ranks_.size(); ++r) {
    const RankState& st = ranks_[r];
    for (ThreadId t = 0; t < st.pc.size(); ++t) {
      const auto& program = scenario_->ranks[r].threads[t].program;
      if (st.pc[t] < program.size() && host_ready(r, program[st.pc[t]])) actions.push_back({ActionKind::issue, r, t});
    }
    for (StreamId k = 0; k < st.streams.size(); ++k) {
      if (st.streams[k].empty()) continue;
      const Queued& head = st.streams[k].front();
      const Op& op = op_at(head.ref);
      if (is_comm_op(op.kind)) {
        if (!head.joined && may_join(r, head)) actions.push_back({ActionKind::join, r, k});
      } else if ((op.kind != OpKind::stream_wait_event && op.kind != OpKind::work_wait) || head.record < 0 ||
                 record_done_[static_cast<std::size_t>(head.record)]) {
        actions.push_back({ActionKind::execute, r, k});
      }
    }
  }
  for (CommId c = 0; c < comms_.size(); ++c) {
    if (may_complete(c)) actions.push_back({ActionKind::complete, 0, c});
  }
  return actions;
}

bool StreamModel::done() const {
  for (RankId r = 0; r < ranks_.size(); ++r) {
    for (ThreadId t = 0; t < ranks_[r].pc.size(); ++t) {
      if (ranks_[r].pc[t] < scenario_->ranks[r].threads[t].program.size()) return false;
    }
    for (const auto& q : ranks_[r].streams) {
      if (!q.empty()) return false;
    }
  }
  return true;
}

void StreamModel::apply(const Action& action) {
  switch (action.kind) {
    case ActionKind::issue: issue(action.rank, action.lane); break;
    case ActionKind::execute: execute(action.rank, action.lane); break;
    case ActionKind::join: join(action.rank, action.lane); break;
    case ActionKind::complete: complete(action.lane); break;
  }
}

void StreamModel::issue(RankId rank, ThreadId thread) {
  RankState& st = ranks_[rank];
  const OpRef ref{rank, thread, st.pc[thread]++};
  const Op& op = op_at(ref);
  if (op.kind == OpKind::host_signal) ++st.signals[op.flag];
  if (is_host_op(op.kind)) return;
  Queued q{ref, -1, false, 0};
  if (op.kind == OpKind::event_record) {
    q.record = static_cast<int>(record_done_.size());
    record_done_.push_back(false);
    st.latest_record[op.event] = q.record;
  } else if (op.kind == OpKind::stream_wait_event || op.kind == OpKind::work_wait) {
    q.record = st.latest_record[op.event];
  } else if (is_comm_op(op.kind)) {
    if (is_collective(op.kind)) {
      q.seq = st.issued[op.comm]++;
    } else {
      q.seq = st.p2p_issued[{op.comm, scenario_->comms[op.comm].members.at(op.peer), op.kind == OpKind::send}]++;
    }
    q.order = st.ops_issued[op.comm]++;
    st.unfinished.emplace_back(op.comm, q.order);
  }
  // A group's ops reach the stream together, at its last issue.
  auto& held = st.held[thread];
  held.push_back(q);
  const auto& program = scenario_->ranks[rank].threads[thread].program;
  const bool more_of_the_group = is_p2p(op.kind) && op.group != 0 && ref.index + 1 < program.size() &&
                                 is_p2p(program[ref.index + 1].kind) && program[ref.index + 1].group == op.group;
  if (more_of_the_group) return;
  for (const Queued& h : held) st.streams[op.stream].push_back(h);
  held.clear();
}

void StreamModel::execute(RankId rank, StreamId stream) {
  RankState& st = ranks_[rank];
  const Queued q = st.streams[stream].front();
  st.streams[stream].pop_front();
  const Op& op = op_at(q.ref);
  if (op.kind == OpKind::event_record) {
    record_done_[static_cast<std::size_t>(q.record)] = true;
  } else if (op.kind != OpKind::stream_wait_event && op.kind != OpKind::work_wait) {
    run_kernel(rank, op);
  }
}

void StreamModel::join(RankId rank, StreamId stream) {
  auto& queue = ranks_[rank].streams[stream];
  const Op& head = op_at(queue.front().ref);
  if (is_p2p(head.kind)) {
    // The head's group (its ops consecutive in the thread's program) starts as one.
    for (std::size_t i = 0; i < queue.size(); ++i) {
      Queued& q = queue[i];
      const Op& op = op_at(q.ref);
      const bool in_group = i == 0 || (head.group != 0 && q.ref.rank == queue[0].ref.rank && q.ref.thread == queue[0].ref.thread &&
                                       q.ref.index == queue[0].ref.index + i && is_p2p(op.kind) && op.group == head.group);
      if (!in_group) break;
      q.joined = true;
      const RankId peer = scenario_->comms[op.comm].members.at(op.peer);
      const Member me{rank, stream, &op, q.ref, q.order};
      if (op.kind == OpKind::send) {
        comms_[op.comm].pairs[{rank, peer, q.seq}].first = me;
      } else {
        comms_[op.comm].pairs[{peer, rank, q.seq}].second = me;
      }
    }
    return;
  }
  Queued& q = queue.front();
  q.joined = true;
  const int index = member_index(scenario_->comms[head.comm], rank);
  AMAX_CHECK(index >= 0, "the model joined a rank outside the communicator");
  comms_[head.comm].joined[q.seq][static_cast<std::uint32_t>(index)] = Member{rank, stream, &head, q.ref, q.order};
}

void StreamModel::leave(RankId rank, CommId comm, std::uint64_t order) {
  RankState& st = ranks_[rank];
  ++st.ops_done[comm];
  st.unfinished.erase(std::find(st.unfinished.begin(), st.unfinished.end(), std::make_pair(comm, order)));
}

void StreamModel::complete_pair(CommId comm) {
  const auto key = ready_pair(comm);
  AMAX_CHECK(key.has_value(), "the model completed a communicator with nothing ready");
  const auto sides = comms_[comm].pairs.at(*key);
  comms_[comm].pairs.erase(*key);
  const Member& send = *sides.first;
  const Member& recv = *sides.second;
  const Range& from = send.op->reads.at(0);
  const Range& to = recv.op->writes.at(0);
  const auto& source = ranks_[send.rank].buffers[from.buffer];
  const std::vector<float> values(source.begin() + from.offset, source.begin() + from.offset + from.count);
  std::copy(values.begin(), values.end(), ranks_[recv.rank].buffers[to.buffer].begin() + to.offset);
  for (const Member* m : {&send, &recv}) {
    auto& queue = ranks_[m->rank].streams[m->stream];
    const auto it = std::find_if(queue.begin(), queue.end(), [&](const Queued& q) { return q.ref == m->ref; });
    AMAX_CHECK(it != queue.end(), "the model completed a send or recv its stream does not hold");
    it->done = true;
    while (!queue.empty() && queue.front().done) queue.pop_front();
    leave(m->rank, comm, m->order);
  }
}

void StreamModel::complete(CommId comm) {
  if (!collective_ready(comm)) return complete_pair(comm);
  CommState& cs = comms_[comm];
  const std::uint64_t seq = cs.next++;
  const auto members = cs.joined[seq];
  cs.joined.erase(seq);
  // Read every input first: an in-place reduction must not see another member's result.
  std::vector<std::vector<float>> inputs;
  for (const auto& [index, m] : members) {
    const Range& in = m.op->reads.at(0);
    const auto& b = ranks_[m.rank].buffers[in.buffer];
    inputs.emplace_back(b.begin() + in.offset, b.begin() + in.offset + in.count);
  }
  const Op& first = *members.begin()->second.op;
  AMAX_CHECK(first.kind == OpKind::all_reduce, "the model only knows all_reduce");
  std::vector<float> result = inputs.front();
  for (std::size_t i = 1; i < inputs.size(); ++i) {
    for (std::size_t e = 0; e < result.size(); ++e) {
      result[e] = first.reduce == ReduceOp::max ? std::fmax(result[e], inputs[i][e]) : result[e] + inputs[i][e];
    }
  }
  for (const auto& [index, m] : members) {
    RankState& st = ranks_[m.rank];
    const Range& out = m.op->writes.at(0);
    std::copy(result.begin(), result.end(), st.buffers[out.buffer].begin() + out.offset);
    st.streams[m.stream].pop_front();
    leave(m.rank, comm, m.order);
  }
}

void StreamModel::run_kernel(RankId rank, const Op& op) {
  auto& buffers = ranks_[rank].buffers;
  auto get = [&](const Range& r) {
    return std::vector<float>(buffers[r.buffer].begin() + r.offset, buffers[r.buffer].begin() + r.offset + r.count);
  };
  auto put = [&](const Range& r, const std::vector<float>& values) {
    std::copy(values.begin(), values.end(), buffers[r.buffer].begin() + r.offset);
  };
  switch (op.kind) {
    case OpKind::fill: put(op.writes.at(0), op.values); return;
    case OpKind::copy:
      for (std::size_t i = 0; i < op.reads.size(); ++i) put(op.writes.at(i), get(op.reads[i]));
      return;
    case OpKind::local_amax: {
      std::vector<float> out = get(op.writes.at(0));
      out[0] = local_amax(get(op.reads.at(0)));
      put(op.writes.at(0), out);
      return;
    }
    case OpKind::scale_update: {
      std::vector<float> history = get(op.writes.at(0)), scale = get(op.writes.at(1)), scale_inv = get(op.writes.at(2));
      scale_update(history, scale, scale_inv, op.scale.tensors, op.scale.history_len, op.scale.algo, op.scale.margin,
                   op.scale.format);
      put(op.writes.at(0), history);
      put(op.writes.at(1), scale);
      put(op.writes.at(2), scale_inv);
      return;
    }
    default: AMAX_CHECK(false, "the model has no kernel for this op");
  }
}

}  // namespace amaxcheck::props
