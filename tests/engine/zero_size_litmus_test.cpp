// Zero-size litmus tests: empty buffers and ranges, explored over every interleaving. NCCL
// discards a zero-element collective where it is called (it is matched with nothing and orders
// nothing); a zero-size send / recv is still queued for its peer and completes as a pair.
#include <gtest/gtest.h>

#include <set>

#include "engine/litmus.h"
#include "model/builder.h"

namespace amaxcheck {
namespace {

using litmus::explore_all;
using litmus::has;

struct TwoRanks {
  ScenarioBuilder b{"zero"};
  RankId r[2] = {b.rank(), b.rank()};
  CommId comm = b.comm("amax", {0, 1});
  ThreadId t[2] = {b.thread(0, "main"), b.thread(1, "main")};
  StreamId s[2] = {b.stream(0, "compute"), b.stream(1, "compute")};
  BufferId amax[2] = {b.buffer(0, "amax", 1, {2.0f}), b.buffer(1, "amax", 1, {5.0f})};
  BufferId empty[2] = {b.buffer(0, "empty", 0), b.buffer(1, "empty", 0)};
};

Op reduce(const TwoRanks& w, RankId r, std::uint32_t count, std::string name) {
  const Range range = count == 0 ? Range{w.empty[r], 0, 0} : Range{w.amax[r], 0, 1};
  return ScenarioBuilder::all_reduce(w.s[r], w.comm, range, range, std::move(name));
}

TEST(ZeroSizeLitmus, an_empty_collective_on_one_rank_is_discarded_and_the_next_ones_match) {
  TwoRanks w;
  w.b.op(0, 0, reduce(w, 0, 0, "empty_reduce"));
  w.b.op(0, 0, reduce(w, 0, 1, "amax_reduce"));
  w.b.op(1, 0, reduce(w, 1, 1, "amax_reduce"));
  std::set<std::vector<float>> seen;
  bool clean = true;
  explore_all(w.b.build(), [&](const litmus::Outcome& o) {
    seen.insert(o.engine->read(0, {w.amax[0], 0, 1}));
    clean &= o.hazards.empty() && o.engine->done();
  });
  EXPECT_EQ(seen, (std::set<std::vector<float>>{{5.0f}}));
  EXPECT_TRUE(clean);
}

TEST(ZeroSizeLitmus, an_empty_collective_does_not_stand_in_for_a_peers_real_one) {
  // NCCL discards rank 0's empty reduction, so rank 1's waits for a collective rank 0 never issues.
  TwoRanks w;
  w.b.op(0, 0, reduce(w, 0, 0, "empty_reduce"));
  w.b.op(1, 0, reduce(w, 1, 1, "amax_reduce"));
  bool always = true;
  explore_all(w.b.build(), [&](const litmus::Outcome& o) {
    always &= has(o.hazards, HazardKind::deadlock) && has(o.hazards, HazardKind::unjoined_collective);
  });
  EXPECT_TRUE(always);
}

TEST(ZeroSizeLitmus, empty_collectives_on_every_rank_complete_without_a_rendezvous) {
  TwoRanks w;
  w.b.op(0, 0, reduce(w, 0, 0, "empty_reduce"));
  w.b.op(1, 0, reduce(w, 1, 0, "empty_reduce"));
  const Scenario s = w.b.build();
  std::size_t runs = 0;
  bool clean = true;
  explore_all(s, [&](const litmus::Outcome& o) {
    ++runs;
    clean &= o.hazards.empty() && o.engine->done() && o.engine->steps() == 2;  // two issues, nothing else
  });
  EXPECT_EQ(runs, 2u);
  EXPECT_TRUE(clean);
}

TEST(ZeroSizeLitmus, a_zero_size_send_still_matches_its_recv) {
  TwoRanks w;
  w.b.op(0, 0, ScenarioBuilder::send(w.s[0], w.comm, 1, {w.empty[0], 0, 0}, "send_empty"));
  w.b.op(1, 0, ScenarioBuilder::recv(w.s[1], w.comm, 0, {w.empty[1], 0, 0}, "recv_empty"));
  bool clean = true;
  std::size_t runs = explore_all(w.b.build(), [&](const litmus::Outcome& o) { clean &= o.hazards.empty() && o.engine->done(); });
  EXPECT_GT(runs, 1u);
  EXPECT_TRUE(clean);
}

TEST(ZeroSizeLitmus, a_zero_size_recv_with_no_send_is_a_deadlock) {
  TwoRanks w;
  w.b.op(1, 0, ScenarioBuilder::recv(w.s[1], w.comm, 0, {w.empty[1], 0, 0}, "recv_empty"));
  EXPECT_TRUE(has(litmus::run_once(w.b.build()), HazardKind::deadlock));
}

TEST(ZeroSizeLitmus, an_empty_write_races_with_nothing) {
  ScenarioBuilder b{"empty write"};
  b.rank();
  b.thread(0, "main");
  const StreamId a = b.stream(0, "a");
  const StreamId c = b.stream(0, "c");
  const BufferId x = b.buffer(0, "x", 4);
  b.op(0, 0, ScenarioBuilder::fill(a, {x, 0, 4}, {1, 2, 3, 4}, "fill_all"));
  b.op(0, 0, ScenarioBuilder::fill(c, {x, 2, 0}, {}, "fill_nothing"));  // inside fill_all's range, unordered
  bool clean = true;
  explore_all(b.build(), [&](const litmus::Outcome& o) { clean &= o.hazards.empty(); });
  EXPECT_TRUE(clean);
  // The same two writes, one element wide, do race: the test can fail.
  b.scenario().ranks[0].threads[0].program[1].writes[0].count = 1;
  b.scenario().ranks[0].threads[0].program[1].values = {9};
  EXPECT_TRUE(has(litmus::run_once(b.build()), HazardKind::data_race));
}

TEST(ZeroSizeLitmus, the_amax_of_an_empty_range_is_zero) {
  ScenarioBuilder b{"empty amax"};
  b.rank();
  b.thread(0, "main");
  const StreamId k = b.stream(0, "compute");
  const BufferId x = b.buffer(0, "x", 0);
  const BufferId amax = b.buffer(0, "amax", 1, {7.0f});
  Op op;
  op.kind = OpKind::local_amax;
  op.name = "amax";
  op.stream = k;
  op.reads = {{x, 0, 0}};
  op.writes = {{amax, 0, 1}};
  b.op(0, 0, op);
  const Scenario s = b.build();  // the engine keeps a reference
  Engine engine(s);
  run_first_enabled(engine);
  EXPECT_EQ(engine.read(0, {amax, 0, 1}), std::vector<float>{0.0f});
}

}  // namespace
}  // namespace amaxcheck
