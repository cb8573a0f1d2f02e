// Shrinking keeps the same hazard (the same bug, not just its kind), maps the shrunk run back
// to the original, and makes the run smaller.
#include "shrink/shrink.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "detectors/deadlock_detector.h"
#include "io/scenario_json.h"
#include "protocols/protocol.h"
#include "scheduler/explore.h"
#include "scheduler/random_strategy.h"
#include "scheduler/replay_strategy.h"
#include "trace/reproduce.h"
#include "shrink/scenario_reduce.h"
#include "scenarios.h"
#include "util/check.h"

namespace amaxcheck::sched {
namespace {

FailingRun first_failure(const Scenario& s, std::uint64_t seed) {
  ExploreOptions options;
  options.seed = seed;
  options.runs = 100;
  ExploreResult r = explore(s, options);
  EXPECT_TRUE(r.first_failure.has_value());
  return std::move(*r.first_failure);
}

TEST(Shrink, the_wait_after_copy_race_at_8_ranks_shrinks_and_keeps_its_hazard) {
  const Scenario s = testing::wait_after_copy(8);
  const FailingRun failure = first_failure(s, 1);
  const ShrinkResult shrunk = shrink(s, failure.run.choices, HazardKind::data_race);
  EXPECT_TRUE(shrunk.run.has_hazard(HazardKind::data_race));
  EXPECT_LT(shrunk.after.ranks, shrunk.before.ranks);
  EXPECT_LT(shrunk.after.ops, shrunk.before.ops);
  EXPECT_LT(shrunk.after.steps, shrunk.before.steps);
  EXPECT_EQ(shrunk.before.ranks, 8u);
  EXPECT_FALSE(shrunk.budget_exhausted);
  RecordProperty("before", fmt::format("{} ranks {} ops {} steps", shrunk.before.ranks, shrunk.before.ops, shrunk.before.steps));
  RecordProperty("after", fmt::format("{} ranks {} ops {} steps", shrunk.after.ranks, shrunk.after.ops, shrunk.after.steps));
  // The shrunk run is a trace of its own that replays strictly.
  const Trace trace = make_trace(shrunk.scenario, shrunk.run, TraceOrigin{"shrink", 0, 0, {}});
  const Trace back = parse_trace(trace_to_jsonl(trace), "shrunk.jsonl");
  EXPECT_TRUE(replay_trace(trace_scenario(back, "shrunk.jsonl"), back, "shrunk.jsonl").has_hazard(HazardKind::data_race));
  EXPECT_LT(trace_to_jsonl(trace).size(), trace_to_jsonl(failure_trace(s, ExploreOptions{}, failure)).size());
}

TEST(Shrink, the_collective_order_swap_keeps_its_mismatch) {
  const Scenario s = testing::collective_order_swap();
  const FailingRun failure = first_failure(s, 2);
  const ShrinkResult shrunk = shrink(s, failure.run.choices, HazardKind::collective_mismatch);
  EXPECT_TRUE(shrunk.run.has_hazard(HazardKind::collective_mismatch));
  EXPECT_EQ(shrunk.after.ranks, 2u) << "a mismatch needs both ranks";
  EXPECT_LE(shrunk.after.ops, shrunk.before.ops);
}

Scenario te_async(std::vector<std::pair<std::string, std::string>> settings) {
  ProtocolKnobs knobs;
  knobs.protocol = ProtocolName::te_async;
  for (const auto& [name, value] : settings) set_knob(knobs, name, value);
  return build_protocol(knobs);
}

/// The original ops (rank, thread, index) a hazard of a reduced scenario names, in order.
std::vector<OpRef> original_ops(const Hazard& h, const Lineage& lineage) {
  std::vector<OpRef> ops;
  for (const Participant& p : h.participants) ops.push_back(lineage.original(p.op));
  return ops;
}

/// The first random run (seeds 0, 1, ...) of `s` that shows a hazard of `kind`.
RunResult first_run_with(const Scenario& s, HazardKind kind) {
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    RandomStrategy random(seed);
    RunResult run = run_once(s, random);
    if (run.has_hazard(kind)) return run;
  }
  ADD_FAILURE() << "no random run shows " << to_string(kind);
  return {};
}

TEST(Shrink, the_raw_race_of_wait_after_copy_stays_a_raw_race_between_the_same_ops) {
  // The example: the shrunk trace used to be a WAR race with the copy before the
  // reduction, plus a value_mismatch the original did not have.
  const Scenario s = te_async({{"wait", "after-copy"}, {"dp", "2"}, {"modules", "1"}, {"iters", "1"}});
  const FailingRun failure = first_failure(s, 0);
  ASSERT_FALSE(failure.run.hazards.empty());
  const Hazard& original = failure.run.hazards.front();
  ASSERT_EQ(original.kind, HazardKind::data_race);
  ASSERT_EQ(original.participants.size(), 2u);
  ASSERT_EQ(original.participants[0].access, Access::write) << original.summary;
  ASSERT_EQ(original.participants[1].access, Access::read) << original.summary;

  const ShrinkResult shrunk = shrink(s, failure.run.choices, std::size_t{0});
  EXPECT_EQ(shrunk.hazard.kind, HazardKind::data_race);
  EXPECT_EQ(original_ops(shrunk.hazard, shrunk.lineage), original_ops(original, unreduced(s).lineage)) << shrunk.hazard.summary;
  EXPECT_EQ(shrunk.hazard.participants[0].access, Access::write) << shrunk.hazard.summary;
  EXPECT_EQ(shrunk.hazard.participants[1].access, Access::read) << shrunk.hazard.summary;
  EXPECT_EQ(shrunk.hazard.summary.substr(0, 3), "RAW") << shrunk.hazard.summary;
  for (const Hazard& h : shrunk.run.hazards) EXPECT_EQ(h.kind, HazardKind::data_race) << "a new bug: " << h.summary;
  EXPECT_LT(shrunk.after.ops, shrunk.before.ops);
  // The replayed trace reports the same identity.
  const Trace trace = make_trace(shrunk.scenario, shrunk.run, TraceOrigin{"shrink", 0, 0, {}});
  const Trace back = parse_trace(trace_to_jsonl(trace), "shrunk.jsonl");
  const RunResult replayed = replay_trace(trace_scenario(back, "shrunk.jsonl"), back, "shrunk.jsonl");
  EXPECT_TRUE(same_bug(shrunk.identity, shrunk.scenario, shrunk.lineage, replayed)) << shrunk.identity.show();
}

TEST(Shrink, a_value_mismatch_keeps_the_op_that_wrote_the_wrong_value) {
  const Scenario s = te_async({{"wait", "after-copy"}, {"dp", "2"}, {"modules", "1"}, {"iters", "1"}});
  const RunResult original = first_run_with(s, HazardKind::value_mismatch);
  const ShrinkResult shrunk = shrink(s, original.choices, HazardKind::value_mismatch);
  EXPECT_GT(shrunk.after.ops, 0u) << "a run with no ops keeps the initial values: another bug";
  ASSERT_FALSE(shrunk.identity.producers.empty());
  for (const std::string& producer : shrunk.identity.producers) {
    EXPECT_EQ(producer.find("initial value"), std::string::npos) << producer;
  }
  EXPECT_EQ(shrunk.hazard.kind, HazardKind::value_mismatch);
  ReplayStrategy replay(shrunk.run.choices, ReplayStrategy::Mode::strict);
  const RunResult again = run_once(shrunk.scenario, replay, identity_options({}, HazardKind::value_mismatch));
  EXPECT_TRUE(same_bug(shrunk.identity, shrunk.scenario, shrunk.lineage, again)) << shrunk.identity.show();
  // The wrong value is the original's.
  ReplayStrategy original_replay(original.choices, ReplayStrategy::Mode::strict);
  const RunResult original_again = run_once(s, original_replay, identity_options({}, HazardKind::value_mismatch));
  EXPECT_TRUE(same_bug(shrunk.identity, s, unreduced(s).lineage, original_again)) << shrunk.identity.show();
  EXPECT_LT(shrunk.after.ops, shrunk.before.ops);
}

/// Ranks 0 → 1 → 2 pass a value on by send / recv: rank 0 fills `out` with 5 (its initial value
/// is 3) and sends it; rank 1 receives it into `in` and sends that on to rank 2. The check wants
/// 7 in rank 1's `in`, so every run shows 5 there, written by rank 1's recv. With
/// `bystander`, rank 2 only holds its own checked `in` (never written: 0 against 7) and takes no
/// part in the pair.
Scenario p2p_chain(bool bystander) {
  ScenarioBuilder b(bystander ? "p2p_bystander" : "p2p_chain");
  const RankId r0 = b.rank(), r1 = b.rank(), r2 = b.rank();
  const CommId pp = b.comm("pp", {r0, r1, r2});
  const StreamId s0 = b.stream(r0, "s"), s1 = b.stream(r1, "s"), s2 = b.stream(r2, "s");
  const ThreadId t0 = b.thread(r0, "main"), t1 = b.thread(r1, "main"), t2 = b.thread(r2, "main");
  const BufferId out = b.buffer(r0, "out", 1, {3.0f});
  const BufferId in1 = b.buffer(r1, "in", 1), in2 = b.buffer(r2, "in", 1);
  b.op(r0, t0, ScenarioBuilder::fill(s0, {out, 0, 1}, {5.0f}, "fill_out"));
  b.op(r0, t0, ScenarioBuilder::send(s0, pp, 1, {out, 0, 1}, "send01"));
  b.op(r1, t1, ScenarioBuilder::recv(s1, pp, 0, {in1, 0, 1}, "recv10"));
  const RankId checked = bystander ? r2 : r1;
  if (!bystander) {
    b.op(r1, t1, ScenarioBuilder::send(s1, pp, 2, {in1, 0, 1}, "send12"));
    b.op(r2, t2, ScenarioBuilder::recv(s2, pp, 1, {in2, 0, 1}, "recv21"));
  }
  b.scenario().checks.push_back(ReplicaCheck{"in", {{checked, {checked == r1 ? in1 : in2, 0, 1}}}, {7.0f}});
  return b.build();
}

TEST(Shrink, a_value_received_by_recv_keeps_the_recv_and_the_value_it_received) {
  // A later send of the receiving rank, whose per-pair seq is the recv's, once stood in for the
  // recv as the writer: the identity said "kept its initial value", so a shrink could drop the
  // fill and keep a run that received 3 instead of 5, another bug.
  const Scenario s = p2p_chain(false);
  const RunResult original = first_run_with(s, HazardKind::value_mismatch);
  const ShrinkResult shrunk = shrink(s, original.choices, HazardKind::value_mismatch);
  ASSERT_EQ(shrunk.identity.producers.size(), 1u) << shrunk.identity.show();
  EXPECT_NE(shrunk.identity.producers[0].find("recv10 wrote in = [5]"), std::string::npos) << shrunk.identity.show();
  EXPECT_NE(shrunk.hazard.summary.find('5'), std::string::npos) << shrunk.hazard.summary;
  ReplayStrategy replay(shrunk.run.choices, ReplayStrategy::Mode::strict);
  const RunResult again = run_once(shrunk.scenario, replay, identity_options({}, HazardKind::value_mismatch));
  EXPECT_TRUE(same_bug(shrunk.identity, shrunk.scenario, shrunk.lineage, again)) << shrunk.identity.show();
}

TEST(Shrink, a_rank_that_sends_to_itself_is_written_by_its_recv) {
  // Rank 0 fills `out` with 5 (initially 3), then sends it to itself into `in`, in one group;
  // the check wants 7. The pair's send is rank 0's too: the recv must still be the writer, or
  // dropping the fill (3 received) would pass for the same bug.
  ScenarioBuilder b("self_send");
  const RankId r0 = b.rank(), r1 = b.rank();
  const CommId pp = b.comm("pp", {r0, r1});
  const StreamId s0 = b.stream(r0, "s");
  const ThreadId t0 = b.thread(r0, "main");
  b.thread(r1, "main");
  const BufferId out = b.buffer(r0, "out", 1, {3.0f});
  const BufferId in = b.buffer(r0, "in", 1);
  b.op(r0, t0, ScenarioBuilder::fill(s0, {out, 0, 1}, {5.0f}, "fill_out"));
  b.op(r0, t0, ScenarioBuilder::send(s0, pp, 0, {out, 0, 1}, "send00", 1));
  b.op(r0, t0, ScenarioBuilder::recv(s0, pp, 0, {in, 0, 1}, "recv00", 1));
  b.scenario().checks.push_back(ReplicaCheck{"in", {{r0, {in, 0, 1}}}, {7.0f}});
  const Scenario s = b.build();
  const RunResult original = first_run_with(s, HazardKind::value_mismatch);
  const ShrinkResult shrunk = shrink(s, original.choices, HazardKind::value_mismatch);
  ASSERT_EQ(shrunk.identity.producers.size(), 1u) << shrunk.identity.show();
  EXPECT_NE(shrunk.identity.producers[0].find("recv00 wrote in = [5]"), std::string::npos) << shrunk.identity.show();
}

TEST(Shrink, a_member_outside_a_send_recv_pair_is_not_written_by_it) {
  // Once an internal error: the pair's completion was looked up on every member of the
  // communicator, and rank 2 issued nothing on it.
  const Scenario s = p2p_chain(true);
  const RunResult original = first_run_with(s, HazardKind::value_mismatch);
  const ShrinkResult shrunk = shrink(s, original.choices, HazardKind::value_mismatch);
  ASSERT_EQ(shrunk.identity.producers.size(), 1u) << shrunk.identity.show();
  EXPECT_NE(shrunk.identity.producers[0].find("rank 2 buffer in kept its initial value [0]"), std::string::npos)
      << shrunk.identity.show();
}

TEST(Shrink, a_wait_for_cycle_stays_a_cycle) {
  const Scenario s = te_async({{"comm", "separate"}, {"amax-order", "rank-dependent"}, {"kernels", "serialized"},
                               {"dp", "2"}, {"modules", "1"}, {"iters", "1"}});
  const RunResult original = first_run_with(s, HazardKind::deadlock);
  const Hazard* deadlock = nullptr;
  for (const Hazard& h : original.hazards) deadlock = h.kind == HazardKind::deadlock ? &h : deadlock;
  ASSERT_NE(deadlock, nullptr);
  ASSERT_TRUE(is_wait_for_cycle(*deadlock)) << deadlock->summary;
  const ShrinkResult shrunk = shrink(s, original.choices, HazardKind::deadlock);
  EXPECT_TRUE(is_wait_for_cycle(shrunk.hazard)) << shrunk.hazard.summary;
  EXPECT_FALSE(shrunk.run.has_hazard(HazardKind::unjoined_collective)) << "a cycle became a missing collective";
  EXPECT_EQ(shrunk.hazard.participants.size(), deadlock->participants.size());
}

/// Rank 1 waits on a host flag nobody signals before its all_reduce, so rank 0 hangs in the
/// collective rank 1 has not issued yet (a deadlock and an unjoined collective).
Scenario flag_before_collective() {
  ScenarioBuilder b("flag_before_collective");
  const RankId r0 = b.rank(), r1 = b.rank();
  const CommId dp = b.comm("dp", {r0, r1});
  const StreamId s0 = b.stream(r0, "s"), s1 = b.stream(r1, "s");
  const ThreadId t0 = b.thread(r0, "main"), t1 = b.thread(r1, "main");
  const BufferId a0 = b.buffer(r0, "amax", 1), a1 = b.buffer(r1, "amax", 1);
  b.flag(r1, "ready");
  b.op(r0, t0, ScenarioBuilder::all_reduce(s0, dp, {a0, 0, 1}, {a0, 0, 1}, "amax_reduce"));
  b.op(r1, t1, ScenarioBuilder::host(OpKind::host_wait, 0, "wait_ready")).count = 1;
  b.op(r1, t1, ScenarioBuilder::all_reduce(s1, dp, {a1, 0, 1}, {a1, 0, 1}, "amax_reduce"));
  return b.build();
}

TEST(Shrink, a_collective_not_yet_issued_never_becomes_one_never_issued) {
  // Deleting rank 1's all_reduce (or its wait with it) leaves rank 0 waiting in the same
  // collective, but for one that rank 1's program never issues: a missing op, not a missing
  // signal. Both hazards of the run once shrank to it.
  const Scenario s = flag_before_collective();
  for (HazardKind kind : {HazardKind::deadlock, HazardKind::unjoined_collective}) {
    const RunResult original = first_run_with(s, kind);
    const ShrinkResult shrunk = shrink(s, original.choices, kind);
    EXPECT_EQ(shrunk.hazard.summary.find("never issues"), std::string::npos) << shrunk.hazard.summary;
    ASSERT_EQ(shrunk.scenario.ranks.size(), 2u);
    EXPECT_EQ(shrunk.scenario.ranks[1].threads[0].program.size(), 2u) << to_string(kind) << ": rank 1 lost an op";
    EXPECT_NE(shrunk.identity.show().find("has not issued the matching op (rank 1)"), std::string::npos) << shrunk.identity.show();
  }
}

// What "the same bug" holds besides the ops (shrink_identity.h): the subject, whether a deadlock
// is a wait-for cycle, and each participant's lane and access. A hazard that differs from the
// original in any one of them alone is another bug, which a shrink must not keep.
TEST(Shrink, a_bug_s_identity_holds_its_subject_cycle_lanes_and_accesses) {
  const Scenario s = flag_before_collective();
  const Lineage lineage = Lineage::identity(s);
  const RunResult no_run;
  const auto identity = [&](const Hazard& h) { return identity_of(h, s, lineage, no_run); };
  Hazard race;
  race.kind = HazardKind::data_race;
  race.subject = "amax";
  race.participants = {Participant{0, "stream s", OpRef{0, 0, 0}, "amax_reduce", "", 3, Access::write},
                       Participant{1, "stream s", OpRef{1, 0, 1}, "amax_reduce", "", 5, Access::read}};
  Hazard other_subject = race, other_access = race, other_lane = race;
  other_subject.subject = "scale";
  other_access.participants[1].access = Access::write;
  other_lane.participants[0].lane = "thread main";
  for (const Hazard* other : {&other_subject, &other_access, &other_lane}) {
    EXPECT_NE(identity(*other), identity(race)) << identity(*other).show();
  }
  Hazard steps_differ = race;
  steps_differ.participants[0].step = 9;
  EXPECT_EQ(identity(steps_differ), identity(race)) << "a step number is not part of the bug";

  Hazard cycle;
  cycle.kind = HazardKind::deadlock;
  cycle.summary = "deadlock: wait-for cycle rank 0 stream s (amax_reduce) -> back to the start";
  cycle.participants = {race.participants[0]};
  Hazard hang = cycle;
  hang.summary = "hang: ranks wait in collective #0 on comm dp (amax_reduce)";
  ASSERT_TRUE(is_wait_for_cycle(cycle));
  EXPECT_NE(identity(hang), identity(cycle)) << identity(hang).show();
}

TEST(Shrink, a_collective_mismatch_keeps_the_pair_that_mismatched) {
  const Scenario s = testing::collective_order_swap();
  const FailingRun failure = first_failure(s, 2);
  const ShrinkResult shrunk = shrink(s, failure.run.choices, HazardKind::collective_mismatch);
  const Hazard* original = nullptr;
  for (const Hazard& h : failure.run.hazards) original = !original && h.kind == HazardKind::collective_mismatch ? &h : original;
  ASSERT_NE(original, nullptr);
  auto sorted = [](std::vector<OpRef> ops) {
    std::sort(ops.begin(), ops.end(), [](const OpRef& a, const OpRef& b) {
      return std::tie(a.rank, a.thread, a.index) < std::tie(b.rank, b.thread, b.index);
    });
    return ops;
  };
  EXPECT_EQ(sorted(original_ops(shrunk.hazard, shrunk.lineage)), sorted(original_ops(*original, unreduced(s).lineage)))
      << "original: " << original->summary << "\nshrunk: " << shrunk.hazard.summary;
}

TEST(Shrink, the_lineage_names_every_rank_op_and_check_of_the_shrunk_scenario) {
  const Scenario s = testing::wait_after_copy(4);
  const FailingRun failure = first_failure(s, 1);
  const ShrinkResult shrunk = shrink(s, failure.run.choices, HazardKind::data_race);
  const std::vector<std::string> lines = describe_lineage(shrunk.scenario, shrunk.lineage, s);
  std::size_t ops = 0, ranks = 0;
  for (const std::string& line : lines) {
    ranks += line.rfind("rank ", 0) == 0 ? 1 : 0;
    ops += line.find(" = original rank ") != std::string::npos && line.rfind("  thread ", 0) == 0 ? 1 : 0;
  }
  EXPECT_EQ(ranks, shrunk.scenario.ranks.size());
  EXPECT_EQ(ops, op_count(shrunk.scenario));
  for (RankId r = 0; r < shrunk.scenario.ranks.size(); ++r) {
    EXPECT_EQ(shrunk.scenario.ranks[r].name, s.ranks[shrunk.lineage.ranks[r]].name);
    for (ThreadId t = 0; t < shrunk.scenario.ranks[r].threads.size(); ++t) {
      for (std::uint32_t i = 0; i < shrunk.scenario.ranks[r].threads[t].program.size(); ++i) {
        const OpRef back = shrunk.lineage.original(OpRef{r, t, i});
        EXPECT_EQ(shrunk.scenario.ranks[r].threads[t].program[i].origin, s.ranks[back.rank].threads[t].program[back.index].origin);
      }
    }
  }
  const auto json = lineage_json(shrunk.scenario, shrunk.lineage);
  EXPECT_EQ(json["ranks"].size(), shrunk.scenario.ranks.size());
}

/// custom-wait-after-copy.json in small, its checks "expected": "reference": each of two ranks
/// writes its local amax (3 on rank 0, 7 on rank 1) into a buffer, all-reduces it (MAX) on a
/// side stream and copies it back into its history before waiting for the reduction; in the
/// reference (the program run one blocking op at a time) every history ends [0, 7], the scale
/// update having rolled the reduced 7 to its end.
Scenario wait_after_copy_with_reference_checks() {
  const auto rank = [](const std::string& name, float amax) {
    return nlohmann::json{
        {"name", name},
        {"streams", {"compute", "nccl"}},
        {"events", {"ready", "done"}},
        {"buffers", {{{"name", "x"}, {"size", 2}}, {{"name", "amax"}, {"size", 1}}, {{"name", "history"}, {"size", 2}},
                     {{"name", "scale"}, {"size", 1}, {"init", {1}}}, {{"name", "scale_inv"}, {"size", 1}, {"init", {1}}}}},
        {"threads",
         {{{"name", "main"},
           {"program",
            {{{"kind", "fill"}, {"name", "forward"}, {"stream", "compute"}, {"writes", {{{"buffer", "x"}}}}, {"values", {1, -amax}}},
             {{"kind", "local_amax"}, {"name", "local_amax"}, {"stream", "compute"}, {"reads", {{{"buffer", "x"}}}},
              {"writes", {{{"buffer", "amax"}}}}},
             {{"kind", "event_record"}, {"name", "record_ready"}, {"stream", "compute"}, {"event", "ready"}},
             {{"kind", "stream_wait_event"}, {"name", "nccl_waits_ready"}, {"stream", "nccl"}, {"event", "ready"}},
             {{"kind", "all_reduce"}, {"name", "amax_reduce"}, {"stream", "nccl"}, {"comm", "amax"}, {"reduce", "max"},
              {"reads", {{{"buffer", "amax"}}}}, {"writes", {{{"buffer", "amax"}}}}},
             {{"kind", "event_record"}, {"name", "record_done"}, {"stream", "nccl"}, {"event", "done"}},
             {{"kind", "copy"}, {"name", "copy_back"}, {"stream", "compute"}, {"reads", {{{"buffer", "amax"}}}},
              {"writes", {{{"buffer", "history"}, {"count", 1}}}}},
             {{"kind", "scale_update"}, {"name", "scale_update"}, {"stream", "compute"},
              {"scale", {{"tensors", 1}, {"history_len", 2}, {"algo", "max"}, {"format", "e4m3"}}},
              {"reads", {{{"buffer", "history"}}, {{"buffer", "scale"}}}},
              {"writes", {{{"buffer", "history"}}, {{"buffer", "scale"}}, {{"buffer", "scale_inv"}}}}},
             {{"kind", "work_wait"}, {"name", "wait_amax"}, {"stream", "compute"}, {"event", "done"}},
             {{"kind", "device_synchronize"}, {"name", "device_synchronize"}}}}}}}};
  };
  const auto check = [](const std::string& buffer) {
    return nlohmann::json{{"tensor", buffer},
                          {"replicas", {{{"rank", 0}, {"buffer", buffer}}, {{"rank", 1}, {"buffer", buffer}}}},
                          {"expected", "reference"}};
  };
  const nlohmann::json doc{{"name", "wait after copy, reference checks"},
                           {"comms", {{{"name", "amax"}, {"members", {0, 1}}}}},
                           {"ranks", {rank("rank0", 3), rank("rank1", 7)}},
                           {"checks", {check("history"), check("scale"), check("scale_inv")}}};
  return scenario_from_json(doc, "reference-checks.json");
}

TEST(Shrink, a_shrunk_trace_holds_its_checks_to_the_values_the_original_was_held_to) {
  // "expected": "reference" is worked out from the program when a scenario is read, and a shrunk
  // program can reach other values: with rank 1 dropped, rank 0's own amax (3) is the whole MAX.
  // A shrunk trace that still said "reference" would read back as a run with nothing wrong.
  const Scenario s = wait_after_copy_with_reference_checks();
  ASSERT_TRUE(s.checks.front().expected_reference);
  ASSERT_EQ(s.checks.front().expected, (std::vector<float>{0.0f, 7.0f}));  // the update rolls the newest to the end
  const RunResult original = first_run_with(s, HazardKind::value_mismatch);
  const ShrinkResult shrunk = shrink(s, original.choices, HazardKind::value_mismatch);
  const Trace trace = make_trace(shrunk.scenario, shrunk.run, TraceOrigin{"shrink", 0, 0, {}});
  const Trace back = parse_trace(trace_to_jsonl(trace), "shrunk.jsonl");
  const Scenario read_back = trace_scenario(back, "shrunk.jsonl");
  ASSERT_EQ(read_back.checks.size(), shrunk.lineage.checks.size());
  ASSERT_FALSE(read_back.checks.empty());
  for (std::size_t c = 0; c < read_back.checks.size(); ++c) {
    EXPECT_EQ(read_back.checks[c].expected, s.checks[shrunk.lineage.checks[c]].expected) << read_back.checks[c].tensor;
  }
  const RunResult replayed = replay_trace(read_back, back, "shrunk.jsonl");
  EXPECT_TRUE(same_bug(shrunk.identity, shrunk.scenario, shrunk.lineage, replayed)) << shrunk.identity.show();
}

TEST(Shrink, a_shrink_cut_short_by_its_test_budget_says_so) {
  const Scenario s = testing::wait_after_copy(4);
  const FailingRun failure = first_failure(s, 1);
  ShrinkOptions options;
  options.max_tests = 3;
  const ShrinkResult cut = shrink(s, failure.run.choices, HazardKind::data_race, options);
  EXPECT_TRUE(cut.budget_exhausted) << "3 candidate runs cannot shrink 4 ranks to a minimal run";
  EXPECT_EQ(cut.tests, 3u);
  EXPECT_TRUE(cut.run.has_hazard(HazardKind::data_race)) << "what it kept is still the bug";
}

TEST(Shrink, refuses_a_run_without_the_target_hazard) {
  const Scenario s = testing::wait_after_copy(2, false);
  EXPECT_THROW(shrink(s, {}, HazardKind::data_race), InputError);
}

TEST(ScenarioReduce, dropping_a_rank_renumbers_the_communicators) {
  const Scenario s = testing::wait_after_copy(3);
  const auto smaller = drop_rank(unreduced(s), 1);
  ASSERT_TRUE(smaller.has_value());
  ASSERT_EQ(smaller->scenario.ranks.size(), 2u);
  EXPECT_EQ(smaller->scenario.comms[0].members, (std::vector<RankId>{0, 1}));
  EXPECT_EQ(smaller->scenario.ranks[1].name, "rank2");
  EXPECT_EQ(smaller->lineage.ranks, (std::vector<RankId>{0, 2})) << "rank 1 of the smaller scenario is the original rank 2";
  EXPECT_EQ(smaller->lineage.original(OpRef{1, 0, 0}), (OpRef{2, 0, 0}));
}

TEST(ScenarioReduce, dropping_a_rank_drops_its_partners_sends_and_recvs_and_renumbers_the_other_peers) {
  // p2p_chain: 0 -> 1 -> 2 on one communicator. Without rank 0, rank 1's recv from it goes too
  // (left, it would pair with whichever member took index 0); the pair 1 -> 2 is then members
  // 0 -> 1 of the smaller communicator, still the same two ranks.
  const Scenario s = p2p_chain(false);
  const auto smaller = drop_rank(unreduced(s), 0);
  ASSERT_TRUE(smaller.has_value());
  const Scenario& out = smaller->scenario;
  ASSERT_EQ(out.ranks[0].threads[0].program.size(), 1u) << "recv10 went with rank 0";
  const Op& send12 = out.ranks[0].threads[0].program[0];
  const Op& recv21 = out.ranks[1].threads[0].program[0];
  ASSERT_EQ(send12.name, "send12");
  ASSERT_EQ(recv21.name, "recv21");
  EXPECT_EQ(out.comms[send12.comm].members.at(send12.peer), 1u) << "send12 still sends to the original rank 2";
  EXPECT_EQ(out.comms[recv21.comm].members.at(recv21.peer), 0u) << "recv21 still receives from the original rank 1";
  EXPECT_EQ(smaller->lineage.original(OpRef{0, 0, 0}), (OpRef{1, 0, 1})) << "send12 was the original rank 1's second op";
  // Without rank 2, rank 1's send to it goes; its recv from rank 0 stays.
  const auto without_last = drop_rank(unreduced(s), 2);
  ASSERT_TRUE(without_last.has_value());
  const std::vector<Op>& rank1 = without_last->scenario.ranks[1].threads[0].program;
  ASSERT_EQ(rank1.size(), 1u);
  EXPECT_EQ(rank1[0].name, "recv10");
  EXPECT_EQ(without_last->scenario.comms[rank1[0].comm].members.at(rank1[0].peer), 0u);
}

TEST(ScenarioReduce, dropping_a_rank_renumbers_a_broadcast_s_root_and_keeps_none_without_it) {
  ScenarioBuilder b("broadcast_from_2");
  const RankId r0 = b.rank(), r1 = b.rank(), r2 = b.rank();
  const CommId world = b.comm("world", {r0, r1, r2});
  for (RankId r : {r0, r1, r2}) {
    const StreamId stream = b.stream(r, "s");
    const ThreadId thread = b.thread(r, "main");
    const BufferId x = b.buffer(r, "x", 1, {static_cast<float>(r)});
    Op bcast = ScenarioBuilder::all_reduce(stream, world, {x, 0, 1}, {x, 0, 1}, "bcast");
    bcast.kind = OpKind::broadcast;
    bcast.root = 2;
    b.op(r, thread, bcast);
  }
  const Scenario s = b.build();
  const auto smaller = drop_rank(unreduced(s), 0);
  ASSERT_TRUE(smaller.has_value());
  const Op& bcast = smaller->scenario.ranks[0].threads[0].program[0];
  EXPECT_EQ(smaller->scenario.comms[world].members.at(bcast.root), 1u) << "the root is still the original rank 2";
  EXPECT_FALSE(drop_rank(unreduced(s), 2).has_value()) << "rank 2 is the broadcast's root";
}

TEST(ScenarioReduce, a_second_reduction_maps_ops_and_checks_to_the_original_not_the_first_reduction) {
  Scenario s = testing::wait_after_copy(2);
  for (const char* tensor : {"c0", "c1", "c2"}) s.checks.push_back(ReplicaCheck{tensor, {{0, {1, 0, 1}}}, {}});
  const auto without_first_op_of_rank0 = [](const Scenario& from) {
    std::vector<OpRef> kept = all_ops(from);
    kept.erase(kept.begin());  // rank 0's thread 0's first op
    return kept;
  };
  const Reduced once = keep_ops(unreduced(s), without_first_op_of_rank0(s));
  const Reduced twice = keep_ops(once, without_first_op_of_rank0(once.scenario));
  EXPECT_EQ(twice.lineage.original(OpRef{0, 0, 0}), (OpRef{0, 0, 2})) << "the original's third op, not the first reduction's";
  const Reduced checks_once = keep_checks(unreduced(s), {1, 2});
  const Reduced checks_twice = keep_checks(checks_once, {1});
  EXPECT_EQ(checks_twice.lineage.checks, (std::vector<std::size_t>{2})) << "the original's third check";
}

TEST(ScenarioReduce, origin_groups_are_the_numbered_segments) {
  Scenario s = testing::wait_after_copy(2);
  s.ranks[0].threads[0].program[0].origin = "iter 1 / module 3 / forward amax";
  s.ranks[1].threads[0].program[0].origin = "iter 1 / module 4 / forward amax";
  EXPECT_EQ(origin_groups(s), (std::vector<std::string>{"iter 1", "module 3", "module 4"}));
  EXPECT_EQ(op_count(drop_origin_group(unreduced(s), "iter 1").scenario), op_count(s) - 2);
  const Reduced without = drop_origin_group(unreduced(s), "module 3");
  EXPECT_EQ(op_count(without.scenario), op_count(s) - 1);
  EXPECT_EQ(without.lineage.original(OpRef{0, 0, 0}), (OpRef{0, 0, 1})) << "rank 0's first op now is its original second";
}

}  // namespace
}  // namespace amaxcheck::sched
