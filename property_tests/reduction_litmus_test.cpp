// The exhaustive search's footprints, one litmus each: a scenario whose hazard or end state only
// shows in the order that reverses one dependence the engine records (a step's Touch of an
// object), and that the first schedule does not run. The reduced search must find what the naive
// search finds. A footprint left out makes the two steps independent, so the search never tries
// the other order and calls the scenario cleaner than it is. The generated scenarios of
// ReductionDifferential seldom hold exactly these shapes at the default suite's size.
#include <gtest/gtest.h>

#include "model/builder.h"
#include "reduction_check.h"
#include "scheduler/exhaustive_strategy.h"
#include "scheduler/run.h"

namespace amaxcheck::props {
namespace {

/// The naive search finds `naive_hazards` hazards and more than one end state, the search's
/// first schedule fewer hazards (so finding the rest takes a reversal), and the reduced search
/// finds the same as the naive one.
void expect_reduced_search_finds_it(const Scenario& s, std::size_t naive_hazards) {
  const ReductionComparison compared = compare_with_naive_search(s, sched::ExhaustiveOptions{}, 100'000);
  ASSERT_TRUE(compared.naive_complete) << s.name;
  EXPECT_EQ(compared.naive_hazards, naive_hazards) << s.name << ": the litmus no longer has its hazard";
  EXPECT_GT(compared.naive_end_states, 1u) << s.name << ": the litmus has one outcome, nothing to reverse";
  sched::ExhaustiveSearch first_schedule;
  ASSERT_TRUE(first_schedule.begin_run(0));
  EXPECT_LT(sched::run_once(s, first_schedule).hazards.size(), naive_hazards) << s.name << ": the first schedule finds it all";
  EXPECT_EQ(compared.disagreement, "") << s.name;
}

/// One rank, threads a and b, streams s1 and s2, event e, buffers x (init 0) and z (init 2).
struct OneRank {
  ScenarioBuilder b;
  RankId r;
  ThreadId a, t_b;
  StreamId s1, s2;
  EventId e;
  Range x, z;
  explicit OneRank(const std::string& name) : b(name) {
    r = b.rank();
    a = b.thread(r, "a");
    t_b = b.thread(r, "b");
    s1 = b.stream(r, "s1");
    s2 = b.stream(r, "s2");
    e = b.event(r, "e");
    x = Range{b.buffer(r, "x", 1, {0.0f}), 0, 1};
    z = Range{b.buffer(r, "z", 1, {2.0f}), 0, 1};
  }
};

TEST(ReductionLitmus, a_stream_synchronize_before_another_threads_issue_onto_the_stream) {
  // b synchronizes on s1, then reads x on s2. Run after a's fill is queued, the synchronization
  // waits for it; run before, it returns at once and the read races with the fill.
  OneRank o("sync_before_issue");
  o.b.op(o.r, o.a, ScenarioBuilder::fill(o.s1, o.x, {1.0f}, "fill_x"));
  o.b.op(o.r, o.t_b, ScenarioBuilder::host(OpKind::stream_synchronize, o.s1));
  o.b.op(o.r, o.t_b, ScenarioBuilder::copy(o.s2, o.x, o.z, "read_x"));
  expect_reduced_search_finds_it(o.b.build(), 1);
}

/// a fills x on s1 and records e after it; b orders itself after e (`waiting`: an
/// event_synchronize, or else a wait of s2 on e), then reads x on s2. After the record is issued,
/// b's read is ordered after the fill; before it, e names no record, and the read races with the
/// fill.
Scenario ordered_by_a_record(const std::string& name, OpKind waiting) {
  OneRank o(name);
  o.b.op(o.r, o.a, ScenarioBuilder::fill(o.s1, o.x, {1.0f}, "fill_x"));
  o.b.op(o.r, o.a, ScenarioBuilder::record(o.s1, o.e));
  o.b.op(o.r, o.t_b, waiting == OpKind::event_synchronize ? ScenarioBuilder::host(waiting, o.e) : ScenarioBuilder::wait(o.s2, o.e));
  o.b.op(o.r, o.t_b, ScenarioBuilder::copy(o.s2, o.x, o.z, "read_x"));
  return o.b.build();
}

TEST(ReductionLitmus, an_event_synchronize_before_another_threads_record) {
  expect_reduced_search_finds_it(ordered_by_a_record("event_sync_before_record", OpKind::event_synchronize), 1);
}

TEST(ReductionLitmus, a_stream_wait_before_another_threads_record) {
  expect_reduced_search_finds_it(ordered_by_a_record("wait_before_record", OpKind::stream_wait_event), 1);
}

TEST(ReductionLitmus, a_collective_joined_before_or_after_another_streams_kernel_on_its_buffers) {
  // a copies z to x on s1; b copies x to z on s2, then all-reduces x into z there. The race
  // detector keeps one history per buffer, where the all-reduce's write of z, ordered after
  // b's copy, takes the copy's place: a's read of z, run after the join, races with the
  // all-reduce alone; run before it, with b's copy too. So the join and a's copy do not commute.
  OneRank o("join_against_a_kernel");
  const CommId self = o.b.comm("self", {o.r});
  o.b.op(o.r, o.a, ScenarioBuilder::copy(o.s1, o.z, o.x, "copy_a"));
  o.b.op(o.r, o.t_b, ScenarioBuilder::copy(o.s2, o.x, o.z, "copy_b"));
  o.b.op(o.r, o.t_b, ScenarioBuilder::all_reduce(o.s2, self, o.x, o.z, "reduce"));
  expect_reduced_search_finds_it(o.b.build(), 4);
}

TEST(ReductionLitmus, collectives_of_two_threads_on_two_communicators_under_serialized_kernels) {
  // Rank 1 launches c1's all-reduce, then c2's. On rank 0 thread a issues c1's and thread b c2's:
  // a first, the ranks agree; b first, each rank's device runs a different collective first and
  // both wait for the other rank forever.
  ScenarioBuilder b("launch_order_of_two_threads");
  b.kernels(KernelConcurrency::serialized);
  const RankId r0 = b.rank(), r1 = b.rank();
  const CommId c1 = b.comm("c1", {r0, r1}), c2 = b.comm("c2", {r0, r1});
  const ThreadId a = b.thread(r0, "a"), t_b = b.thread(r0, "b"), t = b.thread(r1, "t");
  const StreamId r0_s1 = b.stream(r0, "s1"), r0_s2 = b.stream(r0, "s2"), r1_s1 = b.stream(r1, "s1"), r1_s2 = b.stream(r1, "s2");
  const Range x0{b.buffer(r0, "x", 1, {1.0f}), 0, 1}, y0{b.buffer(r0, "y", 1, {2.0f}), 0, 1};
  const Range x1{b.buffer(r1, "x", 1, {3.0f}), 0, 1}, y1{b.buffer(r1, "y", 1, {4.0f}), 0, 1};
  b.op(r0, a, ScenarioBuilder::all_reduce(r0_s1, c1, x0, x0, "reduce_c1"));
  b.op(r0, t_b, ScenarioBuilder::all_reduce(r0_s2, c2, y0, y0, "reduce_c2"));
  b.op(r1, t, ScenarioBuilder::all_reduce(r1_s1, c1, x1, x1, "reduce_c1"));
  b.op(r1, t, ScenarioBuilder::all_reduce(r1_s2, c2, y1, y1, "reduce_c2"));
  expect_reduced_search_finds_it(b.build(), 1);
}

}  // namespace
}  // namespace amaxcheck::props
