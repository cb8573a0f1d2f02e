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
  auto it = st.completed.find(comm);
  const std::uint64_t completed = it == st.completed.end() ? 0 : it->second;
  if (completed != q.seq) return false;
  if (scenario_->kernels == KernelConcurrency::serialized && st.unfinished.front() != std::make_pair(comm, q.seq)) return false;
  return true;
}

bool StreamModel::may_complete(CommId comm) const {
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
      if (is_collective(op.kind)) {
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
  } else if (is_collective(op.kind)) {
    q.seq = st.issued[op.comm]++;
    st.unfinished.emplace_back(op.comm, q.seq);
  }
  st.streams[op.stream].push_back(q);
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
  Queued& q = ranks_[rank].streams[stream].front();
  q.joined = true;
  const Op& op = op_at(q.ref);
  const int index = member_index(scenario_->comms[op.comm], rank);
  AMAX_CHECK(index >= 0, "the model joined a rank outside the communicator");
  comms_[op.comm].joined[q.seq][static_cast<std::uint32_t>(index)] = Member{rank, stream, &op};
}

void StreamModel::complete(CommId comm) {
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
    st.completed[comm] = seq + 1;
    st.unfinished.erase(std::find(st.unfinished.begin(), st.unfinished.end(), std::make_pair(comm, seq)));
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
