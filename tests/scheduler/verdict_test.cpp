// Every exploration ends in an honest verdict: a step cap, the schedule cap, a preemption bound
// that skipped a branch or the time budget makes it inconclusive, for every strategy; only a
// complete exhaustive search proves; a worker's exception reaches the caller under --jobs.
#include "scheduler/verdict.h"

#include <gtest/gtest.h>

#include "scheduler/explore.h"
#include "scheduler/run.h"
#include "scenarios.h"
#include "util/check.h"

namespace amaxcheck::sched {
namespace {

const char* const every_strategy[] = {"random", "pct", "exhaustive", "timed"};

ExploreOptions options_for(const std::string& kind) {
  ExploreOptions options;
  options.strategy = kind;
  options.seed = 7;
  options.runs = 20;
  return options;
}

TEST(Verdict, a_step_cap_below_the_runs_length_is_inconclusive_for_every_strategy) {
  const Scenario s = testing::wait_after_copy(2, false);
  for (const char* kind : every_strategy) {
    ExploreOptions options = options_for(kind);
    options.run.max_steps = 3;
    const ExploreResult r = explore(s, options);
    EXPECT_EQ(r.verdict, VerdictKind::inconclusive) << kind;
    EXPECT_GT(r.cut_short.step_limited_runs, 0u) << kind;
    EXPECT_EQ(r.cut_short.step_cap, 3u) << kind;
    EXPECT_EQ(r.cut_short.causes(), std::vector<std::string>{"step_cap"}) << kind;
  }
}

TEST(Verdict, a_cut_off_timed_run_keeps_no_cost_figures) {
  ExploreOptions options = options_for("timed");
  options.run.max_steps = 3;
  EXPECT_FALSE(explore(testing::wait_after_copy(2, false), options).timing.has_value());
  options.run.max_steps = 0;
  EXPECT_TRUE(explore(testing::wait_after_copy(2, false), options).timing.has_value()) << "a finished run keeps them";
}

TEST(Verdict, the_derived_step_cap_scales_with_the_scenario_and_finished_runs_stay_below_it) {
  for (std::uint32_t ranks : {2u, 16u}) {
    const Scenario s = testing::wait_after_copy(ranks, false);
    EXPECT_GT(step_cap(s), expected_steps(s));
    const ExploreResult r = explore(s, options_for("random"));
    EXPECT_EQ(r.step_cap, step_cap(s));
    EXPECT_EQ(r.verdict, VerdictKind::no_hazard_found) << ranks << " ranks";
    EXPECT_FALSE(r.cut_short.any());
  }
  EXPECT_LT(step_cap(testing::wait_after_copy(2)), step_cap(testing::wait_after_copy(16)));
}

TEST(Verdict, a_complete_exhaustive_search_of_a_clean_scenario_is_a_proof) {
  ExploreOptions options = options_for("exhaustive");
  options.time_budget_s = 600;  // finished in time: stays proven
  const ExploreResult r = explore(testing::wait_after_copy(2, false), options);
  EXPECT_TRUE(r.coverage_complete);
  EXPECT_EQ(r.verdict, VerdictKind::proven_clean);
}

TEST(Verdict, sampled_strategies_never_prove) {
  for (const char* kind : {"random", "pct", "timed"}) {
    EXPECT_EQ(explore(testing::wait_after_copy(2, false), options_for(kind)).verdict, VerdictKind::no_hazard_found)
        << kind;
  }
}

TEST(Verdict, the_schedule_cap_is_inconclusive) {
  ExploreOptions options = options_for("exhaustive");
  options.args.set("max-schedules", 1);
  const ExploreResult r = explore(testing::signalling_threads(2, 2, 2), options);
  EXPECT_TRUE(r.cut_short.schedule_cap);
  EXPECT_EQ(r.cut_short.schedule_cap_value, 1u);
  EXPECT_EQ(r.verdict, VerdictKind::inconclusive);
}

TEST(Verdict, a_preemption_bound_that_skipped_a_branch_is_inconclusive) {
  ExploreOptions options = options_for("exhaustive");
  options.args.set("preemption-bound", 0);
  const ExploreResult r = explore(testing::signalling_threads(2, 2, 2), options);
  ASSERT_GT(r.cut_short.bound_skipped, 0u) << "two threads signalling one flag need a preemption to interleave";
  EXPECT_EQ(r.cut_short.preemption_bound, 0u);
  EXPECT_EQ(r.verdict, VerdictKind::inconclusive);
  // A bound the search never needed leaves the proof standing.
  options.args.set("preemption-bound", 100);
  EXPECT_EQ(explore(testing::signalling_threads(2, 2, 2), options).verdict, VerdictKind::proven_clean);
}

TEST(Verdict, an_exhausted_time_budget_is_inconclusive_for_every_strategy) {
  // Big enough that one run passes the in-run clock check (every 4096 steps).
  const Scenario s = testing::independent_syncs(64, 80);
  ASSERT_GT(expected_steps(s), 4096u);
  for (const char* kind : every_strategy) {
    ExploreOptions options = options_for(kind);
    options.time_budget_s = 0;  // already out of time
    const ExploreResult r = explore(s, options);
    EXPECT_TRUE(r.cut_short.time_budget) << kind;
    EXPECT_EQ(r.verdict, VerdictKind::inconclusive) << kind;
    EXPECT_EQ(r.runs, 0u) << kind << ": a run the budget cut is dropped";
    EXPECT_FALSE(r.timing.has_value()) << kind;
  }
}

TEST(Verdict, an_exhaustive_search_that_stops_at_its_first_hazard_reports_the_hazard) {
  const ExploreResult r = explore(testing::wait_after_copy(2), options_for("exhaustive"));
  EXPECT_FALSE(r.coverage_complete);
  EXPECT_EQ(r.verdict, VerdictKind::hazard);
}

TEST(Verdict, a_hazard_wins_over_whatever_cut_the_exploration_short) {
  CutShort cut;
  cut.step_limited_runs = 1;
  cut.time_budget = true;
  for (Coverage coverage : {Coverage::sampled, Coverage::exhaustive, Coverage::timed}) {
    EXPECT_EQ(decide_verdict(coverage, 1, cut, false), VerdictKind::hazard);
    EXPECT_EQ(decide_verdict(coverage, 0, cut, true), VerdictKind::inconclusive);
  }
  EXPECT_EQ(decide_verdict(Coverage::exhaustive, 0, CutShort{}, false), VerdictKind::inconclusive)
      << "an incomplete search proves nothing even when no cause was recorded";
}

TEST(Verdict, the_verdict_words_are_the_json_contract) {
  EXPECT_STREQ(to_string(VerdictKind::hazard), "hazard");
  EXPECT_STREQ(to_string(VerdictKind::proven_clean), "proven_clean");
  EXPECT_STREQ(to_string(VerdictKind::no_hazard_found), "no_hazard_found");
  EXPECT_STREQ(to_string(VerdictKind::inconclusive), "inconclusive");
}

/// A scenario built without validation whose fill has no values for its range: executing it
/// breaks an engine invariant (an InternalError), in every run.
Scenario broken_fill() {
  Scenario s = testing::wait_after_copy(2, false);
  for (auto& rank : s.ranks) {
    for (auto& thread : rank.threads) {
      for (Op& op : thread.program) {
        if (op.kind == OpKind::fill) op.values.clear();
      }
    }
  }
  return s;
}

std::string internal_error_of(const Scenario& s, const ExploreOptions& options) {
  try {
    explore(s, options);
  } catch (const InternalError& e) {
    return e.what();
  }
  return "(no InternalError)";
}

TEST(Jobs, an_invariant_failure_in_a_worker_reaches_the_caller_as_with_one_job) {
  const Scenario s = broken_fill();
  for (const char* kind : {"random", "pct"}) {
    ExploreOptions options = options_for(kind);
    options.runs = 300;  // more than one block of runs
    const std::string one_job = internal_error_of(s, options);
    EXPECT_NE(one_job.find("fill values do not match its range"), std::string::npos) << one_job;
    options.jobs = 2;
    EXPECT_EQ(internal_error_of(s, options), one_job) << kind;
    options.jobs = 4;
    EXPECT_EQ(internal_error_of(s, options), one_job) << kind;
  }
}

}  // namespace
}  // namespace amaxcheck::sched
