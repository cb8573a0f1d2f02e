#pragma once
// Tiny hand-written scenarios for the scheduler tests: litmus programs whose interleavings
// are known in closed form, and the two seed hazards planted in the smallest setting.
#include <string>

#include "model/builder.h"
#include "protocols/protocol.h"

namespace amaxcheck::sched::testing {

/// n ranks, each with one thread of k host-blocking stream_synchronize ops on an idle stream.
/// Only the issues interleave: (nk)! / (k!)^n schedules, all in one equivalence class (the
/// ranks share nothing).
inline Scenario independent_syncs(std::uint32_t ranks, std::uint32_t syncs) {
  ScenarioBuilder b("independent_syncs");
  for (std::uint32_t i = 0; i < ranks; ++i) {
    const RankId r = b.rank();
    const ThreadId t = b.thread(r, "main");
    const StreamId s = b.stream(r, "compute");
    for (std::uint32_t k = 0; k < syncs; ++k) b.op(r, t, ScenarioBuilder::host(OpKind::stream_synchronize, s));
  }
  return b.build();
}

/// One rank with `threads` host threads; thread i signals flag (i < shared ? 0 : i) `signals`
/// times. The threads that share flag 0 conflict on every signal, the others commute.
inline Scenario signalling_threads(std::uint32_t threads, std::uint32_t shared, std::uint32_t signals) {
  ScenarioBuilder b("signalling_threads");
  const RankId r = b.rank();
  for (std::uint32_t i = 0; i < threads; ++i) b.flag(r, "flag" + std::to_string(i));
  for (std::uint32_t i = 0; i < threads; ++i) {
    const ThreadId t = b.thread(r, "t" + std::to_string(i));
    for (std::uint32_t k = 0; k < signals; ++k) b.op(r, t, ScenarioBuilder::host(OpKind::host_signal, i < shared ? 0 : i));
  }
  return b.build();
}

/// k ranks, each with one thread that queues one kernel on its own stream: an issue then an
/// execute per rank. (2k)! / 2^k interleavings, one equivalence class.
inline Scenario single_kernels(std::uint32_t ranks) {
  ScenarioBuilder b("single_kernels");
  for (std::uint32_t i = 0; i < ranks; ++i) {
    const RankId r = b.rank();
    const ThreadId t = b.thread(r, "main");
    const StreamId s = b.stream(r, "compute");
    const BufferId x = b.buffer(r, "x", 1);
    b.op(r, t, ScenarioBuilder::fill(s, {x, 0, 1}, {1.0f}));
  }
  return b.build();
}

/// One thread queues n kernels on one stream, all writing one buffer. The stream runs its head
/// while the thread appends at the tail: Catalan(n) interleavings (an op runs after its issue),
/// one equivalence class.
inline Scenario stream_of_kernels(std::uint32_t kernels) {
  ScenarioBuilder b("stream_of_kernels");
  const RankId r = b.rank();
  const ThreadId t = b.thread(r, "main");
  const StreamId s = b.stream(r, "compute");
  const BufferId x = b.buffer(r, "x", 1);
  for (std::uint32_t k = 0; k < kernels; ++k) b.op(r, t, ScenarioBuilder::fill(s, {x, 0, 1}, {static_cast<float>(k)}));
  return b.build();
}

/// m ranks issue one all-reduce each on one communicator: an issue and a join per rank, then
/// the completion. (2m)! / 2^m interleavings, one equivalence class (joins commute).
inline Scenario one_collective(std::uint32_t ranks) {
  ScenarioBuilder b("one_collective");
  std::vector<RankId> members;
  for (std::uint32_t i = 0; i < ranks; ++i) members.push_back(b.rank());
  const CommId comm = b.comm("dp", members);
  for (RankId r : members) {
    const ThreadId t = b.thread(r, "main");
    const StreamId s = b.stream(r, "nccl");
    const BufferId x = b.buffer(r, "x", 1, {static_cast<float>(r)});
    b.op(r, t, ScenarioBuilder::all_reduce(s, comm, {x, 0, 1}, {x, 0, 1}));
  }
  return b.build();
}

/// k ranks, each with two threads that signal one flag of their rank once: (2k)! interleavings,
/// 2^k equivalence classes (the two signals of a rank conflict; ranks are independent).
inline Scenario ranks_with_racing_signals(std::uint32_t ranks) {
  ScenarioBuilder b("ranks_with_racing_signals");
  for (std::uint32_t i = 0; i < ranks; ++i) {
    const RankId r = b.rank();
    b.flag(r, "flag");
    for (const char* name : {"a", "b"}) b.op(r, b.thread(r, name), ScenarioBuilder::host(OpKind::host_signal, 0));
  }
  return b.build();
}

/// Seed hazard 1 in miniature: every rank fills its amax into the global buffer, all-reduces it
/// asynchronously on a side stream, and copies it back on the compute stream. With
/// `wait_after_copy` the handle's wait comes after the copy-back: a data race.
inline Scenario wait_after_copy(std::uint32_t ranks, bool wait_after_copy = true) {
  ScenarioBuilder b(wait_after_copy ? "wait_after_copy" : "wait_before_copy");
  std::vector<RankId> members;
  for (std::uint32_t i = 0; i < ranks; ++i) members.push_back(b.rank());
  const CommId comm = b.comm("amax", members);
  for (RankId r : members) {
    const ThreadId t = b.thread(r, "main");
    const StreamId compute = b.stream(r, "compute"), side = b.stream(r, "amax");
    const EventId filled = b.event(r, "filled"), reduced = b.event(r, "reduced");
    const BufferId global = b.buffer(r, "amax_global", 1);
    const BufferId history = b.buffer(r, "amax_history", 1);
    b.op(r, t, ScenarioBuilder::fill(compute, {global, 0, 1}, {1.0f + static_cast<float>(r)}, "local_amax"));
    b.op(r, t, ScenarioBuilder::record(compute, filled, "record_filled"));
    b.op(r, t, ScenarioBuilder::wait(side, filled, "side_waits_fill"));
    b.op(r, t, ScenarioBuilder::all_reduce(side, comm, {global, 0, 1}, {global, 0, 1}, "amax_allreduce"));
    b.op(r, t, ScenarioBuilder::record(side, reduced, "work_handle"));
    Op wait = ScenarioBuilder::wait(compute, reduced, "handle_wait", OpKind::work_wait);
    Op copy = ScenarioBuilder::copy(compute, {global, 0, 1}, {history, 0, 1}, "copy_back");
    if (wait_after_copy) {
      b.op(r, t, copy);
      b.op(r, t, wait);
    } else {
      b.op(r, t, wait);
      b.op(r, t, copy);
    }
  }
  return b.build();
}

/// Seed hazard 2 in miniature: each rank issues the amax all-reduce from its main thread and a
/// gradient all-reduce from a second thread, both on the shared DP communicator. The order of
/// the two collectives on the communicator is decided by the schedule, per rank.
inline Scenario shared_comm_two_threads(std::uint32_t ranks) {
  ScenarioBuilder b("shared_comm_two_threads");
  std::vector<RankId> members;
  for (std::uint32_t i = 0; i < ranks; ++i) members.push_back(b.rank());
  const CommId dp = b.comm("dp", members);
  for (RankId r : members) {
    const ThreadId main = b.thread(r, "main");
    const ThreadId grad_thread = b.thread(r, "autograd");
    const StreamId amax_stream = b.stream(r, "amax"), grad_stream = b.stream(r, "grad");
    const BufferId amax = b.buffer(r, "amax", 1, {1.0f + static_cast<float>(r)});
    const BufferId grad = b.buffer(r, "grad", 8);
    b.op(r, main, ScenarioBuilder::all_reduce(amax_stream, dp, {amax, 0, 1}, {amax, 0, 1}, "amax_allreduce"));
    b.op(r, grad_thread,
         ScenarioBuilder::all_reduce(grad_stream, dp, {grad, 0, 8}, {grad, 0, 8}, "grad_allreduce", ReduceOp::sum));
  }
  return b.build();
}

/// The smallest racy collective: each rank fills a buffer, all-reduces it in place on one
/// stream and copies it on another stream that never waits (a data race on every rank).
inline Scenario racy_collective(std::uint32_t ranks) {
  ScenarioBuilder b("racy_collective");
  std::vector<RankId> members;
  for (std::uint32_t i = 0; i < ranks; ++i) members.push_back(b.rank());
  const CommId comm = b.comm("amax", members);
  for (RankId r : members) {
    const ThreadId t = b.thread(r, "main");
    const StreamId compute = b.stream(r, "compute"), side = b.stream(r, "side");
    const BufferId global = b.buffer(r, "amax_global", 1, {1.0f + static_cast<float>(r)});
    const BufferId history = b.buffer(r, "amax_history", 1);
    b.op(r, t, ScenarioBuilder::all_reduce(side, comm, {global, 0, 1}, {global, 0, 1}, "amax_allreduce"));
    b.op(r, t, ScenarioBuilder::copy(compute, {global, 0, 1}, {history, 0, 1}, "copy_back"));
  }
  return b.build();
}

/// Rank 2 sends x to rank 0 and receives y from rank 1 in one group; rank 0 forwards what it got
/// to rank 2's other stream, which then reads y into `out` (checked: 7, rank 1's value, with
/// `check_out`). The group's pairs complete one by one: the forward can arrive, and the read run,
/// before rank 1 even sends. `read_on_group_stream`: the read runs on the group's own stream
/// instead, behind the whole group, and always reads 7.
inline Scenario group_completed_in_part(bool read_on_group_stream, bool check_out = false) {
  ScenarioBuilder b("group_completed_in_part");
  for (int i = 0; i < 3; ++i) b.rank();
  const CommId c = b.comm("c", {0, 1, 2});
  const CommId d = b.comm("d", {0, 2});
  ThreadId t[3];
  StreamId s[3];
  for (RankId r = 0; r < 3; ++r) {
    t[r] = b.thread(r, "main");
    s[r] = b.stream(r, "S");
  }
  const StreamId side = b.stream(2, "T");
  const BufferId a = b.buffer(0, "a", 1), v = b.buffer(1, "v", 1, {7.0f});
  const BufferId x = b.buffer(2, "x", 1, {5.0f}), y = b.buffer(2, "y", 1), z = b.buffer(2, "z", 1), out = b.buffer(2, "out", 1);
  b.op(0, t[0], ScenarioBuilder::recv(s[0], c, 2, {a, 0, 1}, "recv_a"));
  b.op(0, t[0], ScenarioBuilder::send(s[0], d, 1, {a, 0, 1}, "forward_a"));
  b.op(1, t[1], ScenarioBuilder::send(s[1], c, 2, {v, 0, 1}, "send_v"));
  b.op(2, t[2], ScenarioBuilder::send(s[2], c, 0, {x, 0, 1}, "send_x", 1));
  b.op(2, t[2], ScenarioBuilder::recv(s[2], c, 1, {y, 0, 1}, "recv_y", 1));
  b.op(2, t[2], ScenarioBuilder::recv(side, d, 0, {z, 0, 1}, "recv_z"));
  b.op(2, t[2], ScenarioBuilder::copy(read_on_group_stream ? s[2] : side, {y, 0, 1}, {out, 0, 1}, "read_y"));
  if (check_out) b.scenario().checks.push_back(ReplicaCheck{"out", {{2, {out, 0, 1}}}, {7.0f}});
  return b.build();
}

/// A planted collective order swap: rank 1 issues the amax and gradient all-reduces on the
/// shared communicator in the opposite order of rank 0.
inline Scenario collective_order_swap() {
  ScenarioBuilder b("collective_order_swap");
  const RankId r0 = b.rank(), r1 = b.rank();
  const CommId dp = b.comm("dp", {r0, r1});
  for (RankId r : {r0, r1}) {
    const ThreadId t = b.thread(r, "main");
    const StreamId s = b.stream(r, "nccl");
    const BufferId amax = b.buffer(r, "amax", 1, {1.0f + static_cast<float>(r)});
    const BufferId grad = b.buffer(r, "grad", 8);
    Op small = ScenarioBuilder::all_reduce(s, dp, {amax, 0, 1}, {amax, 0, 1}, "amax_allreduce");
    Op large = ScenarioBuilder::all_reduce(s, dp, {grad, 0, 8}, {grad, 0, 8}, "grad_allreduce", ReduceOp::sum);
    if (r == r1) std::swap(small, large);
    b.op(r, t, small);
    b.op(r, t, large);
  }
  return b.build();
}

/// A te-async protocol point of `dp` ranks, 2 modules and 2 iterations: collectives, copies and
/// scale updates, most of what a step can do.
inline Scenario te_async_point(CommChoice comm, WaitPoint wait, std::uint32_t dp) {
  ProtocolKnobs knobs;
  knobs.protocol = ProtocolName::te_async;
  knobs.comm = comm;
  knobs.wait = wait;
  knobs.dp = dp;
  knobs.modules = 2;
  knobs.iters = 2;
  return build_protocol(knobs);
}

/// Rank 1 issues the amax reduction, but behind a gradient bucket on the same stream that
/// rank 0 never issues: rank 1 has not joined the reduction although it issued it.
inline Scenario issued_behind_a_collective_never_matched() {
  ScenarioBuilder b("blocked_behind");
  const RankId r0 = b.rank(), r1 = b.rank();
  const CommId amax_comm = b.comm("amax", {r0, r1});
  const CommId dp = b.comm("dp", {r0, r1});
  for (RankId r : {r0, r1}) {
    const ThreadId t = b.thread(r, "main");
    const StreamId s = b.stream(r, "nccl");
    const BufferId amax = b.buffer(r, "amax", 1);
    const BufferId grad = b.buffer(r, "grad", 8);
    if (r == r1) b.op(r, t, ScenarioBuilder::all_reduce(s, dp, {grad, 0, 8}, {grad, 0, 8}, "grad_bucket", ReduceOp::sum));
    b.op(r, t, ScenarioBuilder::all_reduce(s, amax_comm, {amax, 0, 1}, {amax, 0, 1}, "amax_reduce"));
  }
  return b.build();
}

}  // namespace amaxcheck::sched::testing
