// Each detector fires on a planted hazard and stays silent on its fixed twin.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <functional>
#include <set>

#include "detectors/deadlock_detector.h"
#include "engine/litmus.h"
#include "model/builder.h"
#include "scheduler/scenarios.h"

namespace amaxcheck {
namespace {

using litmus::has;
using litmus::run_once;

/// The deadlock hazards of one run of `s` (run_once); a test failure when there is none.
std::vector<Hazard> deadlocks_of(const Scenario& s) {
  const std::vector<Hazard> hazards = run_once(s);
  std::vector<Hazard> deadlocks;
  for (const Hazard& h : hazards) {
    if (h.kind == HazardKind::deadlock) deadlocks.push_back(h);
  }
  EXPECT_FALSE(deadlocks.empty()) << s.name << ": " << litmus::describe(hazards);
  return deadlocks;
}

/// Two ranks issuing a small (amax) and a gradient all-reduce on one communicator: by default
/// a large one, summed; with `grad_elems` 1 and max, one of the amax's own signature.
Scenario two_collectives_on_one_comm(bool swap_on_rank1, bool rank1_skips_second, std::uint32_t grad_elems = 8,
                                     ReduceOp grad_reduce = ReduceOp::sum) {
  ScenarioBuilder b("shared_comm");
  const RankId r0 = b.rank(), r1 = b.rank();
  const CommId dp = b.comm("dp", {r0, r1});
  for (RankId r : {r0, r1}) {
    const ThreadId t = b.thread(r, "main");
    const StreamId s = b.stream(r, "nccl");
    const BufferId amax = b.buffer(r, "amax", 1, {1.0f + static_cast<float>(r)});
    const BufferId grad = b.buffer(r, "grad", grad_elems);
    Op small = ScenarioBuilder::all_reduce(s, dp, {amax, 0, 1}, {amax, 0, 1}, "amax_reduce");
    Op large = ScenarioBuilder::all_reduce(s, dp, {grad, 0, grad_elems}, {grad, 0, grad_elems}, "grad_bucket", grad_reduce);
    if (r == r1 && swap_on_rank1) std::swap(small, large);
    b.op(r, t, small);
    if (!(r == r1 && rank1_skips_second)) b.op(r, t, large);
  }
  return b.build();
}

TEST(CollectiveDetector, reports_a_collective_order_swapped_on_one_rank_of_a_shared_comm) {
  const auto hazards = run_once(two_collectives_on_one_comm(true, false));
  ASSERT_TRUE(has(hazards, HazardKind::collective_mismatch));
  EXPECT_TRUE(has(hazards, HazardKind::deadlock)) << "a mismatched rendezvous never completes";
  for (const auto& h : hazards) {
    if (h.kind == HazardKind::deadlock) {
      EXPECT_NE(h.summary.find("hang: ranks wait in collective #0 on comm dp: its members joined it with mismatched ops (rank 0 amax_reduce, "
                          "rank 1 grad_bucket): NCCL's behaviour is undefined (wrong data or a hang), and the model stops here"),
                std::string::npos)
          << h.summary;
    }
    if (h.kind != HazardKind::collective_mismatch) continue;
    ASSERT_EQ(h.participants.size(), 2u);
    EXPECT_EQ(h.participants[0].rank, 0u);
    EXPECT_EQ(h.participants[1].rank, 1u);
    EXPECT_NE(h.summary.find("size mismatch"), std::string::npos) << h.summary;
  }
}

/// Seed hazard 2's silent form: an amax and a gradient all-reduce of one signature, swapped on
/// rank 1. NCCL matches them by order and reduces each with the other: no size tells them apart.
Scenario same_signature_swapped(bool swap_on_rank1) {
  return two_collectives_on_one_comm(swap_on_rank1, false, 1, ReduceOp::max);
}

TEST(CollectiveDetector, reports_two_different_ops_of_one_signature_matched_by_a_swapped_order) {
  const auto hazards = run_once(same_signature_swapped(true));
  ASSERT_TRUE(has(hazards, HazardKind::collective_mismatch));
  EXPECT_FALSE(has(hazards, HazardKind::deadlock)) << "same signature: the collective completes (with wrong data)";
  std::vector<std::string> summaries;  // one per collective: #0 and #1 both pair different ops
  for (const auto& h : hazards) {
    if (h.kind == HazardKind::collective_mismatch) summaries.push_back(h.summary);
  }
  ASSERT_EQ(summaries.size(), 2u);
  EXPECT_THAT(summaries, ::testing::Contains(::testing::StartsWith(
                             "same signature, different ops (NCCL reduces them together) on comm dp collective #0: rank 0 "
                             "issued amax_reduce (all_reduce count=1 dtype=f32 op=max) but rank 1 issued grad_bucket")));
  EXPECT_TRUE(run_once(same_signature_swapped(false)).empty());
}

/// Two ranks, one op each on comm "c" (member i is rank i), made by `op_of(rank)`.
Scenario one_comm_op_per_rank(const std::function<Op(RankId, StreamId, CommId, BufferId)>& op_of) {
  ScenarioBuilder b("one_op_each");
  const RankId r0 = b.rank(), r1 = b.rank();
  const CommId c = b.comm("c", {r0, r1});
  for (RankId r : {r0, r1}) {
    const ThreadId t = b.thread(r, "main");
    b.op(r, t, op_of(r, b.stream(r, "s"), c, b.buffer(r, "x", 2)));
  }
  return b.build();
}

/// The summaries of the collective_mismatch hazards of one run.
std::vector<std::string> mismatches(const Scenario& s) {
  std::vector<std::string> out;
  for (const Hazard& h : run_once(s)) {
    if (h.kind == HazardKind::collective_mismatch) out.push_back(h.summary);
  }
  return out;
}

// NCCL does not check that members agree on dtype or root: a member reducing bf16 against one
// reducing f32 of the same count, or two roots of one broadcast, exchange garbage or hang.
TEST(CollectiveDetector, reports_members_that_disagree_on_dtype_or_root_and_is_silent_when_they_agree) {
  for (const bool disagree : {false, true}) {
    const Scenario all_reduce = one_comm_op_per_rank([&](RankId r, StreamId s, CommId c, BufferId x) {
      Op op = ScenarioBuilder::all_reduce(s, c, {x, 0, 2}, {x, 0, 2}, "amax_reduce");
      if (disagree && r == 1) op.dtype = Dtype::bf16;
      return op;
    });
    const Scenario broadcast = one_comm_op_per_rank([&](RankId r, StreamId s, CommId c, BufferId x) {
      Op op = ScenarioBuilder::all_reduce(s, c, {x, 0, 2}, {x, 0, 2}, "scale_broadcast");
      op.kind = OpKind::broadcast;
      op.root = disagree ? r : 0;  // each rank names itself the root
      return op;
    });
    const Scenario send_recv = one_comm_op_per_rank([&](RankId r, StreamId s, CommId c, BufferId x) {
      Op op = r == 0 ? ScenarioBuilder::send(s, c, 1, {x, 0, 2}) : ScenarioBuilder::recv(s, c, 0, {x, 0, 2});
      if (disagree && r == 1) op.dtype = Dtype::bf16;
      return op;
    });
    for (const auto& [scenario, why] : {std::pair{&all_reduce, "dtype mismatch"}, std::pair{&broadcast, "root mismatch"},
                                        std::pair{&send_recv, "dtype mismatch"}}) {
      const std::vector<std::string> found = mismatches(*scenario);
      if (!disagree) {
        EXPECT_THAT(found, testing::IsEmpty()) << why;
        continue;
      }
      ASSERT_EQ(found.size(), 1U) << why;
      EXPECT_THAT(found[0], testing::StartsWith(why));
    }
  }
}

TEST(CollectiveDetector, is_silent_when_every_rank_issues_the_same_order) {
  EXPECT_TRUE(run_once(two_collectives_on_one_comm(false, false)).empty());
}

TEST(CollectiveDetector, reports_a_collective_one_rank_never_issues) {
  const auto hazards = run_once(two_collectives_on_one_comm(false, true));
  ASSERT_TRUE(has(hazards, HazardKind::unjoined_collective));
  ASSERT_TRUE(has(hazards, HazardKind::deadlock));
  for (const auto& h : hazards) {
    if (h.kind == HazardKind::deadlock) {
      EXPECT_NE(h.summary.find("collective #1 on comm dp (grad_bucket): rank 1 never issues it: its program has no collective left on comm dp"), std::string::npos)
          << h.summary;
      EXPECT_FALSE(is_wait_for_cycle(h)) << h.summary;
    }
  }
}

/// Amax on its own comm, gradients on the DP comm, launched in a rank-dependent order.
Scenario separate_comms_rank_dependent(KernelConcurrency kernels, bool rank_dependent) {
  ScenarioBuilder b("separate_comms");
  b.kernels(kernels);
  const RankId r0 = b.rank(), r1 = b.rank();
  const CommId dp = b.comm("dp", {r0, r1});
  const CommId amax_comm = b.comm("amax", {r0, r1});
  for (RankId r : {r0, r1}) {
    const ThreadId t = b.thread(r, "backward");
    const StreamId grad_stream = b.stream(r, "grad");
    const StreamId amax_stream = b.stream(r, "amax");
    const BufferId amax = b.buffer(r, "amax", 1);
    const BufferId grad = b.buffer(r, "grad", 8);
    Op g = ScenarioBuilder::all_reduce(grad_stream, dp, {grad, 0, 8}, {grad, 0, 8}, "grad_bucket", ReduceOp::sum);
    Op a = ScenarioBuilder::all_reduce(amax_stream, amax_comm, {amax, 0, 1}, {amax, 0, 1}, "amax_reduce");
    if (rank_dependent && r == r1) {
      b.op(r, t, g);
      b.op(r, t, a);
    } else {
      b.op(r, t, a);
      b.op(r, t, g);
    }
  }
  return b.build();
}

TEST(DeadlockDetector, reports_the_wait_for_cycle_of_rank_dependent_order_under_serialized_kernels) {
  const auto hazards = run_once(separate_comms_rank_dependent(KernelConcurrency::serialized, true));
  ASSERT_TRUE(has(hazards, HazardKind::deadlock));
  for (const auto& h : hazards) {
    if (h.kind != HazardKind::deadlock) continue;
    EXPECT_NE(h.summary.find("wait-for cycle"), std::string::npos) << h.summary;
    EXPECT_TRUE(is_wait_for_cycle(h)) << h.summary;
    EXPECT_GE(h.participants.size(), 2u);
  }
  EXPECT_FALSE(has(hazards, HazardKind::collective_mismatch)) << "a separate comm fixes the matching";
}

/// Rank 0 issues A (comm c1), waits for it, then B (comm c2); rank 1 issues B and waits for it,
/// but its program has no A. A missing op, not an ordering: no wait-for cycle may be claimed.
Scenario a_member_whose_program_lacks_the_collective() {
  ScenarioBuilder b("missing_collective");
  const RankId r0 = b.rank(), r1 = b.rank();
  const CommId c1 = b.comm("c1", {r0, r1}), c2 = b.comm("c2", {r0, r1});
  for (RankId r : {r0, r1}) {
    const ThreadId t = b.thread(r, "main");
    const StreamId s = b.stream(r, "s"), u = b.stream(r, "t");
    const BufferId x = b.buffer(r, "x", 1, {1.0f});
    if (r == r0) {
      b.op(r, t, ScenarioBuilder::all_reduce(s, c1, {x, 0, 1}, {x, 0, 1}, "A"));
      b.op(r, t, ScenarioBuilder::host(OpKind::stream_synchronize, s));
    }
    b.op(r, t, ScenarioBuilder::all_reduce(u, c2, {x, 0, 1}, {x, 0, 1}, "B"));
    if (r == r1) b.op(r, t, ScenarioBuilder::host(OpKind::stream_synchronize, u));
  }
  return b.build();
}

TEST(DeadlockDetector, a_collective_missing_from_a_member_s_program_is_no_wait_for_cycle) {
  const auto hazards = run_once(a_member_whose_program_lacks_the_collective());
  ASSERT_TRUE(has(hazards, HazardKind::deadlock)) << litmus::describe(hazards);
  for (const auto& h : hazards) {
    if (h.kind != HazardKind::deadlock) continue;
    EXPECT_FALSE(is_wait_for_cycle(h)) << h.summary;
    EXPECT_NE(h.summary.find("collective #0 on comm c1 (A): rank 1 never issues it: its program has no collective left on "
                             "comm c1"),
              std::string::npos)
        << h.summary;
  }
}

/// Rank-dependent order with blocking waits: rank 0 issues A (comm c1) and waits for it on the
/// host (`sync`: a stream synchronize, a device synchronize, or an event synchronize on a record
/// behind A) before it issues B (comm c2); rank 1 does the same with B first. Each stream's
/// collective waits for a peer thread that will issue its match only after its own wait returns:
/// rank 0's stream -> rank 1's thread -> rank 1's stream -> rank 0's thread -> rank 0's stream.
Scenario blocking_waits_in_rank_dependent_order(OpKind sync = OpKind::stream_synchronize) {
  ScenarioBuilder b("blocking_rank_order");
  const RankId r0 = b.rank(), r1 = b.rank();
  const CommId c1 = b.comm("c1", {r0, r1}), c2 = b.comm("c2", {r0, r1});
  for (RankId r : {r0, r1}) {
    const ThreadId t = b.thread(r, "main");
    const StreamId s = b.stream(r, "s");
    const EventId e = b.event(r, "done");
    const BufferId x = b.buffer(r, "x", 1, {1.0f});
    const CommId first = r == r0 ? c1 : c2, second = r == r0 ? c2 : c1;
    b.op(r, t, ScenarioBuilder::all_reduce(s, first, {x, 0, 1}, {x, 0, 1}, first == c1 ? "A" : "B"));
    if (sync == OpKind::event_synchronize) b.op(r, t, ScenarioBuilder::record(s, e, "record_done"));
    b.op(r, t, ScenarioBuilder::host(sync, sync == OpKind::event_synchronize ? e : s));
    b.op(r, t, ScenarioBuilder::all_reduce(s, second, {x, 0, 1}, {x, 0, 1}, second == c1 ? "A" : "B"));
  }
  return b.build();
}

TEST(DeadlockDetector, a_collective_not_issued_yet_waits_for_the_threads_that_would_issue_it) {
  // The peer's thread has the match left in its program, so the hang is an ordering: the edge
  // from the joined collective to that thread closes the cycle, and each host synchronization
  // waits for what it drains.
  for (const OpKind sync : {OpKind::stream_synchronize, OpKind::device_synchronize, OpKind::event_synchronize}) {
    for (const Hazard& h : deadlocks_of(blocking_waits_in_rank_dependent_order(sync))) {
      EXPECT_TRUE(is_wait_for_cycle(h)) << to_string(sync) << ": " << h.summary;
      EXPECT_EQ(h.participants.size(), 4u) << h.summary;
    }
  }
}

/// Rank 0's thread `waiter` waits on a host flag that its thread `worker` signals once A (comm
/// c1) is done; then it issues B (comm c2). Rank 1 issues B, waits for it, then A: rank 0's
/// waiter -> its worker -> its stream -> rank 1's thread -> rank 1's stream -> rank 0's waiter.
Scenario host_flag_in_rank_dependent_order() {
  ScenarioBuilder b("host_flag_rank_order");
  const RankId r0 = b.rank(), r1 = b.rank();
  const CommId c1 = b.comm("c1", {r0, r1}), c2 = b.comm("c2", {r0, r1});
  const ThreadId waiter = b.thread(r0, "waiter"), worker = b.thread(r0, "worker"), t1 = b.thread(r1, "main");
  const StreamId s = b.stream(r0, "s"), u = b.stream(r1, "u");
  const std::uint32_t flag = b.flag(r0, "a_done");
  const BufferId x0 = b.buffer(r0, "x", 1, {1.0f}), x1 = b.buffer(r1, "x", 1, {2.0f});
  Op wait = ScenarioBuilder::host(OpKind::host_wait, flag, "wait_a_done");
  wait.count = 1;
  b.op(r0, waiter, wait);
  b.op(r0, waiter, ScenarioBuilder::all_reduce(s, c2, {x0, 0, 1}, {x0, 0, 1}, "B"));
  b.op(r0, worker, ScenarioBuilder::all_reduce(s, c1, {x0, 0, 1}, {x0, 0, 1}, "A"));
  b.op(r0, worker, ScenarioBuilder::host(OpKind::stream_synchronize, s));
  b.op(r0, worker, ScenarioBuilder::host(OpKind::host_signal, flag, "signal_a_done"));
  b.op(r1, t1, ScenarioBuilder::all_reduce(u, c2, {x1, 0, 1}, {x1, 0, 1}, "B"));
  b.op(r1, t1, ScenarioBuilder::host(OpKind::stream_synchronize, u));
  b.op(r1, t1, ScenarioBuilder::all_reduce(u, c1, {x1, 0, 1}, {x1, 0, 1}, "A"));
  return b.build();
}

TEST(DeadlockDetector, a_host_wait_waits_for_the_threads_that_could_signal_its_flag) {
  for (const Hazard& h : deadlocks_of(host_flag_in_rank_dependent_order())) {
    EXPECT_TRUE(is_wait_for_cycle(h)) << h.summary;
    EXPECT_NE(h.summary.find("rank 0 thread waiter (wait_a_done)"), std::string::npos) << h.summary;
  }
}

/// Blocking sends in a ring of two, not grouped: each rank sends, waits for its send, then
/// receives. Rank 0's send waits for rank 1's recv, which rank 1's thread issues only after its
/// own send is done: rank 0's stream -> rank 1's thread -> rank 1's stream ->
/// rank 0's thread -> rank 0's stream.
Scenario blocking_sends_both_first() {
  ScenarioBuilder b("send_send");
  const RankId r0 = b.rank(), r1 = b.rank();
  const CommId pp = b.comm("pp", {r0, r1});
  for (RankId r : {r0, r1}) {
    const ThreadId t = b.thread(r, "main");
    const StreamId s = b.stream(r, "s");
    const BufferId out = b.buffer(r, "out", 1, {1.0f}), in = b.buffer(r, "in", 1);
    const std::uint32_t peer = r == r0 ? 1 : 0;
    b.op(r, t, ScenarioBuilder::send(s, pp, peer, {out, 0, 1}, "send"));
    b.op(r, t, ScenarioBuilder::host(OpKind::stream_synchronize, s));
    b.op(r, t, ScenarioBuilder::recv(s, pp, peer, {in, 0, 1}, "recv"));
  }
  return b.build();
}

/// Rank 0 queues a send to rank 1 and then A (comm c) on one stream; rank 1 queues A, then the
/// matching recv, on one stream. The send waits for the recv, queued behind rank 1's A, which
/// waits for rank 0's A, queued behind the send: a cycle of the two streams.
Scenario send_ahead_of_a_collective_its_peer_runs_first() {
  ScenarioBuilder b("send_vs_collective");
  const RankId r0 = b.rank(), r1 = b.rank();
  const CommId pp = b.comm("pp", {r0, r1}), c = b.comm("c", {r0, r1});
  const ThreadId t0 = b.thread(r0, "main"), t1 = b.thread(r1, "main");
  const StreamId s = b.stream(r0, "s"), u = b.stream(r1, "u");
  const BufferId x0 = b.buffer(r0, "x", 1, {1.0f}), x1 = b.buffer(r1, "x", 1, {2.0f});
  b.op(r0, t0, ScenarioBuilder::send(s, pp, 1, {x0, 0, 1}, "send"));
  b.op(r0, t0, ScenarioBuilder::all_reduce(s, c, {x0, 0, 1}, {x0, 0, 1}, "A"));
  b.op(r1, t1, ScenarioBuilder::all_reduce(u, c, {x1, 0, 1}, {x1, 0, 1}, "A"));
  b.op(r1, t1, ScenarioBuilder::recv(u, pp, 0, {x1, 0, 1}, "recv"));
  return b.build();
}

TEST(DeadlockDetector, a_started_send_waits_for_whatever_holds_back_its_match) {
  // Not issued yet: the peer threads that would issue it; issued: the peer stream that holds it.
  for (const Scenario& s : {blocking_sends_both_first(), send_ahead_of_a_collective_its_peer_runs_first()}) {
    for (const Hazard& h : deadlocks_of(s)) EXPECT_TRUE(is_wait_for_cycle(h)) << s.name << ": " << h.summary;
  }
}

/// Rank 0 issues two collectives on comm c from two streams, A (c's #0) on stream s1 and B (c's
/// #1) on s2, then D (comm d) on s2 behind B; rank 1 issues D, then both of c's on one stream.
/// NCCL runs c's ops in issue order, so B waits for A; A for rank 1, whose c #0 is queued behind
/// its D; and rank 1's D for rank 0's, queued behind B: s2 -> s1 -> rank 1's stream -> s2.
Scenario two_streams_on_one_comm_in_rank_dependent_order() {
  ScenarioBuilder b("two_streams_one_comm");
  const RankId r0 = b.rank(), r1 = b.rank();
  const CommId c = b.comm("c", {r0, r1}), d = b.comm("d", {r0, r1});
  const ThreadId t0 = b.thread(r0, "main"), t1 = b.thread(r1, "main");
  const StreamId s1 = b.stream(r0, "s1"), s2 = b.stream(r0, "s2"), u = b.stream(r1, "u");
  const BufferId x0 = b.buffer(r0, "x", 1, {1.0f}), x1 = b.buffer(r1, "x", 1, {2.0f});
  b.op(r0, t0, ScenarioBuilder::all_reduce(s1, c, {x0, 0, 1}, {x0, 0, 1}, "A"));
  b.op(r0, t0, ScenarioBuilder::all_reduce(s2, c, {x0, 0, 1}, {x0, 0, 1}, "B"));
  b.op(r0, t0, ScenarioBuilder::all_reduce(s2, d, {x0, 0, 1}, {x0, 0, 1}, "D"));
  b.op(r1, t1, ScenarioBuilder::all_reduce(u, d, {x1, 0, 1}, {x1, 0, 1}, "D"));
  b.op(r1, t1, ScenarioBuilder::all_reduce(u, c, {x1, 0, 1}, {x1, 0, 1}, "A"));
  b.op(r1, t1, ScenarioBuilder::all_reduce(u, c, {x1, 0, 1}, {x1, 0, 1}, "B"));
  return b.build();
}

TEST(DeadlockDetector, a_comm_op_waits_for_the_stream_that_holds_its_communicator_s_earlier_op) {
  for (const Hazard& h : deadlocks_of(two_streams_on_one_comm_in_rank_dependent_order())) {
    EXPECT_TRUE(is_wait_for_cycle(h)) << h.summary;
    EXPECT_NE(h.summary.find("rank 0 stream s2 (B)"), std::string::npos) << h.summary;
    EXPECT_NE(h.summary.find("rank 0 stream s1 (A)"), std::string::npos) << h.summary;
  }
}

/// Rank 0 queues A (comm c) and a record of event E on stream t, and on stream s a wait for E
/// ahead of B (comm d); rank 1 queues B, then A, on one stream. A waits for rank 1, whose A is
/// behind its B; rank 1's B for rank 0's, behind the wait; the wait for E, recorded behind A:
/// t -> rank 1's stream -> s -> t.
Scenario stream_wait_in_rank_dependent_order() {
  ScenarioBuilder b("stream_wait_rank_order");
  const RankId r0 = b.rank(), r1 = b.rank();
  const CommId c = b.comm("c", {r0, r1}), d = b.comm("d", {r0, r1});
  const ThreadId t0 = b.thread(r0, "main"), t1 = b.thread(r1, "main");
  const StreamId s = b.stream(r0, "s"), t = b.stream(r0, "t"), u = b.stream(r1, "u");
  const EventId e = b.event(r0, "E");
  const BufferId x0 = b.buffer(r0, "x", 1, {1.0f}), x1 = b.buffer(r1, "x", 1, {2.0f});
  b.op(r0, t0, ScenarioBuilder::all_reduce(t, c, {x0, 0, 1}, {x0, 0, 1}, "A"));
  b.op(r0, t0, ScenarioBuilder::record(t, e, "record_E"));
  b.op(r0, t0, ScenarioBuilder::wait(s, e, "wait_E"));
  b.op(r0, t0, ScenarioBuilder::all_reduce(s, d, {x0, 0, 1}, {x0, 0, 1}, "B"));
  b.op(r1, t1, ScenarioBuilder::all_reduce(u, d, {x1, 0, 1}, {x1, 0, 1}, "B"));
  b.op(r1, t1, ScenarioBuilder::all_reduce(u, c, {x1, 0, 1}, {x1, 0, 1}, "A"));
  return b.build();
}

TEST(DeadlockDetector, a_stream_wait_waits_for_the_stream_that_records_its_event) {
  for (const Hazard& h : deadlocks_of(stream_wait_in_rank_dependent_order())) {
    EXPECT_TRUE(is_wait_for_cycle(h)) << h.summary;
    EXPECT_NE(h.summary.find("rank 0 stream s (wait_E)"), std::string::npos) << h.summary;
  }
}

TEST(DeadlockDetector, tells_a_collective_issued_behind_a_blocked_op_from_one_never_issued) {
  const auto hazards = run_once(sched::testing::issued_behind_a_collective_never_matched());
  ASSERT_TRUE(has(hazards, HazardKind::deadlock)) << litmus::describe(hazards);
  for (const auto& h : hazards) {
    if (h.kind != HazardKind::deadlock) continue;
    EXPECT_FALSE(is_wait_for_cycle(h)) << h.summary;
    EXPECT_EQ(h.summary,
              "hang: ranks wait in collective #0 on comm amax (amax_reduce): rank 1 issued it (amax_reduce) but its "
              "stream nccl is blocked behind grad_bucket; and in collective #0 on comm dp (grad_bucket): rank 0 "
              "never issues it: its program has no collective left on comm dp (its threads have finished)");
    EXPECT_EQ(h.summary.find("have not joined"), std::string::npos) << h.summary;
    bool rank0_detail = false;
    for (const std::string& line : h.details) {
      rank0_detail |= line.find("rank 0 stream nccl amax_reduce waits for the other members of comm amax to join "
                                "collective #0: rank 1 issued it (amax_reduce) but its stream nccl is blocked behind "
                                "grad_bucket") != std::string::npos;
      if (line.rfind("rank 1 stream nccl grad_bucket", 0) == 0) {
        EXPECT_NE(line.find("rank 0 never issues it: its program has no collective left on comm dp (its threads have finished)"), std::string::npos) << line;
      }
    }
    EXPECT_TRUE(rank0_detail) << litmus::describe(hazards);
  }
}

TEST(DeadlockDetector, is_silent_for_the_same_design_under_concurrent_kernels) {
  const auto hazards = run_once(separate_comms_rank_dependent(KernelConcurrency::concurrent, true));
  EXPECT_TRUE(hazards.empty()) << litmus::describe(hazards);
}

TEST(DeadlockDetector, is_silent_for_the_same_order_under_serialized_kernels) {
  EXPECT_TRUE(run_once(separate_comms_rank_dependent(KernelConcurrency::serialized, false)).empty());
}

/// A view (one module's slot) of the concatenated global buffer is read while the whole
/// buffer is all-reduced in place.
Scenario view_read_during_in_place_reduce(bool wait_first) {
  ScenarioBuilder b("view_race");
  const RankId r0 = b.rank(), r1 = b.rank();
  const CommId comm = b.comm("amax", {r0, r1});
  for (RankId r : {r0, r1}) {
    const ThreadId t = b.thread(r, "main");
    const StreamId compute = b.stream(r, "compute"), nccl = b.stream(r, "nccl");
    const EventId done = b.event(r, "reduced");
    const BufferId global = b.buffer(r, "amax_global", 4, {1, 2, 3, 4});
    const BufferId hist = b.buffer(r, "module1_history", 1);
    b.op(r, t, ScenarioBuilder::all_reduce(nccl, comm, {global, 0, 4}, {global, 0, 4}, "amax_reduce"));
    b.op(r, t, ScenarioBuilder::record(nccl, done));
    if (wait_first) b.op(r, t, ScenarioBuilder::wait(compute, done, "handle.wait", OpKind::work_wait));
    b.op(r, t, ScenarioBuilder::copy(compute, {global, 2, 1}, {hist, 0, 1}, "copy_back_module1"));
    if (!wait_first) b.op(r, t, ScenarioBuilder::wait(compute, done, "handle.wait", OpKind::work_wait));
  }
  return b.build();
}

TEST(RaceDetector, reports_a_view_of_the_global_buffer_read_while_it_is_reduced_in_place) {
  const auto hazards = run_once(view_read_during_in_place_reduce(false));
  ASSERT_TRUE(has(hazards, HazardKind::data_race));
  const auto& h = hazards.front();
  EXPECT_NE(h.summary.find("amax_global[2..3)"), std::string::npos) << h.summary;
  std::set<std::string> names{h.participants[0].op_name, h.participants[1].op_name};
  EXPECT_EQ(names, (std::set<std::string>{"amax_reduce", "copy_back_module1"}));
}

TEST(RaceDetector, is_silent_when_the_copy_waits_for_the_reduction) {
  EXPECT_TRUE(run_once(view_read_during_in_place_reduce(true)).empty());
}

/// Rank 0's streams a and b are ordered only because rank 1 runs both collectives on one stream.
Scenario chain_through_another_rank(bool rank1_uses_one_stream) {
  ScenarioBuilder b("chain");
  const RankId r0 = b.rank(), r1 = b.rank();
  const CommId c1 = b.comm("c1", {r0, r1}), c2 = b.comm("c2", {r0, r1});
  const ThreadId t0 = b.thread(r0, "main");
  const StreamId a = b.stream(r0, "a"), s_b = b.stream(r0, "b");
  const BufferId x = b.buffer(r0, "x", 1), y = b.buffer(r0, "y", 1), z = b.buffer(r0, "z", 1), w = b.buffer(r0, "w", 1);
  b.op(r0, t0, ScenarioBuilder::fill(a, {x, 0, 1}, {7.0f}, "write_x"));
  b.op(r0, t0, ScenarioBuilder::all_reduce(a, c1, {y, 0, 1}, {y, 0, 1}, "reduce_c1"));
  b.op(r0, t0, ScenarioBuilder::all_reduce(s_b, c2, {z, 0, 1}, {z, 0, 1}, "reduce_c2"));
  b.op(r0, t0, ScenarioBuilder::copy(s_b, {x, 0, 1}, {w, 0, 1}, "read_x"));
  const ThreadId t1 = b.thread(r1, "main");
  const StreamId s1 = b.stream(r1, "s"), s2 = rank1_uses_one_stream ? s1 : b.stream(r1, "s2");
  const BufferId y1 = b.buffer(r1, "y", 1), z1 = b.buffer(r1, "z", 1);
  b.op(r1, t1, ScenarioBuilder::all_reduce(s1, c1, {y1, 0, 1}, {y1, 0, 1}, "reduce_c1"));
  b.op(r1, t1, ScenarioBuilder::all_reduce(s2, c2, {z1, 0, 1}, {z1, 0, 1}, "reduce_c2"));
  return b.build();
}

TEST(RaceDetector, does_not_report_streams_ordered_through_another_rank) {
  std::size_t runs = litmus::explore_all(chain_through_another_rank(true), [](const litmus::Outcome& o) {
    EXPECT_FALSE(has(o.hazards, HazardKind::data_race));
  });
  EXPECT_GT(runs, 10u);
}

TEST(RaceDetector, reports_the_same_streams_when_the_other_rank_does_not_order_them) {
  EXPECT_TRUE(has(run_once(chain_through_another_rank(false)), HazardKind::data_race));
}

/// Two collectives of one comm on two streams of rank 0: NCCL's implicit edge orders them.
Scenario one_comm_two_streams() {
  ScenarioBuilder b("implicit_edge");
  const RankId r0 = b.rank(), r1 = b.rank();
  const CommId comm = b.comm("dp", {r0, r1});
  const ThreadId t0 = b.thread(r0, "main");
  const StreamId s0 = b.stream(r0, "a"), s1 = b.stream(r0, "b");
  const BufferId x = b.buffer(r0, "x", 1);
  b.op(r0, t0, ScenarioBuilder::all_reduce(s0, comm, {x, 0, 1}, {x, 0, 1}, "first"));
  b.op(r0, t0, ScenarioBuilder::all_reduce(s1, comm, {x, 0, 1}, {x, 0, 1}, "second"));
  const ThreadId t1 = b.thread(r1, "main");
  const StreamId s = b.stream(r1, "s");
  const BufferId x1 = b.buffer(r1, "x", 1);
  b.op(r1, t1, ScenarioBuilder::all_reduce(s, comm, {x1, 0, 1}, {x1, 0, 1}, "first"));
  b.op(r1, t1, ScenarioBuilder::all_reduce(s, comm, {x1, 0, 1}, {x1, 0, 1}, "second"));
  return b.build();
}

TEST(Engine, ops_of_one_comm_on_different_streams_run_in_issue_order) {
  EXPECT_TRUE(run_once(one_comm_two_streams()).empty());
}

TEST(Engine, dropping_the_implicit_comm_edge_exposes_a_race) {
  EXPECT_TRUE(has(run_once(one_comm_two_streams(), EngineOptions{Mutant::drop_comm_ordering}), HazardKind::data_race));
}

TEST(CollectiveDetector, reports_collectives_issued_on_one_comm_by_unordered_host_threads) {
  ScenarioBuilder b("threads");
  const RankId r0 = b.rank();
  const CommId comm = b.comm("dp", {r0});
  const ThreadId main = b.thread(r0, "main"), autograd = b.thread(r0, "autograd");
  const StreamId s = b.stream(r0, "s");
  const BufferId x = b.buffer(r0, "x", 1), y = b.buffer(r0, "y", 1);
  b.op(r0, main, ScenarioBuilder::all_reduce(s, comm, {x, 0, 1}, {x, 0, 1}, "amax_reduce"));
  b.op(r0, autograd, ScenarioBuilder::all_reduce(s, comm, {y, 0, 1}, {y, 0, 1}, "grad_bucket"));
  EXPECT_TRUE(has(run_once(b.build()), HazardKind::ordering_hazard));
  // The fixed twin: the autograd thread waits for the main thread's signal first.
  const std::uint32_t flag = b.flag(r0, "forward_done");
  auto& program = b.scenario().ranks[r0].threads[autograd].program;
  program.insert(program.begin(), ScenarioBuilder::host(OpKind::host_wait, flag));
  program.front().count = 1;
  b.op(r0, main, ScenarioBuilder::host(OpKind::host_signal, flag));
  std::swap(b.scenario().ranks[r0].threads[main].program[0], b.scenario().ranks[r0].threads[main].program[1]);
  std::swap(b.scenario().ranks[r0].threads[main].program[0], b.scenario().ranks[r0].threads[main].program[1]);
  EXPECT_FALSE(has(run_once(b.build()), HazardKind::ordering_hazard));
}

TEST(ValueDetector, reports_replicas_that_differ_and_values_that_differ_from_the_reference) {
  ScenarioBuilder b("values");
  const RankId r0 = b.rank(), r1 = b.rank();
  for (RankId r : {r0, r1}) {
    b.thread(r, "main");
    b.buffer(r, "scale", 1, {r == r0 ? 1.0f : 2.0f});
  }
  b.scenario().checks.push_back(ReplicaCheck{"scale", {{r0, {0, 0, 1}}, {r1, {0, 0, 1}}}, {1.0f}});
  const auto hazards = run_once(b.build());
  EXPECT_TRUE(has(hazards, HazardKind::replica_divergence));
  EXPECT_TRUE(has(hazards, HazardKind::value_mismatch));
  b.scenario().ranks[r1].buffers[0].init = {1.0f};
  EXPECT_TRUE(run_once(b.build()).empty());
}

TEST(ValueDetector, names_the_op_whose_write_landed_last_when_a_kernel_races_a_collective) {
  // Rank 0 all-reduces x (MAX: 2) and fills it with 0 on another stream; the reference is 3, so
  // every schedule has a wrong x. A collective writes when it completes, not when it joins:
  // once, a fill between the two was named the last writer of the collective's value.
  ScenarioBuilder b("last_writer");
  const RankId r0 = b.rank(), r1 = b.rank();
  const CommId c = b.comm("c", {r0, r1});
  for (RankId r : {r0, r1}) {
    const ThreadId t = b.thread(r, "main");
    const StreamId nccl = b.stream(r, "nccl");
    const StreamId compute = b.stream(r, "compute");
    const BufferId x = b.buffer(r, "x", 1, {r == r0 ? 1.0f : 2.0f});
    b.op(r, t, ScenarioBuilder::all_reduce(nccl, c, {x, 0, 1}, {x, 0, 1}, "ar"));
    if (r == r0) b.op(r, t, ScenarioBuilder::fill(compute, {x, 0, 1}, {0.0f}, "fill_x"));
  }
  b.scenario().checks.push_back(ReplicaCheck{"x", {{r0, {0, 0, 1}}, {r1, {0, 0, 1}}}, {3.0f}});
  std::set<std::string> writers;
  litmus::explore_all(b.build(), [&](const litmus::Outcome& o) {
    for (const Hazard& h : o.hazards) {
      if (h.kind != HazardKind::value_mismatch || h.participants.front().rank != r0) continue;
      // The value says who wrote last: 0 is the fill's, 2 the all-reduce's.
      const bool filled_last = h.summary.find(" is 0 ") != std::string::npos;
      EXPECT_EQ(h.participants.front().op_name, filled_last ? "fill_x" : "ar") << h.summary;
      writers.insert(h.participants.front().op_name);
    }
  });
  EXPECT_EQ(writers, (std::set<std::string>{"ar", "fill_x"})) << "both orders are explored";
}

TEST(ValueDetector, reports_every_affected_tensor_naming_the_op_that_wrote_each_wrong_value) {
  ScenarioBuilder b("values");
  const RankId r0 = b.rank(), r1 = b.rank(), r2 = b.rank();
  for (RankId r : {r0, r1, r2}) {
    const ThreadId t = b.thread(r, "main");
    const StreamId s = b.stream(r, "compute");
    const BufferId scale = b.buffer(r, "scale", 1);
    const BufferId history = b.buffer(r, "history", 2);
    b.op(r, t, ScenarioBuilder::fill(s, {scale, 0, 1}, {r == r0 ? 1.0f : 2.0f}, "scale_update"));
    b.op(r, t, ScenarioBuilder::fill(s, {history, 0, 2}, {r == r0 ? 4.0f : 8.0f, 0.0f}, "copy_back"));
  }
  const std::vector<ReplicaCheck::Replica> scales = {{r0, {0, 0, 1}}, {r1, {0, 0, 1}}, {r2, {0, 0, 1}}};
  const std::vector<ReplicaCheck::Replica> histories = {{r0, {1, 0, 2}}, {r1, {1, 0, 2}}, {r2, {1, 0, 2}}};
  b.scenario().checks.push_back(ReplicaCheck{"scale", scales, {1.0f}});
  b.scenario().checks.push_back(ReplicaCheck{"history", histories, {4.0f, 0.0f}});
  const auto hazards = run_once(b.build());
  std::multiset<std::pair<std::string, std::string>> found;  // (kind, subject)
  for (const Hazard& h : hazards) {
    found.insert({to_string(h.kind), h.subject});
    for (const Participant& p : h.participants) {
      EXPECT_EQ(p.op_name, h.subject == "scale" ? "scale_update" : "copy_back") << h.summary;
      EXPECT_EQ(p.lane, "stream compute");
    }
  }
  // Ranks 1 and 2 hold one value that is not rank 0's (one divergence), and both differ from
  // the reference (two mismatches), on each tensor.
  EXPECT_EQ(found, (std::multiset<std::pair<std::string, std::string>>{
                       {"replica_divergence", "scale"}, {"value_mismatch", "scale"}, {"value_mismatch", "scale"},
                       {"replica_divergence", "history"}, {"value_mismatch", "history"}, {"value_mismatch", "history"}}));
  for (const Hazard& h : hazards) {
    if (h.kind != HazardKind::replica_divergence) continue;
    EXPECT_EQ(h.summary, h.subject + (h.subject == "scale" ? " differs between rank 0 and rank 1 at element 0: 1 vs 2"
                                                           : " differs between rank 0 and rank 1 at element 0: 4 vs 8"));
    EXPECT_THAT(h.details, ::testing::Contains("rank 1's value is held by ranks 1, 2"));
  }
  std::set<std::string> keys;
  for (const Hazard& h : hazards) keys.insert(h.key());
  EXPECT_EQ(keys.size(), hazards.size()) << "every one has its own identity";
}

// Replicas that agree with each other are compared with the reference once (issue 19): each
// still gets its own mismatch, at the first element that differs.
TEST(ValueDetector, reports_every_replica_when_all_agree_but_differ_from_the_reference) {
  ScenarioBuilder b("values");
  const RankId r0 = b.rank(), r1 = b.rank();
  for (RankId r : {r0, r1}) {
    b.thread(r, "main");
    b.buffer(r, "history", 3, {4.0f, 5.0f, 6.0f});
  }
  b.scenario().checks.push_back(ReplicaCheck{"history", {{r0, {0, 0, 3}}, {r1, {0, 0, 3}}}, {4.0f, 7.0f, 6.0f}});
  std::vector<std::string> summaries;
  for (const Hazard& h : run_once(b.build())) summaries.push_back(h.summary);
  EXPECT_EQ(summaries, (std::vector<std::string>{
                           "history on rank 0 element 1 is 5 but the sequential reference gives 7",
                           "history on rank 1 element 1 is 5 but the sequential reference gives 7",
                       }));
}

// Replicas must end bit-identical, not equal as floats: +0 and -0 compare equal, and two NaNs
// with different payloads compare unequal to everything, yet both are a divergence (and the
// same NaN on both replicas is none).
TEST(ValueDetector, compares_replicas_by_their_bits_so_signed_zeros_and_nan_payloads_diverge) {
  const auto hazards_of = [](float rank0, float rank1) {
    ScenarioBuilder b("bits");
    const RankId r0 = b.rank(), r1 = b.rank();
    for (RankId r : {r0, r1}) {
      b.thread(r, "main");
      b.buffer(r, "amax_history", 1, {r == r0 ? rank0 : rank1});
    }
    b.scenario().checks.push_back(ReplicaCheck{"amax_history", {{r0, {0, 0, 1}}, {r1, {0, 0, 1}}}, {}});
    return run_once(b.build());
  };
  const float quiet = std::bit_cast<float>(0x7fc00000U), other_payload = std::bit_cast<float>(0x7fc00001U);
  EXPECT_TRUE(has(hazards_of(0.0f, -0.0f), HazardKind::replica_divergence));
  EXPECT_TRUE(has(hazards_of(quiet, other_payload), HazardKind::replica_divergence));
  EXPECT_TRUE(hazards_of(quiet, quiet).empty());
  EXPECT_TRUE(hazards_of(-0.0f, -0.0f).empty());
}

TEST(HazardKey, is_kind_subject_ranks_and_ops_but_not_steps) {
  Hazard a;
  a.kind = HazardKind::value_mismatch;
  a.subject = "module 0 / forward / scale";
  a.participants = {Participant{1, "stream compute", OpRef{1, 0, 7}, "scale_update_fwd", "", 40}};
  Hazard later = a;
  later.participants[0].step = 90;
  later.summary = "other wording";
  EXPECT_EQ(a.key(), later.key());
  Hazard other_tensor = a;
  other_tensor.subject = "module 0 / backward / scale";
  EXPECT_NE(a.key(), other_tensor.key());
  Hazard other_rank = a;
  other_rank.participants[0].rank = 2;
  EXPECT_NE(a.key(), other_rank.key());
  Hazard other_op = a;
  other_op.participants[0].op.index = 8;
  EXPECT_NE(a.key(), other_op.key());
  Hazard other_kind = a;
  other_kind.kind = HazardKind::replica_divergence;
  EXPECT_NE(a.key(), other_kind.key());
}

}  // namespace
}  // namespace amaxcheck
