// Litmus tests: tiny programs explored over every interleaving, with the exact set of
// reachable outcomes asserted.
#include <gtest/gtest.h>

#include <optional>
#include <set>
#include <string>

#include "engine/litmus.h"
#include "model/builder.h"

namespace amaxcheck {
namespace {

using litmus::explore_all;
using litmus::has;

/// Rank 0 all-reduces its global amax buffer (local 3) asynchronously on a side stream and
/// copies it back on the compute stream; rank 1 (local 5) only all-reduces.
Scenario async_copy_back(bool wait_before_copy) {
  ScenarioBuilder b("async_copy_back");
  const RankId r0 = b.rank(), r1 = b.rank();
  const CommId comm = b.comm("amax", {r0, r1});
  const ThreadId t0 = b.thread(r0, "main");
  const StreamId compute = b.stream(r0, "compute"), nccl = b.stream(r0, "nccl");
  const EventId done = b.event(r0, "allreduce_done");
  const BufferId global0 = b.buffer(r0, "amax_global", 1, {3.0f});
  const BufferId hist0 = b.buffer(r0, "amax_history", 1);
  b.op(r0, t0, ScenarioBuilder::all_reduce(nccl, comm, {global0, 0, 1}, {global0, 0, 1}, "amax_reduce"));
  b.op(r0, t0, ScenarioBuilder::record(nccl, done));
  auto copy = ScenarioBuilder::copy(compute, {global0, 0, 1}, {hist0, 0, 1}, "copy_back");
  auto wait = ScenarioBuilder::wait(compute, done, "handle.wait", OpKind::work_wait);
  if (wait_before_copy) {
    b.op(r0, t0, wait);
    b.op(r0, t0, copy);
  } else {
    b.op(r0, t0, copy);
    b.op(r0, t0, wait);
  }
  const ThreadId t1 = b.thread(r1, "main");
  const StreamId s1 = b.stream(r1, "nccl");
  const BufferId global1 = b.buffer(r1, "amax_global", 1, {5.0f});
  b.op(r1, t1, ScenarioBuilder::all_reduce(s1, comm, {global1, 0, 1}, {global1, 0, 1}, "amax_reduce"));
  return b.build();
}

TEST(Litmus, copy_back_after_an_unwaited_async_all_reduce_reads_local_or_reduced_values) {
  const Scenario s = async_copy_back(false);
  std::set<float> seen;
  bool every_run_reports_the_race = true;
  const std::size_t runs = explore_all(s, [&](const litmus::Outcome& o) {
    seen.insert(o.engine->read(0, {1, 0, 1})[0]);
    every_run_reports_the_race &= has(o.hazards, HazardKind::data_race);
  });
  EXPECT_GT(runs, 1u);
  EXPECT_EQ(seen, (std::set<float>{3.0f, 5.0f}));
  EXPECT_TRUE(every_run_reports_the_race) << "the race is predictive: reported even in runs that ordered it safely";
}

TEST(Litmus, copy_back_after_the_wait_reads_only_the_reduced_value) {
  const Scenario s = async_copy_back(true);
  std::set<float> seen;
  bool any_hazard = false;
  explore_all(s, [&](const litmus::Outcome& o) {
    seen.insert(o.engine->read(0, {1, 0, 1})[0]);
    any_hazard |= !o.hazards.empty();
  });
  EXPECT_EQ(seen, (std::set<float>{5.0f}));
  EXPECT_FALSE(any_hazard);
}

TEST(Litmus, ignoring_event_waits_lets_the_waited_copy_read_the_local_value) {
  const Scenario s = async_copy_back(true);
  std::set<float> seen;
  explore_all(s, [&](const litmus::Outcome& o) { seen.insert(o.engine->read(0, {1, 0, 1})[0]); },
              EngineOptions{Mutant::ignore_event_waits});
  EXPECT_EQ(seen, (std::set<float>{3.0f, 5.0f}));
}

/// Stream FIFO: two fills on one stream always end with the second value.
TEST(Litmus, ops_on_one_stream_run_in_issue_order) {
  ScenarioBuilder b;
  const RankId r = b.rank();
  const ThreadId t = b.thread(r, "main");
  const StreamId s = b.stream(r, "compute");
  const BufferId x = b.buffer(r, "x", 1);
  b.op(r, t, ScenarioBuilder::fill(s, {x, 0, 1}, {1.0f}));
  b.op(r, t, ScenarioBuilder::fill(s, {x, 0, 1}, {2.0f}));
  std::set<float> seen;
  explore_all(b.build(), [&](const litmus::Outcome& o) {
    seen.insert(o.engine->read(0, {x, 0, 1})[0]);
    EXPECT_TRUE(o.hazards.empty());
  });
  EXPECT_EQ(seen, (std::set<float>{2.0f}));
}

/// One rank with one thread, streams a and b, an event and a one-element buffer x (buffer 0):
/// the set-up of the two-stream tests below.
struct TwoStreams {
  ScenarioBuilder b;
  RankId r = b.rank();
  ThreadId t = b.thread(r, "main");
  StreamId a = b.stream(r, "a");
  StreamId b_stream = b.stream(r, "b");
  EventId e = b.event(r, "e");
  BufferId x = b.buffer(r, "x", 1);
  void op(Op o) { b.op(r, t, std::move(o)); }
};

/// Two streams writing one buffer with no event between them: both orders are reachable.
TEST(Litmus, unordered_streams_writing_one_buffer_race_and_reach_both_values) {
  TwoStreams s;
  s.op(ScenarioBuilder::fill(s.a, {s.x, 0, 1}, {1.0f}, "write_a"));
  s.op(ScenarioBuilder::fill(s.b_stream, {s.x, 0, 1}, {2.0f}, "write_b"));
  std::set<float> seen;
  explore_all(s.b.build(), [&](const litmus::Outcome& o) {
    seen.insert(o.engine->read(0, {s.x, 0, 1})[0]);
    EXPECT_TRUE(has(o.hazards, HazardKind::data_race));
  });
  EXPECT_EQ(seen, (std::set<float>{1.0f, 2.0f}));
}

TEST(Litmus, an_event_between_two_streams_orders_their_writes) {
  TwoStreams s;
  s.op(ScenarioBuilder::fill(s.a, {s.x, 0, 1}, {1.0f}, "write_a"));
  s.op(ScenarioBuilder::record(s.a, s.e));
  s.op(ScenarioBuilder::wait(s.b_stream, s.e));
  s.op(ScenarioBuilder::fill(s.b_stream, {s.x, 0, 1}, {2.0f}, "write_b"));
  std::set<float> seen;
  explore_all(s.b.build(), [&](const litmus::Outcome& o) {
    seen.insert(o.engine->read(0, {s.x, 0, 1})[0]);
    EXPECT_TRUE(o.hazards.empty());
  });
  EXPECT_EQ(seen, (std::set<float>{2.0f}));
}

/// Stream a writes x; the thread host-synchronizes (`sync`: on stream a, on an event a records
/// after the write, or on the device; none: nothing orders the writes); then stream b writes x.
/// Stream b ran an op issued before the sync first, so its clock has the thread's clock from
/// before the sync, and the later write must still take the clock the thread has after it: the
/// engine keeps a thread's clock per host op (ThreadState::versions), and an op issued after one
/// carries the newer.
Scenario write_sync_write(std::optional<OpKind> sync) {
  TwoStreams s;
  const BufferId y = s.b.buffer(s.r, "y", 1);
  s.op(ScenarioBuilder::fill(s.b_stream, {y, 0, 1}, {3.0f}, "before_sync_b"));
  s.op(ScenarioBuilder::fill(s.a, {s.x, 0, 1}, {1.0f}, "write_a"));
  if (sync) {
    s.op(ScenarioBuilder::record(s.a, s.e));
    s.op(ScenarioBuilder::host(*sync, *sync == OpKind::event_synchronize ? s.e : s.a));
  }
  s.op(ScenarioBuilder::fill(s.b_stream, {s.x, 0, 1}, {2.0f}, "write_b"));
  return s.b.build();
}

TEST(Litmus, a_host_synchronization_orders_the_writes_before_it_and_after_it_on_other_streams) {
  for (const OpKind sync : {OpKind::stream_synchronize, OpKind::event_synchronize, OpKind::device_synchronize}) {
    std::set<float> seen;
    const std::size_t runs = explore_all(write_sync_write(sync), [&](const litmus::Outcome& o) {
      seen.insert(o.engine->read(0, {0, 0, 1})[0]);  // x
      EXPECT_TRUE(o.hazards.empty()) << to_string(sync) << "\n" << litmus::describe(o.hazards);
    });
    EXPECT_GT(runs, 1u) << to_string(sync);
    EXPECT_EQ(seen, (std::set<float>{2.0f})) << to_string(sync);
  }
}

/// Without the synchronization the same writes race: the test above can fail.
TEST(Litmus, without_the_host_synchronization_the_writes_race) {
  explore_all(write_sync_write(std::nullopt),
              [&](const litmus::Outcome& o) { EXPECT_TRUE(has(o.hazards, HazardKind::data_race)); });
}

/// A synchronization orders what it waited for, not whatever else had run by the time it
/// returned. In each case below stream b's write of x and stream a's read of it race, and some
/// interleaving runs the racing op before the synchronization returns: a happens-before that
/// took the synchronization's moment (the stream's clock then, the thread's clock then) for
/// what it waited for would hide the race there.
/// - launched_before_a_stream_sync: the read is launched before the thread synchronizes on
///   the writer's stream, and may run after: it carries the thread's clock from its launch;
/// - stream_sync_of_another_stream: the thread synchronizes on stream a only, so an op it
///   launches after is not ordered after stream b's write, even when b had run it;
/// - work_behind_the_synchronized_record: the write is queued behind the event's record, so an
///   event synchronize returns without waiting for it, even when it had run;
/// - work_behind_the_waited_record: likewise for another stream's wait on the event.
Scenario synchronization_that_does_not_cover_the_write(const std::string& name) {
  TwoStreams s;
  const BufferId y = s.b.buffer(s.r, "y", 1);
  const StreamId a = s.a, b = s.b_stream;
  const auto write_x = [&](StreamId on) { s.op(ScenarioBuilder::fill(on, {s.x, 0, 1}, {1.0f}, "write_x")); };
  const auto read_x = [&](StreamId on) { s.op(ScenarioBuilder::copy(on, {s.x, 0, 1}, {y, 0, 1}, "read_x")); };
  if (name == "launched_before_a_stream_sync") {
    // A first synchronization, so that the read is launched with a clock version of its own
    // (the initial one is every stream's already) and a stream that ran it takes a version.
    s.op(ScenarioBuilder::host(OpKind::device_synchronize));
    write_x(b);
    read_x(a);
    s.op(ScenarioBuilder::host(OpKind::stream_synchronize, b));
  } else if (name == "stream_sync_of_another_stream") {
    write_x(b);
    s.op(ScenarioBuilder::fill(a, {y, 0, 1}, {2.0f}, "write_y"));
    s.op(ScenarioBuilder::host(OpKind::stream_synchronize, a));
    read_x(a);
  } else if (name == "work_behind_the_synchronized_record") {
    s.op(ScenarioBuilder::record(b, s.e));
    write_x(b);
    s.op(ScenarioBuilder::host(OpKind::event_synchronize, s.e));
    read_x(a);
  } else if (name == "work_behind_the_waited_record") {
    s.op(ScenarioBuilder::record(b, s.e));
    write_x(b);
    s.op(ScenarioBuilder::wait(a, s.e));
    read_x(a);
  } else {
    ADD_FAILURE() << "no case " << name;
  }
  return s.b.build();
}

TEST(Litmus, a_synchronization_orders_only_the_work_it_waited_for) {
  for (const char* name : {"launched_before_a_stream_sync", "stream_sync_of_another_stream",
                           "work_behind_the_synchronized_record", "work_behind_the_waited_record"}) {
    const std::size_t runs = explore_all(synchronization_that_does_not_cover_the_write(name), [&](const litmus::Outcome& o) {
      EXPECT_TRUE(has(o.hazards, HazardKind::data_race)) << name << "\n" << litmus::describe(o.hazards);
    });
    EXPECT_GT(runs, 1u) << name;
  }
}

/// A wait issued before the event was ever recorded waits for nothing (CUDA semantics).
TEST(Litmus, waiting_on_an_event_recorded_later_does_not_order_anything) {
  TwoStreams s;
  s.op(ScenarioBuilder::wait(s.b_stream, s.e));
  s.op(ScenarioBuilder::fill(s.a, {s.x, 0, 1}, {1.0f}, "write_a"));
  s.op(ScenarioBuilder::record(s.a, s.e));
  s.op(ScenarioBuilder::fill(s.b_stream, {s.x, 0, 1}, {2.0f}, "write_b"));
  std::set<float> seen;
  explore_all(s.b.build(), [&](const litmus::Outcome& o) { seen.insert(o.engine->read(0, {s.x, 0, 1})[0]); });
  EXPECT_EQ(seen, (std::set<float>{1.0f, 2.0f}));
}


/// Thread a fills x on stream s1, synchronizes on it and signals a flag; thread b only signals
/// it; thread c waits for `count` signals, then copies x on stream s2.
Scenario two_signallers(std::uint32_t count) {
  ScenarioBuilder b("two_signallers");
  const RankId r = b.rank();
  const ThreadId a = b.thread(r, "a"), t_b = b.thread(r, "b"), c = b.thread(r, "c");
  const StreamId s1 = b.stream(r, "s1"), s2 = b.stream(r, "s2");
  const BufferId x = b.buffer(r, "x", 1), y = b.buffer(r, "y", 1);
  const std::uint32_t flag = b.flag(r, "f");
  b.op(r, a, ScenarioBuilder::fill(s1, {x, 0, 1}, {3.0f}, "fill_x"));
  b.op(r, a, ScenarioBuilder::host(OpKind::stream_synchronize, s1));
  b.op(r, a, ScenarioBuilder::host(OpKind::host_signal, flag));
  b.op(r, t_b, ScenarioBuilder::host(OpKind::host_signal, flag));
  Op wait = ScenarioBuilder::host(OpKind::host_wait, flag);
  wait.count = count;
  b.op(r, c, wait);
  b.op(r, c, ScenarioBuilder::copy(s2, {x, 0, 1}, {y, 0, 1}, "read_x"));
  return b.build();
}

TEST(Litmus, a_wait_for_two_signals_is_ordered_after_both_whichever_thread_signalled_last) {
  // Once the wait joined only the clock of the count-th signal: when b signalled second, the
  // copy was a race with the fill, though it always reads 3. Waiting for one signal (which
  // may be b's) is a real race.
  for (std::uint32_t count : {1u, 2u}) {
    bool race = false;
    std::set<float> read;
    const std::size_t runs = explore_all(two_signallers(count), [&](const litmus::Outcome& o) {
      race |= has(o.hazards, HazardKind::data_race);
      read.insert(o.engine->read(0, {1, 0, 1})[0]);  // y
    });
    EXPECT_GT(runs, 1u);
    EXPECT_EQ(race, count == 1) << "count " << count;
    EXPECT_EQ(read, (count == 2 ? std::set<float>{3.0f} : std::set<float>{0.0f, 3.0f})) << "count " << count;
  }
}

TEST(Litmus, a_wait_for_one_signal_is_not_ordered_after_a_second_signal_given_before_it_returned) {
  // b signals first, then a fills, synchronizes and signals, and only then does c's wait for
  // one signal return. The counter reached 1 with b's signal, which does not follow the fill:
  // the copy still races with it, although a's signal, too, was given before the wait returned.
  constexpr ThreadId b = 1, c = 2;  // thread a is 0
  const auto issue_of = [](const Action& action, ThreadId thread) { return action.kind == ActionKind::issue && action.lane == thread; };
  const auto hazards = litmus::run_picking(two_signallers(1), [&](const std::vector<Action>& enabled) {
    for (std::size_t i = 0; i < enabled.size(); ++i) {
      if (issue_of(enabled[i], b)) return i;
    }
    for (std::size_t i = 0; i < enabled.size(); ++i) {
      if (!issue_of(enabled[i], c)) return i;
    }
    return std::size_t{0};
  });
  EXPECT_TRUE(has(hazards, HazardKind::data_race)) << litmus::describe(hazards);
}

}  // namespace
}  // namespace amaxcheck
