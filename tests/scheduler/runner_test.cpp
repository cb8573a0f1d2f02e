// A Runner resets one engine and its detectors between runs: every run it makes is the run a
// new engine with new detectors makes, whatever the runs before it did (hazards found, stuck,
// cut short by the step cap).
#include <gtest/gtest.h>

#include "scheduler/pct_strategy.h"
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

}  // namespace
}  // namespace amaxcheck::sched
