// Steps that leave their lane's action as it was skip the refresh of the enabled list
// (engine_apply.cpp, Applier::kept). These are the cases next to them that must not: a thread
// whose next op is a host synchronization that cannot return yet, a stream whose new head is a
// wait on a record still pending.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>

#include "engine/engine.h"
#include "model/builder.h"

namespace amaxcheck {
namespace {

bool enabled(const Engine& engine, const Action& action) {
  const auto& actions = engine.enabled();
  return std::find(actions.begin(), actions.end(), action) != actions.end();
}

// Two fills on stream a (the second queued behind the first, so its issue changes only the
// thread's lane), then a stream_synchronize on a: the thread's issue must go away until a drains.
TEST(KeptLanes, an_issue_followed_by_a_synchronization_on_a_busy_stream_disables_the_thread) {
  ScenarioBuilder b("issue then sync");
  const RankId r = b.rank();
  const ThreadId t = b.thread(r, "main");
  const StreamId a = b.stream(r, "a");
  const BufferId x = b.buffer(r, "x", 2);
  b.op(r, t, ScenarioBuilder::fill(a, {x, 0, 1}, {1.0f}, "first"));
  b.op(r, t, ScenarioBuilder::fill(a, {x, 1, 1}, {2.0f}, "second"));
  b.op(r, t, ScenarioBuilder::host(OpKind::stream_synchronize, a, "sync"));
  const Scenario s = b.build();
  Engine engine(s);
  const Action issue{ActionKind::issue, r, t}, execute{ActionKind::execute, r, a};
  engine.apply(issue);
  engine.apply(issue);  // "second", behind "first": only the thread's lane changed
  EXPECT_FALSE(enabled(engine, issue)) << "the synchronization cannot return while a is busy";
  engine.apply(execute);
  engine.apply(execute);
  EXPECT_TRUE(enabled(engine, issue)) << "a drained";
}

// Stream b fills then records e; stream a fills then waits on e. Once a's fill runs, its head is
// the wait, whose record b has not reached: a must not be enabled until b runs it. In every run
// of a reset engine too: its issue of record_e takes the record the run before left done
// (State::records), which must be pending again.
TEST(KeptLanes, a_stream_whose_new_head_waits_on_a_pending_record_is_disabled) {
  ScenarioBuilder b("execute then wait");
  const RankId r = b.rank();
  const ThreadId t = b.thread(r, "main");
  const StreamId a = b.stream(r, "a"), s_b = b.stream(r, "b");
  const EventId e = b.event(r, "e");
  const BufferId x = b.buffer(r, "x", 2);
  b.op(r, t, ScenarioBuilder::fill(s_b, {x, 0, 1}, {1.0f}, "fill_b"));
  b.op(r, t, ScenarioBuilder::record(s_b, e, "record_e"));
  b.op(r, t, ScenarioBuilder::fill(a, {x, 1, 1}, {2.0f}, "fill_a"));
  b.op(r, t, ScenarioBuilder::wait(a, e, "wait_e"));
  const Scenario s = b.build();
  for (const OpKind kind : {OpKind::stream_wait_event, OpKind::work_wait}) {
    Scenario waiting = s;
    waiting.ranks[r].threads[t].program[3].kind = kind;
    Engine engine(waiting);
    for (int run = 0; run < 3; ++run) {
      const Action issue{ActionKind::issue, r, t};
      for (int i = 0; i < 4; ++i) engine.apply(issue);
      const Action run_a{ActionKind::execute, r, a}, run_b{ActionKind::execute, r, s_b};
      engine.apply(run_a);  // fill_a: the wait is a's head now
      EXPECT_FALSE(enabled(engine, run_a)) << to_string(kind) << " waits for record_e, run " << run;
      engine.apply(run_b);
      EXPECT_FALSE(enabled(engine, run_a)) << to_string(kind) << " waits for record_e, run " << run;
      engine.apply(run_b);  // record_e
      EXPECT_TRUE(enabled(engine, run_a)) << to_string(kind) << " after record_e, run " << run;
      run_first_enabled(engine);
      ASSERT_TRUE(engine.done());
      engine.reset(EngineOptions{});
    }
  }
}

// A rank of `threads` threads and `streams` streams: its last two streams are its highest lanes.
// The last records e, the one before waits on it; a second thread (if any) synchronizes on e.
// The record's execute must enable the wait and the synchronization, whatever the lane count:
// up to 64 the enabled list keeps a bit per lane (64 is the edge where every bit is used), and
// a wider rank is re-asked whole.
TEST(KeptLanes, a_record_enables_its_waits_and_synchronizations_in_ranks_of_64_lanes_and_more) {
  for (const auto& [threads, streams] : {std::pair{1u, 63u}, std::pair{2u, 62u}, std::pair{1u, 62u}, std::pair{2u, 63u}, std::pair{1u, 70u}}) {
    ScenarioBuilder b("wide rank");
    const RankId r = b.rank();
    const ThreadId main = b.thread(r, "main");
    for (StreamId k = 0; k < streams; ++k) b.stream(r, "s" + std::to_string(k));
    const StreamId waiter = streams - 2, recorder = streams - 1;
    const EventId e = b.event(r, "e");
    b.op(r, main, ScenarioBuilder::record(recorder, e, "record_e"));
    b.op(r, main, ScenarioBuilder::wait(waiter, e, "wait_e"));
    if (threads == 2) {
      const ThreadId other = b.thread(r, "other");
      b.op(r, other, ScenarioBuilder::host(OpKind::event_synchronize, e, "sync_e"));
    }
    const Scenario s = b.build();
    const std::string shape = std::to_string(threads) + " threads, " + std::to_string(streams) + " streams";
    Engine engine(s);
    engine.apply({ActionKind::issue, r, main});
    engine.apply({ActionKind::issue, r, main});
    const Action run_wait{ActionKind::execute, r, waiter}, sync{ActionKind::issue, r, 1};
    EXPECT_FALSE(enabled(engine, run_wait)) << shape;
    if (threads == 2) {
      EXPECT_FALSE(enabled(engine, sync)) << shape;
    }
    engine.apply({ActionKind::execute, r, recorder});
    EXPECT_TRUE(enabled(engine, run_wait)) << shape;
    if (threads == 2) {
      EXPECT_TRUE(enabled(engine, sync)) << shape;
    }
  }
}

}  // namespace
}  // namespace amaxcheck
