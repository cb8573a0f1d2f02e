// Random and PCT find the seed hazards planted in tiny scenarios, and every run is a pure
// function of (scenario, strategy, seed).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "engine/engine.h"
#include "protocols/protocol.h"
#include "scheduler/explore.h"
#include "scheduler/pct_strategy.h"
#include "scheduler/prng.h"
#include "scheduler/random_strategy.h"
#include "scheduler/run.h"
#include "scenarios.h"

namespace amaxcheck::sched {
namespace {

ExploreOptions sampled(const std::string& kind, std::uint64_t seed, std::uint64_t runs) {
  ExploreOptions options;
  options.strategy = kind;
  options.seed = seed;
  options.runs = runs;
  return options;
}

TEST(Random, the_same_seed_makes_the_same_choices) {
  const Scenario s = testing::wait_after_copy(3);
  RandomStrategy a(11), b(11), c(12);
  const RunResult ra = run_once(s, a), rb = run_once(s, b), rc = run_once(s, c);
  EXPECT_EQ(ra.choices, rb.choices);
  EXPECT_NE(ra.choices, rc.choices) << "another seed takes another path";
  EXPECT_EQ(ra.outcome, RunOutcome::finished);
  EXPECT_EQ(ra.step_count, expected_steps(s));
}

TEST(Pct, the_same_seed_makes_the_same_choices_and_change_points) {
  const Scenario s = testing::wait_after_copy(3);
  PctStrategy a(PctOptions{5, 3, expected_steps(s)}), b(PctOptions{5, 3, expected_steps(s)});
  EXPECT_EQ(run_once(s, a).choices, run_once(s, b).choices);
  EXPECT_EQ(a.change_points(), b.change_points());
  EXPECT_EQ(a.change_points().size(), 2u) << "depth 3 has two change points";
  for (std::uint64_t k : a.change_points()) EXPECT_LT(k, expected_steps(s));
}

TEST(Pct, picks_the_option_whose_actor_drew_the_highest_priority_as_a_plain_scan_would) {
  // A reference PCT at depth 1 (no change points): priorities drawn in first-seen order from the
  // same PRNG, looked up by scanning every actor seen. 300 actors make the strategy's table grow
  // several times; the second pass of seeds reuses one strategy, so its reset is covered too.
  constexpr std::uint32_t actors = 300;
  std::vector<std::vector<Action>> lists;
  Prng shape(99);
  for (int step = 0; step < 200; ++step) {
    std::vector<Action> options;
    const auto n = 1 + shape.below(12);
    for (std::uint64_t i = 0; i < n; ++i) {
      const auto a = static_cast<std::uint32_t>(shape.below(actors));
      options.push_back(Action{a % 3 == 0 ? ActionKind::complete : a % 3 == 1 ? ActionKind::issue : ActionKind::execute, a / 3, a % 7});
    }
    lists.push_back(std::move(options));
  }
  PctStrategy reused(PctOptions{1, 1, 1}, SampledRuns{1, 4});
  for (std::uint64_t run = 0; run < 4; ++run) {
    ASSERT_TRUE(reused.begin_run(run));
    PctStrategy fresh(PctOptions{reused.seed(), 1, 1});
    Prng reference(reused.seed());
    std::vector<std::pair<std::uint64_t, std::uint64_t>> seen;
    for (const auto& options : lists) {
      std::size_t best = 0;
      std::uint64_t best_priority = 0;
      for (std::size_t i = 0; i < options.size(); ++i) {
        const std::uint64_t key = actor_key(options[i]);
        auto it = std::find_if(seen.begin(), seen.end(), [&](const auto& e) { return e.first == key; });
        if (it == seen.end()) {
          seen.emplace_back(key, 1 + reference.below(std::uint64_t{1} << 62));
          it = seen.end() - 1;
        }
        if (i == 0 || it->second > best_priority) {
          best = i;
          best_priority = it->second;
        }
      }
      ASSERT_EQ(fresh.pick(ChoiceKind::next_action, options), best);
      ASSERT_EQ(reused.pick(ChoiceKind::next_action, options), best);
    }
  }
}

TEST(Pct, an_attached_strategy_picks_what_an_unattached_one_picks) {
  // Attached (as every run attaches it), PCT keeps priorities in a table by actor index;
  // unattached, in the hash table by actor key that the test above checks. Both draw in the same
  // order, so over whole runs, change points included, they pick alike.
  std::size_t changes = 0;
  for (const Scenario& s : {testing::te_async_point(CommChoice::shared, WaitPoint::before_copy, 3),
                            testing::signalling_threads(3, 2, 2), testing::racy_collective(3)}) {
    for (std::uint64_t seed = 0; seed < 10; ++seed) {
      const PctOptions options{seed, 4, expected_steps(s)};
      PctStrategy attached(options), unattached(options);
      Engine engine(s);
      attached.attach(engine);
      std::size_t steps = 0;
      for (; !engine.enabled().empty(); ++steps) {
        const std::vector<Action> enabled = engine.enabled();
        const std::size_t pick = attached.pick(ChoiceKind::next_action, enabled);
        ASSERT_EQ(pick, unattached.pick(ChoiceKind::next_action, enabled)) << "seed " << seed << " step " << steps;
        engine.apply_enabled(pick);
      }
      for (std::uint64_t point : attached.change_points()) changes += point < steps ? 1 : 0;
    }
  }
  EXPECT_GT(changes, 0u) << "no run reached a change point";
}

/// How many different schedules PCT at `depth` makes of `s` with seeds 0 to 49.
std::size_t distinct_pct_schedules(const Scenario& s, std::uint32_t depth) {
  std::set<std::vector<Choice>> schedules;
  for (std::uint64_t seed = 0; seed < 50; ++seed) {
    PctStrategy pct(PctOptions{seed, depth, expected_steps(s)});
    schedules.insert(run_once(s, pct).choices);
  }
  return schedules.size();
}

TEST(Pct, depth_one_runs_actors_by_fixed_priority) {
  // With no change points the highest-priority actor runs whenever it is enabled: the choice
  // sequence is the same for two seeds that rank the actors the same way, and there are only
  // as many distinct schedules as orders of the actors.
  EXPECT_EQ(distinct_pct_schedules(testing::independent_syncs(2, 3), 1), 2u) << "two threads: two priority orders";
}

TEST(Pct, a_change_point_lowers_the_running_actor_so_another_runs_before_it_finishes) {
  // Depth 1 runs the two threads of this litmus in one of two orders, each thread to its end
  // (the test above). At depth 2 a change point drops the running thread below the other, so
  // the other runs from there: runs whose change point falls inside the first thread's steps
  // interleave them, and make schedules depth 1 never does.
  EXPECT_GT(distinct_pct_schedules(testing::independent_syncs(2, 3), 2), 2u) << "no change point moved a thread";
}

TEST(Random, finds_the_planted_wait_after_copy_race) {
  const ExploreResult r = explore(testing::wait_after_copy(2), sampled("random", 1, 200));
  ASSERT_TRUE(r.first_failure.has_value());
  EXPECT_TRUE(r.first_failure->run.has_hazard(HazardKind::data_race));
  EXPECT_EQ(r.runs, r.first_failure->index + 1) << "stops at the first failing run";
}

TEST(Pct, finds_the_planted_wait_after_copy_race) {
  const ExploreResult r = explore(testing::wait_after_copy(2), sampled("pct", 1, 200));
  ASSERT_TRUE(r.first_failure.has_value());
  EXPECT_TRUE(r.first_failure->run.has_hazard(HazardKind::data_race));
}

TEST(Random, is_silent_when_the_wait_comes_before_the_copy) {
  const ExploreResult r = explore(testing::wait_after_copy(2, false), sampled("random", 1, 200));
  EXPECT_FALSE(r.first_failure.has_value());
  EXPECT_EQ(r.runs, 200u);
  EXPECT_TRUE(r.hazards.empty());
}

TEST(Random, finds_the_planted_collective_order_swap) {
  const ExploreResult r = explore(testing::collective_order_swap(), sampled("random", 2, 200));
  ASSERT_TRUE(r.first_failure.has_value());
  EXPECT_TRUE(r.first_failure->run.has_hazard(HazardKind::collective_mismatch));
}

TEST(Pct, finds_the_planted_collective_order_swap) {
  const ExploreResult r = explore(testing::collective_order_swap(), sampled("pct", 2, 200));
  ASSERT_TRUE(r.first_failure.has_value());
  EXPECT_TRUE(r.first_failure->run.has_hazard(HazardKind::collective_mismatch));
}

TEST(Random, finds_a_schedule_dependent_order_swap_between_two_threads) {
  // Whether the amax and gradient all-reduces meet in the same order on both ranks depends on
  // the schedule; some schedules mismatch.
  ExploreOptions options = sampled("random", 3, 500);
  const ExploreResult r = explore(testing::shared_comm_two_threads(2), options);
  ASSERT_TRUE(r.first_failure.has_value());
  bool mismatch = false;
  for (const FoundHazard& h : r.hazards) mismatch = mismatch || h.hazard.kind == HazardKind::collective_mismatch ||
                                                    h.hazard.kind == HazardKind::ordering_hazard;
  EXPECT_TRUE(mismatch);
}

TEST(Pct, finds_a_schedule_dependent_order_swap_between_two_threads) {
  const ExploreResult r = explore(testing::shared_comm_two_threads(2), sampled("pct", 3, 500));
  ASSERT_TRUE(r.first_failure.has_value());
}

TEST(Exhaustive, finds_the_planted_wait_after_copy_race) {
  ExploreOptions options;
  options.strategy = "exhaustive";
  const ExploreResult r = explore(testing::wait_after_copy(2), options);
  ASSERT_TRUE(r.first_failure.has_value());
  EXPECT_TRUE(r.first_failure->run.has_hazard(HazardKind::data_race));
  EXPECT_FALSE(r.coverage_complete) << "it stopped at the first hazard";
}

TEST(Exhaustive, proves_the_fixed_design_clean_with_complete_coverage) {
  ExploreOptions options;
  options.strategy = "exhaustive";
  const ExploreResult r = explore(testing::wait_after_copy(2, false), options);
  EXPECT_FALSE(r.first_failure.has_value());
  EXPECT_TRUE(r.coverage_complete);
  ASSERT_TRUE(r.exhaustive.has_value());
  EXPECT_EQ(r.runs, r.exhaustive->explored);
}

/// Two explorations made the same runs and found the same hazards, each first in the same run
/// and seen in as many.
void expect_same_runs_and_hazards(const ExploreResult& a, const ExploreResult& b) {
  EXPECT_EQ(a.runs, b.runs);
  EXPECT_EQ(a.steps, b.steps);
  ASSERT_EQ(a.hazards.size(), b.hazards.size());
  for (std::size_t i = 0; i < a.hazards.size(); ++i) {
    EXPECT_EQ(a.hazards[i].hazard.key(), b.hazards[i].hazard.key());
    EXPECT_EQ(a.hazards[i].first_run, b.hazards[i].first_run);
    EXPECT_EQ(a.hazards[i].runs_seen, b.hazards[i].runs_seen);
  }
}

TEST(Explore, results_do_not_depend_on_the_number_of_jobs) {
  const Scenario s = testing::shared_comm_two_threads(3);
  for (bool stop : {true, false}) {
    ExploreOptions one = sampled("random", 9, 2000);  // four jobs: blocks of 256, 512 and 1024 runs, and a cut one
    one.stop_at_first = stop;
    ExploreOptions four = one;
    four.jobs = 4;
    const ExploreResult a = explore(s, one), b = explore(s, four);
    expect_same_runs_and_hazards(a, b);
    ASSERT_EQ(a.first_failure.has_value(), b.first_failure.has_value());
    if (a.first_failure) {
      EXPECT_EQ(a.first_failure->index, b.first_failure->index);
      EXPECT_EQ(a.first_failure->run.choices, b.first_failure->run.choices);
    }
  }
}


// The merge of an exploration's runs: what it counts, and that --jobs never splits a search.

TEST(Explore, a_hazard_counts_every_run_that_showed_it) {
  const Scenario s = testing::shared_comm_two_threads(3);
  ExploreOptions options = sampled("random", 5, 200);
  options.stop_at_first = false;
  options.jobs = 2;
  const ExploreResult r = explore(s, options);
  // The same runs again, one at a time, outside the exploration and its merge.
  std::map<std::string, std::uint64_t> runs_showing;
  const std::unique_ptr<Strategy> strategy = make_strategy(s, options);
  for (std::uint64_t i = 0; i < options.runs; ++i) {
    ASSERT_TRUE(strategy->begin_run(i));
    const RunResult run = run_once(s, *strategy);
    std::set<std::string> keys;
    for (const Hazard& h : run.hazards) keys.insert(h.key());
    for (const std::string& key : keys) ++runs_showing[key];
    strategy->end_run(run);
  }
  ASSERT_EQ(r.hazards.size(), runs_showing.size());
  std::uint64_t most = 0;
  for (const FoundHazard& found : r.hazards) {
    EXPECT_EQ(found.runs_seen, runs_showing[found.hazard.key()]) << found.hazard.key();
    most = std::max(most, found.runs_seen);
  }
  EXPECT_GT(most, 1u) << "a hazard seen in one run only tells no count from a flag";
}

/// te-sync on a shared communicator with the backward amax reduction launched at a
/// rank-dependent point (seed hazard 2), 2 ranks of 1 module: the search explores one schedule
/// (a deadlock) and abandons 54 branches whose every continuation it had covered already.
Scenario abandons_branches() {
  ProtocolKnobs knobs;
  knobs.protocol = ProtocolName::te_sync;
  knobs.comm = CommChoice::shared;
  knobs.amax_order = AmaxOrder::rank_dependent;
  knobs.modules = 1;
  knobs.iters = 1;
  knobs.microbatches = 1;
  return build_protocol(knobs);
}

TEST(Explore, a_search_counts_the_schedules_it_explored_not_the_branches_it_abandoned) {
  ExploreOptions options;
  options.strategy = "exhaustive";
  options.stop_at_first = false;
  const ExploreResult r = explore(abandons_branches(), options);
  ASSERT_TRUE(r.exhaustive.has_value());
  ASSERT_GT(r.exhaustive->sleep_blocked, 0u) << "without an abandoned branch this test tells nothing";
  EXPECT_TRUE(r.coverage_complete);
  EXPECT_EQ(r.runs, r.exhaustive->explored);  // what the verdict's headline and its proof line say
  EXPECT_EQ(r.pruned, r.exhaustive->sleep_blocked);
  ASSERT_FALSE(r.hazards.empty());
  for (const FoundHazard& found : r.hazards) EXPECT_LE(found.runs_seen, r.runs) << found.hazard.key();
}

TEST(Explore, a_search_runs_on_one_worker_whatever_jobs_asks) {
  // Each run of a search continues from the one before it: --jobs cannot split it. 81 runs of
  // a few hundred steps each: long enough that, were the search split, every worker would take
  // some of them.
  const Scenario s = testing::te_async_point(CommChoice::shared, WaitPoint::after_copy, 2);
  ExploreOptions one;
  one.strategy = "exhaustive";
  one.stop_at_first = false;
  ExploreOptions four = one;
  four.jobs = 4;
  const ExploreResult a = explore(s, one), b = explore(s, four);
  ASSERT_TRUE(a.exhaustive.has_value() && b.exhaustive.has_value());
  EXPECT_EQ(a.runs, 81u);
  expect_same_runs_and_hazards(a, b);
  EXPECT_EQ(a.exhaustive->explored, b.exhaustive->explored);
  EXPECT_EQ(a.coverage_complete, b.coverage_complete);
}

}  // namespace
}  // namespace amaxcheck::sched
