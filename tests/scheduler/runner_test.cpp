// A Runner resets one engine and its detectors between runs: every run it makes is the run a
// new engine with new detectors makes, whatever the runs before it did (hazards found, stuck,
// cut short by the step cap).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>

#include "model/builder.h"
#include "scheduler/explore.h"
#include "scheduler/pct_strategy.h"
#include "scheduler/replay_strategy.h"
#include "scheduler/random_strategy.h"
#include "scheduler/run.h"
#include "scenarios.h"

namespace amaxcheck::sched {
namespace {

std::vector<std::string> keys(const RunResult& run) {
  std::vector<std::string> out;
  for (const Hazard& h : run.hazards) out.push_back(h.key() + " | " + h.summary);
  return out;
}

void expect_same_run(const RunResult& fresh, const RunResult& reused, const std::string& what) {
  EXPECT_EQ(fresh.outcome, reused.outcome) << what;
  EXPECT_EQ(fresh.step_count, reused.step_count) << what;
  EXPECT_EQ(fresh.choices, reused.choices) << what;
  EXPECT_EQ(keys(fresh), keys(reused)) << what;
  ASSERT_EQ(fresh.steps.size(), reused.steps.size()) << what;
  for (std::size_t i = 0; i < fresh.steps.size(); ++i) {
    EXPECT_EQ(fresh.steps[i].op_name, reused.steps[i].op_name) << what << " step " << i;
    ASSERT_EQ(fresh.steps[i].written.size(), reused.steps[i].written.size()) << what << " step " << i;
    for (std::size_t w = 0; w < fresh.steps[i].written.size(); ++w) {
      EXPECT_EQ(fresh.steps[i].written[w].values, reused.steps[i].written[w].values) << what << " step " << i;
    }
  }
}

TEST(Runner, every_run_on_a_reset_engine_is_the_run_of_a_new_engine) {
  for (const Scenario& s : {testing::wait_after_copy(3), testing::collective_order_swap(),
                            testing::shared_comm_two_threads(2), testing::racy_collective(3)}) {
    RunOptions options;
    Runner runner(s, options);
    for (std::uint64_t seed = 0; seed < 12; ++seed) {
      RandomStrategy a(seed), b(seed);
      expect_same_run(run_once(s, a, options), runner.run(b), "random seed " + std::to_string(seed));
      PctStrategy c(PctOptions{seed, 2, expected_steps(s)}), d(PctOptions{seed, 2, expected_steps(s)});
      expect_same_run(run_once(s, c, options), runner.run(d), "pct seed " + std::to_string(seed));
    }
  }
}

TEST(Runner, a_run_cut_short_by_the_step_cap_leaves_nothing_behind) {
  const Scenario s = testing::wait_after_copy(3);
  RunOptions capped;
  capped.max_steps = 9;  // mid-run: ops queued, a rendezvous half joined
  Runner runner(s, capped);
  for (std::uint64_t seed = 0; seed < 8; ++seed) {
    RandomStrategy a(seed), b(seed);
    const RunResult fresh = run_once(s, a, capped);
    EXPECT_EQ(fresh.outcome, RunOutcome::step_limit);
    expect_same_run(fresh, runner.run(b), "capped seed " + std::to_string(seed));
  }
}

/// One thread filling one buffer `fills` times: 2 * fills steps, longer than step_cap_slack.
Scenario long_run(int fills) {
  ScenarioBuilder b("long_run");
  const RankId r = b.rank();
  const ThreadId t = b.thread(r, "main");
  const StreamId s = b.stream(r, "compute");
  const BufferId x = b.buffer(r, "x", 1);
  for (int i = 0; i < fills; ++i) b.op(r, t, ScenarioBuilder::fill(s, {x, 0, 1}, {1.0f}));
  return b.build();
}

// The loop looks at its cap and its deadline only at the steps where either can end the run
// (Runner::run's next_check): these pin those steps.
TEST(Runner, a_run_ends_at_its_cap_or_at_the_first_clock_step_past_its_deadline) {
  const Scenario s = long_run(5000);
  const auto past = std::chrono::steady_clock::now() - std::chrono::seconds(1);
  const auto future = std::chrono::steady_clock::now() + std::chrono::hours(1);
  struct Case {
    std::size_t max_steps;
    std::optional<std::chrono::steady_clock::time_point> deadline;
    RunOutcome outcome;
    std::size_t steps;
  };
  for (const Case& c : {Case{0, std::nullopt, RunOutcome::finished, 10000},  // the derived cap, past the slack
                        Case{0, future, RunOutcome::finished, 10000},        // clock read at 4095 and 8191
                        Case{0, past, RunOutcome::time_limit, 4095},
                        Case{5000, past, RunOutcome::time_limit, 4095},
                        Case{3000, past, RunOutcome::step_limit, 3000},
                        Case{4095, past, RunOutcome::step_limit, 4095},
                        Case{9000, future, RunOutcome::step_limit, 9000}}) {
    // Recording no choices, the engine loops over the steps up to each check (Engine::run_steps).
    for (const bool record_choices : {true, false}) {
      RunOptions options;
      options.record_steps = false;
      options.record_choices = record_choices;
      options.max_steps = c.max_steps;
      options.deadline = c.deadline;
      Runner runner(s, options);
      for (int run = 0; run < 2; ++run) {
        RandomStrategy random(static_cast<std::uint64_t>(run));
        const RunResult result = runner.run(random);
        const std::string what = fmt::format("cap {}, run {}, choices {}", c.max_steps, run, record_choices);
        EXPECT_EQ(result.outcome, c.outcome) << what;
        EXPECT_EQ(result.step_count, c.steps) << what;
      }
    }
  }
}

/// Random picks until `picks` were made, then Strategy::stop.
class StopsAfter final : public Strategy {
 public:
  StopsAfter(std::uint64_t seed, std::size_t picks) : random_(seed), picks_(picks) {}
  std::string name() const override { return "stops_after"; }
  std::size_t pick(ChoiceKind kind, std::span<const Action> options) override {
    if (picks_ == 0) return stop;
    --picks_;
    return random_.pick(kind, options);
  }
  StepDetail step_needs() const override { return random_.step_needs(); }

 private:
  RandomStrategy random_;
  std::size_t picks_;
};

TEST(Runner, a_run_its_strategy_stops_ends_there_whether_or_not_it_records_choices) {
  const Scenario s = testing::wait_after_copy(3);
  for (const bool record_choices : {true, false}) {
    RunOptions options;
    options.record_steps = false;
    options.record_choices = record_choices;
    Runner runner(s, options);
    for (const std::size_t picks : {std::size_t{0}, std::size_t{1}, std::size_t{7}}) {
      StopsAfter strategy(picks, picks);
      const RunResult result = runner.run(strategy);
      EXPECT_EQ(result.outcome, RunOutcome::stopped) << picks << " picks, choices " << record_choices;
      EXPECT_EQ(result.step_count, picks) << picks << " picks, choices " << record_choices;
      EXPECT_EQ(result.choices.size(), record_choices ? picks : 0) << picks << " picks";
    }
  }
}

TEST(Runner, a_run_that_records_no_choices_makes_the_same_run) {
  const Scenario s = testing::wait_after_copy(3);
  RunOptions keep, drop;
  keep.record_steps = drop.record_steps = false;
  drop.record_choices = false;
  Runner keeping(s, keep), dropping(s, drop);
  for (std::uint64_t seed = 0; seed < 8; ++seed) {
    RandomStrategy a(seed), b(seed);
    const RunResult kept = keeping.run(a), dropped = dropping.run(b);
    EXPECT_EQ(kept.choices.size(), kept.step_count);
    EXPECT_TRUE(dropped.choices.empty());
    EXPECT_EQ(kept.outcome, dropped.outcome);
    EXPECT_EQ(kept.step_count, dropped.step_count);
    EXPECT_EQ(keys(kept), keys(dropped));
  }
}

// Random and PCT runs keep no choices in an exploration (Strategy::runs_again_alike): the failing
// run it reports is made again, with its steps and choices, and must be the run that failed.
// Its choices, replayed, give its steps and hazards.
TEST(Explore, the_failing_run_made_again_is_the_run_that_failed) {
  const Scenario s = testing::wait_after_copy(3);
  EXPECT_TRUE(RandomStrategy(SampledRuns{1, 100}).runs_again_alike());
  EXPECT_FALSE(RandomStrategy(1).runs_again_alike()) << "without sampled runs, run 0 cannot be started again";
  for (const char* strategy : {"random", "pct"}) {
    for (std::uint64_t seed = 1; seed <= 4; ++seed) {
      ExploreOptions options;
      options.strategy = strategy;
      options.seed = seed;
      options.runs = 200;
      const ExploreResult result = explore(s, options);
      ASSERT_TRUE(result.first_failure.has_value()) << strategy << " seed " << seed;
      const RunResult& failing = result.first_failure->run;
      ASSERT_EQ(failing.choices.size(), failing.step_count) << strategy;
      ASSERT_EQ(failing.steps.size(), failing.step_count) << strategy;
      ASSERT_FALSE(failing.hazards.empty()) << strategy;
      ReplayStrategy replay(failing.choices);
      const RunResult replayed = run_once(s, replay);
      EXPECT_EQ(keys(replayed), keys(failing)) << strategy << " seed " << seed;
      ASSERT_EQ(replayed.steps.size(), failing.steps.size());
      for (std::size_t i = 0; i < failing.steps.size(); ++i) EXPECT_EQ(replayed.steps[i].op_name, failing.steps[i].op_name);
    }
  }
}

}  // namespace
}  // namespace amaxcheck::sched
