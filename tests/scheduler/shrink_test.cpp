// Shrinking keeps the hazard kind and makes the run smaller.
#include "scheduler/shrink.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "scheduler/explore.h"
#include "scheduler/reproduce.h"
#include "scheduler/scenario_reduce.h"
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

TEST(Shrink, refuses_a_run_without_the_target_hazard) {
  const Scenario s = testing::wait_after_copy(2, false);
  EXPECT_THROW(shrink(s, {}, HazardKind::data_race), InputError);
}

TEST(ScenarioReduce, dropping_a_rank_renumbers_the_communicators) {
  const Scenario s = testing::wait_after_copy(3);
  const auto smaller = drop_rank(s, 1);
  ASSERT_TRUE(smaller.has_value());
  ASSERT_EQ(smaller->ranks.size(), 2u);
  EXPECT_EQ(smaller->comms[0].members, (std::vector<RankId>{0, 1}));
  EXPECT_EQ(smaller->ranks[1].name, "rank2");
}

TEST(ScenarioReduce, origin_groups_are_the_numbered_segments) {
  Scenario s = testing::wait_after_copy(2);
  s.ranks[0].threads[0].program[0].origin = "iter 1 / module 3 / forward amax";
  s.ranks[1].threads[0].program[0].origin = "iter 1 / module 4 / forward amax";
  EXPECT_EQ(origin_groups(s), (std::vector<std::string>{"iter 1", "module 3", "module 4"}));
  EXPECT_EQ(op_count(drop_origin_group(s, "iter 1")), op_count(s) - 2);
  EXPECT_EQ(op_count(drop_origin_group(s, "module 3")), op_count(s) - 1);
}

}  // namespace
}  // namespace amaxcheck::sched
