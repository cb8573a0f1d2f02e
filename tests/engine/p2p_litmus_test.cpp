// Point-to-point litmus tests: send / recv with NCCL's semantics (matched per peer pair in issue
// order, a pair completes once both sides started, grouped ops launch as one), explored over
// every interleaving.
#include <gtest/gtest.h>

#include <functional>
#include <set>

#include "engine/litmus.h"
#include "model/builder.h"
#include "scheduler/scenarios.h"

namespace amaxcheck {
namespace {

using litmus::explore_all;
using litmus::has;

struct TwoRanks {
  ScenarioBuilder b{"p2p"};
  RankId r[2] = {b.rank(), b.rank()};
  CommId comm = b.comm("pp", {0, 1});
  ThreadId t[2] = {b.thread(0, "main"), b.thread(1, "main")};
  StreamId s[2] = {b.stream(0, "compute"), b.stream(1, "compute")};
  BufferId out[2] = {b.buffer(0, "out", 2, {1.0f, 2.0f}), b.buffer(1, "out", 2, {3.0f, 4.0f})};
  BufferId in[2] = {b.buffer(0, "in", 2), b.buffer(1, "in", 2)};
};

TEST(P2pLitmus, a_send_delivers_its_data_to_the_matching_recv_in_every_interleaving) {
  TwoRanks w;
  w.b.op(0, 0, ScenarioBuilder::send(w.s[0], w.comm, 1, {w.out[0], 0, 2}, "send_act"));
  w.b.op(1, 0, ScenarioBuilder::recv(w.s[1], w.comm, 0, {w.in[1], 0, 2}, "recv_act"));
  std::set<std::vector<float>> seen;
  bool clean = true;
  const std::size_t runs = explore_all(w.b.build(), [&](const litmus::Outcome& o) {
    seen.insert(o.engine->read(1, {w.in[1], 0, 2}));
    clean &= o.hazards.empty() && o.engine->done();
  });
  EXPECT_GT(runs, 1u);
  EXPECT_EQ(seen, (std::set<std::vector<float>>{{1.0f, 2.0f}}));
  EXPECT_TRUE(clean);
}

TEST(P2pLitmus, sends_to_one_peer_match_its_recvs_in_issue_order) {
  TwoRanks w;
  w.b.op(0, 0, ScenarioBuilder::send(w.s[0], w.comm, 1, {w.out[0], 0, 1}, "send_first"));
  w.b.op(0, 0, ScenarioBuilder::send(w.s[0], w.comm, 1, {w.out[0], 1, 1}, "send_second"));
  w.b.op(1, 0, ScenarioBuilder::recv(w.s[1], w.comm, 0, {w.in[1], 0, 1}, "recv_first"));
  w.b.op(1, 0, ScenarioBuilder::recv(w.s[1], w.comm, 0, {w.in[1], 1, 1}, "recv_second"));
  std::set<std::vector<float>> seen;
  explore_all(w.b.build(), [&](const litmus::Outcome& o) { seen.insert(o.engine->read(1, {w.in[1], 0, 2})); });
  EXPECT_EQ(seen, (std::set<std::vector<float>>{{1.0f, 2.0f}}));
}

TEST(P2pLitmus, a_recv_with_no_matching_send_is_a_deadlock_naming_the_peer) {
  TwoRanks w;
  w.b.op(1, 0, ScenarioBuilder::recv(w.s[1], w.comm, 0, {w.in[1], 0, 2}, "recv_act"));
  const auto hazards = litmus::run_once(w.b.build());
  ASSERT_TRUE(has(hazards, HazardKind::deadlock)) << litmus::describe(hazards);
  EXPECT_NE(litmus::describe(hazards).find("recv #0 from rank 0 to rank 1 on comm pp"), std::string::npos)
      << litmus::describe(hazards);
}

/// Each rank sends to the other, then receives: ungrouped, each send waits for a recv that its
/// peer has queued behind its own send (NCCL runs a comm's ops in issue order).
Scenario exchange(bool grouped) {
  TwoRanks w;
  for (RankId r : {0u, 1u}) {
    const std::uint32_t peer = 1 - r;
    w.b.op(r, 0, ScenarioBuilder::send(w.s[r], w.comm, peer, {w.out[r], 0, 2}, "send", grouped ? 1 : 0));
    w.b.op(r, 0, ScenarioBuilder::recv(w.s[r], w.comm, peer, {w.in[r], 0, 2}, "recv", grouped ? 1 : 0));
  }
  return w.b.build();
}

TEST(P2pLitmus, an_ungrouped_exchange_deadlocks_in_every_interleaving) {
  bool always = true;
  explore_all(exchange(false), [&](const litmus::Outcome& o) { always &= has(o.hazards, HazardKind::deadlock); });
  EXPECT_TRUE(always);
}

TEST(P2pLitmus, a_grouped_exchange_completes_in_every_interleaving) {
  std::set<std::vector<float>> seen;
  bool clean = true;
  explore_all(exchange(true), [&](const litmus::Outcome& o) {
    clean &= o.hazards.empty() && o.engine->done();
    auto a = o.engine->read(0, {1, 0, 2});
    auto b = o.engine->read(1, {1, 0, 2});
    a.insert(a.end(), b.begin(), b.end());
    seen.insert(a);
  });
  EXPECT_TRUE(clean);
  EXPECT_EQ(seen, (std::set<std::vector<float>>{{3.0f, 4.0f, 1.0f, 2.0f}}));
}

TEST(P2pLitmus, another_thread_s_kernel_issued_inside_a_group_runs_before_the_group) {
  // Rank 0's second thread fills a buffer on the group's stream while the group is half issued.
  // NCCL launches nothing of a group before ncclGroupEnd, so the fill runs first and the exchange
  // completes; queuing the send at its issue put the fill inside the group, a hang that hardware
  // cannot have.
  Scenario s = exchange(true);
  const ThreadId side = static_cast<ThreadId>(s.ranks[0].threads.size());
  s.ranks[0].threads.push_back(Thread{"side", {}});
  s.ranks[0].buffers.push_back(Buffer{"side", 1, false, {}});
  s.ranks[0].threads[side].program.push_back(ScenarioBuilder::fill(0, {static_cast<BufferId>(s.ranks[0].buffers.size() - 1), 0, 1}, {5.0f}, "side_fill"));
  std::set<std::vector<float>> seen;
  bool clean = true;
  const std::size_t runs = explore_all(s, [&](const litmus::Outcome& o) {
    clean &= o.hazards.empty() && o.engine->done();
    if (!o.hazards.empty()) ADD_FAILURE() << litmus::describe(o.hazards);
    seen.insert(o.engine->read(0, {1, 0, 2}));
  });
  EXPECT_GT(runs, 1u);
  EXPECT_TRUE(clean);
  EXPECT_EQ(seen, (std::set<std::vector<float>>{{3.0f, 4.0f}}));
}

TEST(P2pLitmus, a_send_and_recv_of_different_sizes_is_a_mismatch_and_a_hang) {
  TwoRanks w;
  w.b.op(0, 0, ScenarioBuilder::send(w.s[0], w.comm, 1, {w.out[0], 0, 2}, "send_act"));
  w.b.op(1, 0, ScenarioBuilder::recv(w.s[1], w.comm, 0, {w.in[1], 0, 1}, "recv_act"));
  const auto hazards = litmus::run_once(w.b.build());
  EXPECT_TRUE(has(hazards, HazardKind::collective_mismatch)) << litmus::describe(hazards);
  EXPECT_TRUE(has(hazards, HazardKind::deadlock)) << litmus::describe(hazards);
}

TEST(P2pLitmus, a_recv_orders_the_senders_writes_before_the_receivers_reads) {
  // Rank 1 copies what it received on another stream after the recv's stream: only a recv
  // completion makes the copy safe. Without the wait, it races with the recv's write.
  for (bool wait : {false, true}) {
    TwoRanks w;
    const StreamId side = w.b.stream(1, "side");
    const EventId got = w.b.event(1, "got");
    const BufferId copy = w.b.buffer(1, "copy", 2);
    w.b.op(0, 0, ScenarioBuilder::send(w.s[0], w.comm, 1, {w.out[0], 0, 2}, "send_act"));
    w.b.op(1, 0, ScenarioBuilder::recv(w.s[1], w.comm, 0, {w.in[1], 0, 2}, "recv_act"));
    w.b.op(1, 0, ScenarioBuilder::record(w.s[1], got));
    if (wait) w.b.op(1, 0, ScenarioBuilder::wait(side, got));
    w.b.op(1, 0, ScenarioBuilder::copy(side, {w.in[1], 0, 2}, {copy, 0, 2}));
    bool race = false;
    explore_all(w.b.build(), [&](const litmus::Outcome& o) { race |= has(o.hazards, HazardKind::data_race); });
    EXPECT_EQ(race, !wait);
  }
}


TEST(P2pLitmus, a_group_that_sends_a_buffer_and_receives_into_it_races_with_itself) {
  // NCCL runs a group's ops concurrently: the recv may overwrite x before the send has read it
  // (an in-place exchange). Both ops are on one stream, whose clock orders them, so only the
  // group's own check finds it. Receiving into another buffer is the clean exchange above.
  TwoRanks w;
  for (RankId r : {0u, 1u}) {
    const std::uint32_t peer = 1 - r;
    w.b.op(r, 0, ScenarioBuilder::send(w.s[r], w.comm, peer, {w.out[r], 0, 1}, "send_x", 1));
    w.b.op(r, 0, ScenarioBuilder::recv(w.s[r], w.comm, peer, {w.out[r], 0, 1}, "recv_into_x", 1));
  }
  bool always = true;
  std::string seen;
  explore_all(w.b.build(), [&](const litmus::Outcome& o) {
    always &= has(o.hazards, HazardKind::data_race);
    seen = litmus::describe(o.hazards);
  });
  EXPECT_TRUE(always) << seen;
  EXPECT_NE(seen.find("ops of one ncclGroup"), std::string::npos) << seen;
  EXPECT_NE(seen.find("buffer out[0..1)"), std::string::npos) << seen;
}

TEST(P2pLitmus, a_grouped_recv_writes_at_its_own_pair_s_completion_not_at_the_group_s_join) {
  // Once, every op of a group was an access at the group's join: the first pair to complete
  // handed that clock to rank 0, whose forward then covered recv_y's write, and the read of y
  // on the other stream was never a race, though it can run before rank 1 sends (the search
  // test Exhaustive.with_reduction_tries_a_pair_completing_before_another_pair_s_side_joins
  // finds that schedule). A grouped access's happens-before is its pair's, the same in every
  // schedule (the next test): one run shows it.
  for (bool behind_the_group : {false, true}) {
    const auto hazards = litmus::run_once(sched::testing::group_completed_in_part(behind_the_group));
    EXPECT_EQ(has(hazards, HazardKind::data_race), !behind_the_group)
        << "read on the group's stream: " << behind_the_group << "\n" << litmus::describe(hazards);
  }
}


/// A run's picks: a completion whenever one is enabled, and rank 0's join on `stream` (its
/// group's) only when nothing else is: every peer of the group joins first, so its pairs are
/// ready at once.
std::function<std::size_t(const std::vector<Action>&)> completions_first_and_rank_0_s_join_on_last(StreamId stream) {
  return [stream](const std::vector<Action>& enabled) {
    for (std::size_t i = 0; i < enabled.size(); ++i) {
      if (enabled[i].kind == ActionKind::complete) return i;
    }
    for (std::size_t i = 0; i < enabled.size(); ++i) {
      if (!(enabled[i].kind == ActionKind::join && enabled[i].rank == 0 && enabled[i].lane == stream)) return i;
    }
    return std::size_t{0};
  };
}

/// Three ranks: rank 0 fills y on stream t and sends w to rank 1 after it on t (communicator d);
/// on stream s, which never waits for t, it sends x to rank 1 in group 1 on communicator c, whose
/// recv from rank 2 each test adds. Rank 1 receives w, then x, on one stream; rank 2 sends v.
struct GroupOverTwoPeers {
  ScenarioBuilder b{"group_over_two_peers"};
  RankId r[3] = {b.rank(), b.rank(), b.rank()};
  CommId c = b.comm("c", {0, 1, 2}), d = b.comm("d", {0, 1});
  ThreadId t0 = b.thread(0, "main"), t1 = b.thread(1, "main"), t2 = b.thread(2, "main");
  StreamId s0 = b.stream(0, "s"), side = b.stream(0, "t"), s1 = b.stream(1, "s"), s2 = b.stream(2, "s");
  BufferId x = b.buffer(0, "x", 1, {1.0f}), y = b.buffer(0, "y", 1), w = b.buffer(0, "w", 1, {2.0f}), z = b.buffer(0, "z", 1);
  BufferId got_w = b.buffer(1, "w", 1), got_x = b.buffer(1, "x", 1), v = b.buffer(2, "v", 1, {3.0f});
  GroupOverTwoPeers() {
    b.op(0, t0, ScenarioBuilder::fill(side, {y, 0, 1}, {5.0f}, "fill_y"));
    b.op(0, t0, ScenarioBuilder::send(side, d, 1, {w, 0, 1}, "send_w"));
    b.op(0, t0, ScenarioBuilder::send(s0, c, 1, {x, 0, 1}, "send_x", 1));
    b.op(1, t1, ScenarioBuilder::recv(s1, d, 0, {got_w, 0, 1}, "recv_w"));
    b.op(1, t1, ScenarioBuilder::recv(s1, c, 0, {got_x, 0, 1}, "recv_x"));
    b.op(2, t2, ScenarioBuilder::send(s2, c, 0, {v, 0, 1}, "send_v"));
  }
  /// The run in which ranks 1 and 2 join first, so both of the group's pairs are ready at once
  /// and the one with rank 1 (the lower sender) completes first: its hazards.
  std::vector<Hazard> run() const { return litmus::run_picking(b.build(), completions_first_and_rank_0_s_join_on_last(s0)); }
};

TEST(P2pLitmus, a_grouped_recv_s_access_carries_only_its_own_pair_s_past) {
  // The group's recv writes y: it races the fill. The pair with rank 1 completes first, and the
  // group's stream then joins rank 1's past, which holds the fill (through w). Once, the recv's
  // access took that stream clock, and the race went unreported in such runs.
  GroupOverTwoPeers g;
  g.b.op(0, g.t0, ScenarioBuilder::recv(g.s0, g.c, 2, {g.y, 0, 1}, "recv_y", 1));
  const auto hazards = g.run();
  EXPECT_TRUE(has(hazards, HazardKind::data_race)) << litmus::describe(hazards);
  EXPECT_NE(litmus::describe(hazards).find("between fill_y (stream t) and recv_y (stream s)"), std::string::npos)
      << litmus::describe(hazards);
}

TEST(P2pLitmus, a_group_s_stream_goes_on_after_the_past_of_every_peer_its_pairs_completed_with) {
  // The group's recv writes z, and rank 0 fills y again on stream s behind the whole group. The
  // pair of x carries the first fill (rank 1 receives x after w), so the second fill is ordered
  // after it: no race. Once the second pair's completion replaced the stream's clock with its
  // own pair's, which knows nothing of rank 1, and the second fill raced the first.
  GroupOverTwoPeers g;
  g.b.op(0, g.t0, ScenarioBuilder::recv(g.s0, g.c, 2, {g.z, 0, 1}, "recv_v", 1));
  g.b.op(0, g.t0, ScenarioBuilder::fill(g.s0, {g.y, 0, 1}, {6.0f}, "fill_y_again"));
  const auto hazards = g.run();
  EXPECT_FALSE(has(hazards, HazardKind::data_race)) << litmus::describe(hazards);
  EXPECT_TRUE(hazards.empty()) << litmus::describe(hazards);
}

}  // namespace
}  // namespace amaxcheck
