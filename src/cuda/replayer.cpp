// Replaying a simulator schedule on the GPUs: one function per action kind (see session.h).
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <chrono>

#include "cuda/cuda_error.h"
#include "cuda/kernels.h"
#include "cuda/nccl_ops.h"
#include "cuda/session.h"
#include "util/check.h"

namespace amaxcheck::gpu {
namespace {

[[noreturn]] void diverged(const Step& step, const std::string& why) {
  throw InputError(fmt::format("replay diverged at step {}: {} (is the schedule from this scenario?)", step.index, why));
}

std::string ref_text(const OpRef& ref) { return fmt::format("rank {} thread {} op #{}", ref.rank, ref.thread, ref.index); }

/// Copies are one batch when no pair reads or writes what another pair (or itself) writes;
/// otherwise each pair goes through scratch, in order, like the simulator's snapshot copies.
bool copies_independent(const Op& op) {
  for (std::size_t i = 0; i < op.writes.size(); ++i) {
    for (std::size_t j = 0; j < op.reads.size(); ++j) {
      if (op.writes[i].overlaps(op.reads[j])) return false;
    }
    for (std::size_t j = i + 1; j < op.writes.size(); ++j) {
      if (op.writes[i].overlaps(op.writes[j])) return false;
    }
  }
  return true;
}

void launch_copies(const RankResources& res, const Op& op, cudaStream_t stream, float* scratch) {
  AMAX_CHECK(op.reads.size() == op.writes.size(), "copy needs as many reads as writes");
  if (copies_independent(op)) {
    CopyBatch batch;
    for (std::size_t i = 0; i < op.reads.size(); ++i) {
      batch.src[batch.pairs] = res.at(op.reads[i]);
      batch.dst[batch.pairs] = res.at(op.writes[i]);
      batch.count[batch.pairs] = op.reads[i].count;
      if (++batch.pairs == copy_batch_max) {
        cuda_check(launch_copy_batch(batch, stream), "launching a copy");
        batch = CopyBatch{};
      }
    }
    cuda_check(launch_copy_batch(batch, stream), "launching a copy");
    return;
  }
  for (std::size_t i = 0; i < op.reads.size(); ++i) {
    CopyBatch in;
    in.pairs = 1;
    in.src[0] = res.at(op.reads[i]);
    in.dst[0] = scratch;
    in.count[0] = op.reads[i].count;
    cuda_check(launch_copy_batch(in, stream), "launching a staged copy");
    CopyBatch out;
    out.pairs = 1;
    out.src[0] = scratch;
    out.dst[0] = res.at(op.writes[i]);
    out.count[0] = op.reads[i].count;
    cuda_check(launch_copy_batch(out, stream), "launching a staged copy");
  }
}

}  // namespace

void Session::replay(const std::vector<Step>& schedule, GpuRunResult& result) {
  ReplayState state;
  const auto start = std::chrono::steady_clock::now();
  try {
    for (const Step& step : schedule) {
      replay_step(step, state);
      ++result.steps_replayed;
    }
    probe_leftovers(state, result);
  } catch (const HangDetected& hang) {
    handle_hang(hang.what(), state, result);
  } catch (const GpuError& error) {
    // Cleaned up as a hang (abort, open the gates, drain), so that under MPI the other
    // processes learn of it and skip the read-back; the caller reports a device error.
    result.device_error = error.what();
    handle_hang(error.what(), state, result);
  }
  result.gate_timed_out = gates_->any_timed_out();
  result.replay_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

void Session::replay_step(const Step& step, ReplayState& state) {
  switch (step.action.kind) {
    case ActionKind::issue: issue(step, state); break;
    case ActionKind::execute: execute(step, state); break;
    case ActionKind::join: join(step, state); break;
    case ActionKind::complete: complete(step, state); break;
  }
}

void Session::issue(const Step& step, ReplayState& state) {
  const RankId r = step.action.rank;
  const ThreadId t = step.action.lane;
  if (r >= scenario_.ranks.size() || t >= scenario_.ranks[r].threads.size()) diverged(step, "no such thread");
  if (!is_local(r)) return;
  std::uint32_t& pc = state.pcs[{r, t}];
  const auto& program = scenario_.ranks[r].threads[t].program;
  if (pc >= program.size()) diverged(step, fmt::format("rank {} thread {} has no op left to issue", r, t));
  const OpRef ref{r, t, pc};
  if (!(step.op == ref)) diverged(step, fmt::format("expected {}, the schedule says {}", ref_text(ref), ref_text(step.op)));
  const Op& op = program[pc++];
  if (is_host_op(op.kind)) {
    run_host_op(r, op);
    return;
  }
  if (is_discarded_collective(op)) return;  // NCCL would discard it at the call: nothing to launch
  IssuedOp issued{ref, &op, gate_of_.at(r)[t][ref.index], false, false, 0};
  if (is_collective(op.kind)) issued.seq = state.comm_issued[{r, op.comm}]++;
  if (is_p2p(op.kind)) {
    const RankId peer = scenario_.comms.at(op.comm).members.at(op.peer);
    issued.seq = state.p2p_issued[{r, op.comm, peer, op.kind == OpKind::send}]++;
  }
  const int device = ranks_.at(r).device;
  std::uint32_t& queued = state.queued_on_gpu[device];
  if (queued >= options_.max_queued_ops_per_gpu) {
    throw InputError(fmt::format(
        "step {}: the schedule queues more than {} ops ahead of their execution on GPU {}; CUDA's launch queue "
        "could fill and block the host behind a closed gate, so the run stops here (pick a schedule that executes "
        "ops sooner, e.g. another --seed or --strategy)",
        step.index, options_.max_queued_ops_per_gpu, device));
  }
  ++queued;
  auto& queue = state.queues[{r, op.stream}];
  if (!is_p2p(op.kind)) {
    queue.push_back(issued);
    launch(r, issued);
    return;
  }
  // A group goes to NCCL at once (ncclGroupEnd), when its last op is issued: until then its ops
  // are held on the thread, as the engine holds them (ThreadState::held), and an op another
  // thread launches on the stream meanwhile runs before the group.
  std::vector<IssuedOp>& held = state.held[{r, t}];
  held.push_back(issued);
  const bool more = op.group != 0 && pc < program.size() && program[pc].group == op.group && is_p2p(program[pc].kind);
  if (more) return;
  const std::size_t n = held.size();
  for (const IssuedOp& h : held) {
    if (h.op->stream != op.stream) throw InputError(fmt::format("the send/recv group of '{}' on rank {} is not on one stream", op.name, r));
    queue.push_back(h);
  }
  held.clear();
  std::vector<const IssuedOp*> group;
  for (std::size_t i = queue.size() - n; i < queue.size(); ++i) group.push_back(&queue[i]);
  launch_p2p(r, group);
}

void Session::launch_gate_of(const IssuedOp& issued, cudaStream_t stream) {
  if (issued.gate < 0) return;
  const auto gate = static_cast<std::size_t>(issued.gate);
  const std::uint64_t timeout_ns = static_cast<std::uint64_t>(options_.gate_timeout_ms) * 1000000u;
  cuda_check(launch_gate(gates_->device_flag(gate), gates_->device_state(gate), timeout_ns, stream), "launching a gate");
}

void Session::launch_p2p(RankId r, const std::vector<const IssuedOp*>& ops) {
  RankResources& res = ranks_.at(r);
  const Op& first = *ops.front()->op;
  cuda_check(cudaSetDevice(res.device), "selecting the rank's device");
  cudaStream_t stream = res.streams.at(first.stream);
  for (const IssuedOp* q : ops) launch_gate_of(*q, stream);
  ncclComm_t h = comms_.handle(first.comm, r);
  if (h == nullptr) throw InputError(fmt::format("rank {} issues '{}' on a communicator it is not in", r, first.name));
  make_ready_to_call(h);
  std::vector<P2pCall> calls;
  for (const IssuedOp* q : ops) {
    const Op& op = *q->op;
    const bool send = op.kind == OpKind::send;
    calls.push_back(P2pCall{op.kind, send ? res.at(op.reads.at(0)) : nullptr, send ? nullptr : res.at(op.writes.at(0)),
                            send ? op.reads.at(0).count : op.writes.at(0).count, static_cast<int>(op.peer)});
  }
  if (enqueue_p2p(calls, h, stream)) in_progress_[h] = true;
  if (options_.gates) {
    for (const IssuedOp* q : ops) {
      cuda_check(cudaEventRecord(res.op_done.at(q->ref.thread).at(q->ref.index), stream), "recording a p2p op's end");
    }
  }
}

void Session::launch(RankId r, const IssuedOp& issued) {
  RankResources& res = ranks_.at(r);
  const Op& op = *issued.op;
  cuda_check(cudaSetDevice(res.device), "selecting the rank's device");
  cudaStream_t stream = res.streams.at(op.stream);
  switch (op.kind) {
    case OpKind::event_record:
      cuda_check(cudaEventRecord(res.events.at(op.event), stream), "cudaEventRecord");
      return;
    case OpKind::stream_wait_event:
    case OpKind::work_wait:
      cuda_check(cudaStreamWaitEvent(stream, res.events.at(op.event), 0), "cudaStreamWaitEvent");
      return;
    default: break;
  }
  launch_gate_of(issued, stream);
  // Formatted only on failure: this runs once per op.
  auto check = [&op](cudaError_t error) {
    if (error != cudaSuccess) cuda_check(error, fmt::format("launching {} ({})", op.name, to_string(op.kind)));
  };
  switch (op.kind) {
    case OpKind::fill: {
      CopyBatch batch;
      batch.pairs = 1;
      batch.src[0] = res.fill_values + res.fill_offset[issued.ref.thread][issued.ref.index];
      batch.dst[0] = res.at(op.writes.at(0));
      batch.count[0] = op.writes.at(0).count;
      check(launch_copy_batch(batch, stream));
      break;
    }
    case OpKind::local_amax:
      check(launch_absmax(res.at(op.reads.at(0)), Dtype::f32, op.reads.at(0).count, res.absmax_scratch.at(op.stream),
                          res.at(op.writes.at(0)), stream));
      break;
    case OpKind::fp8_cast:
      check(launch_fp8_cast(res.at(op.reads.at(0)), res.at(op.reads.at(1)), res.at(op.writes.at(0)),
                            op.reads.at(0).count, op.format, stream));
      break;
    case OpKind::copy: launch_copies(res, op, stream, res.copy_scratch.at(op.stream)); break;
    case OpKind::scale_update:
      check(launch_scale_update(res.at(op.writes.at(0)), res.at(op.writes.at(1)), res.at(op.writes.at(2)), op.scale,
                                stream));
      break;
    default: launch_collective(r, op); break;
  }
  // Only a gated replay waits for single ops; a free-running one (benchmarks) only drains.
  if (options_.gates) check(cudaEventRecord(res.op_done.at(issued.ref.thread).at(issued.ref.index), stream));
}

void Session::launch_collective(RankId r, const Op& op) {
  RankResources& res = ranks_.at(r);
  ncclComm_t h = comms_.handle(op.comm, r);
  if (h == nullptr) throw InputError(fmt::format("rank {} issues '{}' on a communicator it is not in", r, op.name));
  make_ready_to_call(h);
  const std::size_t members = scenario_.comms.at(op.comm).members.size();
  CollectiveCall call{op.kind, res.at(op.reads.at(0)), res.at(op.writes.at(0)), op.reads.at(0).count,
                      op.writes.at(0).count, op.reduce,
                      static_cast<int>(std::min<std::size_t>(op.root, members - 1))};
  if (enqueue_collective(call, h, res.streams.at(op.stream))) in_progress_[h] = true;
  // The caller records the op's end on the stream next. A non-blocking communicator may still
  // be queuing the kernel (ncclInProgress), and an event recorded before it would fire before
  // the collective ran. The data check connected every collective of the scenario, so this
  // wait needs no peer. (Send/recv are not waited here: their first call may connect to a
  // peer that this process issues later in the schedule.)
  make_ready_to_call(h);
}

void Session::run_host_op(RankId r, const Op& op) {
  RankResources& res = ranks_.at(r);
  const std::string what = fmt::format("{} '{}' on rank {}", to_string(op.kind), op.name, r);
  switch (op.kind) {
    case OpKind::stream_synchronize: {
      cudaStream_t stream = res.streams.at(op.stream);
      watchdog_->wait(what, [stream] { return Watchdog::stream_done(stream); });
      return;
    }
    case OpKind::event_synchronize: {
      cudaEvent_t event = res.events.at(op.event);
      watchdog_->wait(what, [event] { return Watchdog::event_done(event); });
      return;
    }
    case OpKind::device_synchronize:
      for (cudaStream_t stream : res.streams) watchdog_->wait(what, [stream] { return Watchdog::stream_done(stream); });
      return;
    default: return;  // host_signal / host_wait coordinate host threads only: nothing on the GPU
  }
}

void Session::pop_head(ReplayState& state, RankId rank, std::deque<IssuedOp>& queue) {
  --state.queued_on_gpu[ranks_.at(rank).device];
  queue.pop_front();
}

std::string Session::lane_of(RankId r, const IssuedOp& issued) const {
  return "stream " + scenario_.ranks.at(r).streams.at(issued.op->stream).name;
}

void Session::wait_done(RankId r, const IssuedOp& issued, const std::function<std::string()>& why) {
  cudaEvent_t done = ranks_.at(r).op_done.at(issued.ref.thread).at(issued.ref.index);
  if (done == nullptr) return;
  watchdog_->wait(why, [done] { return Watchdog::event_done(done); });
}

void Session::execute(const Step& step, ReplayState& state) {
  const RankId r = step.action.rank;
  if (!is_local(r)) return;
  auto& queue = state.queues[{r, step.action.lane}];
  if (queue.empty()) diverged(step, fmt::format("rank {} stream {} has nothing to execute", r, step.action.lane));
  IssuedOp& head = queue.front();
  if (!(head.ref == step.op) || is_comm_op(head.op->kind)) {
    diverged(step, fmt::format("the stream's head is {}, the schedule executes {}", ref_text(head.ref), ref_text(step.op)));
  }
  if (head.gate >= 0) gates_->release(static_cast<std::size_t>(head.gate));
  head.released = true;
  if (options_.gates) {
    wait_done(r, head, [&] {
      return fmt::format("step {}: {} '{}' on rank {} {}", step.index, to_string(head.op->kind), head.op->name, r,
                         lane_of(r, head));
    });
  }
  pop_head(state, r, queue);
}

void Session::join(const Step& step, ReplayState& state) {
  const RankId r = step.action.rank;
  if (!is_local(r)) return;
  auto& queue = state.queues[{r, step.action.lane}];
  if (queue.empty() || !(queue.front().ref == step.op) || !is_comm_op(queue.front().op->kind)) {
    diverged(step, fmt::format("rank {} stream {} has no collective {} at its head", r, step.action.lane,
                               ref_text(step.op)));
  }
  queue.front().joined = true;
  // A group starts as a whole (the engine joins it in one step).
  const std::uint32_t group = queue.front().op->group;
  for (std::size_t i = 1; group != 0 && i < queue.size() && is_p2p(queue[i].op->kind) && queue[i].op->group == group &&
                          queue[i].ref.thread == queue.front().ref.thread && queue[i].ref.index == queue.front().ref.index + i;
       ++i) {
    queue[i].joined = true;
  }
}

void Session::complete_p2p(const Step& step, ReplayState& state) {
  const CommId c = step.action.lane;
  const Communicator& comm = scenario_.comms[c];
  const Op& send = scenario_.ranks.at(step.op.rank).threads.at(step.op.thread).program.at(step.op.index);
  const RankId sender = step.op.rank;
  const RankId receiver = comm.members.at(send.peer);
  const int sender_member = member_index(comm, sender);
  const auto is_side = [&](RankId r, const IssuedOp& q) {
    if (!q.joined || q.released || !is_p2p(q.op->kind) || q.op->comm != c) return false;
    if (r == sender && q.ref == step.op) return true;
    return r == receiver && q.op->kind == OpKind::recv && static_cast<int>(q.op->peer) == sender_member && q.seq == step.seq;
  };
  std::vector<std::pair<RankId, std::deque<IssuedOp>*>> touched;
  for (RankId r : {sender, receiver}) {
    if (!is_local(r)) continue;
    bool found = false;
    for (auto& [key, queue] : state.queues) {
      if (key.first != r) continue;
      for (IssuedOp& q : queue) {
        if (found || !is_side(r, q)) continue;
        if (q.gate >= 0) gates_->release(static_cast<std::size_t>(q.gate));
        q.released = true;
        found = true;
        touched.emplace_back(r, &queue);
      }
    }
    if (!found) diverged(step, fmt::format("rank {} has not started its side of send/recv #{} on comm {}", r, step.seq, comm.name));
  }
  for (auto& [r, queue] : touched) settle_p2p(state, r, *queue);
}

void Session::settle_p2p(ReplayState& state, RankId r, std::deque<IssuedOp>& queue) {
  while (!queue.empty() && is_p2p(queue.front().op->kind) && queue.front().joined) {
    const IssuedOp& head = queue.front();
    std::size_t n = 1;
    while (head.op->group != 0 && n < queue.size() && is_p2p(queue[n].op->kind) && queue[n].op->group == head.op->group &&
           queue[n].ref.thread == head.ref.thread && queue[n].ref.index == head.ref.index + n) {
      ++n;
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (!queue[i].released) return;  // the group's kernel waits for its other gates
    }
    if (options_.gates) {
      const IssuedOp& last = queue[n - 1];
      wait_done(r, last, [&] { return fmt::format("send/recv '{}' on rank {} {}", last.op->name, r, lane_of(r, last)); });
    }
    for (std::size_t i = 0; i < n; ++i) pop_head(state, r, queue);
  }
}

void Session::complete(const Step& step, ReplayState& state) {
  const CommId c = step.action.lane;
  if (c >= scenario_.comms.size()) diverged(step, "no such communicator");
  if (step.op.rank < scenario_.ranks.size() && step.op.thread < scenario_.ranks[step.op.rank].threads.size() &&
      step.op.index < scenario_.ranks[step.op.rank].threads[step.op.thread].program.size() &&
      is_p2p(scenario_.ranks[step.op.rank].threads[step.op.thread].program[step.op.index].kind)) {
    complete_p2p(step, state);
    return;
  }
  const std::uint64_t seq = state.comm_completed[c]++;
  struct Member {
    RankId rank;
    std::deque<IssuedOp>* queue;
  };
  std::vector<Member> members;
  for (RankId r : scenario_.comms[c].members) {
    if (!is_local(r)) continue;
    std::deque<IssuedOp>* found = nullptr;
    for (auto& [key, queue] : state.queues) {
      if (key.first != r || queue.empty()) continue;
      const IssuedOp& head = queue.front();
      if (head.joined && head.op->comm == c && head.seq == seq) found = &queue;
    }
    if (found == nullptr) diverged(step, fmt::format("rank {} has not joined collective #{} of comm {}", r, seq, c));
    members.push_back({r, found});
  }
  for (Member& m : members) {
    IssuedOp& head = m.queue->front();
    if (head.gate >= 0) gates_->release(static_cast<std::size_t>(head.gate));
    head.released = true;
  }
  if (options_.gates) {
    for (Member& m : members) {
      const IssuedOp& head = m.queue->front();
      wait_done(m.rank, head, [&] {
        return fmt::format("step {}: collective #{} '{}' of comm {} on rank {}", step.index, seq, head.op->name,
                           scenario_.comms[c].name, m.rank);
      });
    }
  }
  for (Member& m : members) pop_head(state, m.rank, *m.queue);
}

void Session::probe_leftovers(ReplayState& state, GpuRunResult& result) {
  bool left = false;
  for (auto& [key, queue] : state.queues) {
    for (IssuedOp& op : queue) {
      left = true;
      if (op.gate >= 0) gates_->release(static_cast<std::size_t>(op.gate));
    }
  }
  if (left) {
    result.simulator_was_stuck = true;
    result.notes.push_back("the schedule left issued ops unfinished (a simulated deadlock); their gates were "
                           "opened to see whether the GPUs hang too");
  }
  for (auto& [key, queue] : state.queues) {
    while (!queue.empty()) {
      IssuedOp& op = queue.front();
      op.released = true;
      wait_done(key.first, op, [&] {
        return fmt::format("leftover {} '{}' on rank {} {}", to_string(op.op->kind), op.op->name, key.first,
                           lane_of(key.first, op));
      });
      pop_head(state, key.first, queue);
    }
  }
  if (left) result.notes.push_back("the GPUs finished every leftover op: no hang on hardware");
  for (auto& [r, res] : ranks_) {
    for (cudaStream_t stream : res.streams) {
      watchdog_->wait(fmt::format("draining rank {}", r), [stream] { return Watchdog::stream_done(stream); });
    }
  }
}

void Session::handle_hang(const std::string& reason, ReplayState& state, GpuRunResult& result) {
  result.hang = true;
  result.hang_reason = reason;
  for (auto& [key, queue] : state.queues) {
    for (const IssuedOp& op : queue) {
      const std::string where = op.released ? "released, not finished"
                                            : (op.joined ? "joined, waiting for the other members"
                                                         : "gated, never released by the schedule");
      result.stuck.push_back({key.first, lane_of(key.first, op), op.ref, op.op->name, op.op->origin, where});
    }
  }
  comms_.abort_all();
  aborted_ = true;
  watchdog_->forget_all();
  gates_->release_all();
  // After the abort NCCL kernels return and gates are open: the device should drain quickly.
  for (auto& [r, res] : ranks_) {
    for (cudaStream_t stream : res.streams) {
      try {
        watchdog_->wait_for(fmt::format("draining rank {} after the abort", r),
                            [stream] { return Watchdog::stream_done(stream); }, std::chrono::milliseconds(5000));
      } catch (const std::exception& failure) {
        device_healthy_ = false;
        result.notes.push_back(fmt::format("rank {} did not drain after ncclCommAbort: {}", r, failure.what()));
      }
    }
  }
}

}  // namespace amaxcheck::gpu
