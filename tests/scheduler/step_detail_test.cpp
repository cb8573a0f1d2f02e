// A run that keeps no steps builds only the parts of a Step its strategy reads
// (Strategy::step_needs); it must still make the same choices and report the same hazards.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "util/check.h"
#include "scenarios.h"
#include "scheduler/exhaustive_strategy.h"
#include "scheduler/pct_strategy.h"
#include "scheduler/prng.h"
#include "scheduler/random_strategy.h"
#include "scheduler/replay_strategy.h"
#include "scheduler/run.h"

namespace amaxcheck::sched {
namespace {

RunOptions keeping_steps(bool keep) {
  RunOptions options;
  options.record_steps = keep;
  return options;
}

/// Everything a run reports except its steps, as text (hazard summaries, participants, details).
std::string verdict(const RunResult& run) {
  std::string out = std::string(to_string(run.outcome)) + " " + std::to_string(run.step_count) + "\n";
  for (const Hazard& h : run.hazards) {
    out += h.key() + " | " + h.summary + "\n";
    for (const Participant& p : h.participants) out += "  " + p.lane + " " + p.op_name + " " + std::to_string(p.step) + "\n";
    for (const std::string& d : h.details) out += "  " + d + "\n";
  }
  for (const Stuck& s : run.stuck) out += "stuck " + s.lane + " " + s.op_name + " " + s.waiting_for + "\n";
  return out;
}

TEST(StepDetail, an_engine_asked_for_nothing_still_names_the_action_and_op) {
  const Scenario s = testing::wait_after_copy(2);
  Engine full(s);
  Engine thin(s, EngineOptions{Mutant::none, 16, StepDetail{false, false, false}});
  const std::vector<Step> a = run_first_enabled(full), b = run_first_enabled(thin);
  ASSERT_EQ(a.size(), b.size());
  bool any_written = false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].action, b[i].action);
    EXPECT_TRUE(a[i].op == b[i].op);
    EXPECT_EQ(a[i].collective, b[i].collective);
    EXPECT_EQ(a[i].seq, b[i].seq);
    EXPECT_FALSE(a[i].lane.empty() || a[i].touches.empty());
    EXPECT_TRUE(b[i].op_name.empty() && b[i].lane.empty() && b[i].written.empty() && b[i].touches.empty());
    any_written |= !a[i].written.empty();
  }
  EXPECT_TRUE(any_written) << "the full engine records written values in this scenario";
}

TEST(StepDetail, random_and_pct_runs_are_the_same_whether_or_not_steps_are_kept) {
  for (const Scenario& s : {testing::wait_after_copy(3), testing::shared_comm_two_threads(2), testing::racy_collective(3)}) {
    for (std::uint64_t seed = 0; seed < 20; ++seed) {
      RandomStrategy ra(seed), rb(seed);
      const RunResult kept = run_once(s, ra, keeping_steps(true)), thin = run_once(s, rb, keeping_steps(false));
      EXPECT_EQ(kept.choices, thin.choices);
      EXPECT_EQ(verdict(kept), verdict(thin));
      EXPECT_TRUE(thin.steps.empty());
      PctStrategy pa(PctOptions{seed, 3, expected_steps(s)}), pb(PctOptions{seed, 3, expected_steps(s)});
      const RunResult pkept = run_once(s, pa, keeping_steps(true)), pthin = run_once(s, pb, keeping_steps(false));
      EXPECT_EQ(pkept.choices, pthin.choices);
      EXPECT_EQ(verdict(pkept), verdict(pthin));
    }
  }
}

TEST(StepDetail, exhaustive_search_explores_the_same_schedules_with_touches_only) {
  for (const Scenario& s : {testing::wait_after_copy(2), testing::independent_syncs(2, 2), testing::racy_collective(2)}) {
    const ExhaustiveOptions capped{true, std::nullopt, 400};
    ExhaustiveSearch a(capped), b(capped);
    std::vector<std::string> kept, thin;
    for (std::uint64_t i = 0; a.begin_run(i); ++i) {
      const RunResult run = run_once(s, a, keeping_steps(true));
      a.end_run(run);
      kept.push_back(verdict(run) + std::to_string(run.choices.size()));
    }
    for (std::uint64_t i = 0; b.begin_run(i); ++i) {
      const RunResult run = run_once(s, b, keeping_steps(false));
      b.end_run(run);
      thin.push_back(verdict(run) + std::to_string(run.choices.size()));
    }
    EXPECT_EQ(kept, thin);
    EXPECT_EQ(a.stats().explored, b.stats().explored);
    EXPECT_EQ(a.stats().sleep_blocked, b.stats().sleep_blocked);
  }
}

TEST(StepDetail, strict_replay_still_checks_names_and_values_without_kept_steps) {
  const Scenario s = testing::wait_after_copy(2);
  RandomStrategy random(3);
  const RunResult recorded = run_once(s, random, keeping_steps(true));
  std::vector<ExpectedStep> expected;
  for (const Step& st : recorded.steps) {
    expected.push_back(ExpectedStep{st.action, st.op, st.op_name, st.collective, st.comm, st.seq, written_text(st.written)});
  }
  ReplayStrategy same(recorded.choices, ReplayStrategy::Mode::strict, expected);
  EXPECT_TRUE(same.step_needs().names && same.step_needs().written);
  EXPECT_NO_THROW(run_once(s, same, keeping_steps(false)));

  std::vector<ExpectedStep> renamed = expected;
  renamed.back().op_name = "something_else";
  ReplayStrategy by_name(recorded.choices, ReplayStrategy::Mode::strict, renamed);
  EXPECT_THROW(run_once(s, by_name, keeping_steps(false)), InputError);

  std::vector<ExpectedStep> revalued = expected;
  auto writes = std::find_if(revalued.begin(), revalued.end(), [](const ExpectedStep& e) { return *e.written != written_text({}); });
  ASSERT_NE(writes, revalued.end());
  writes->written = written_text({});
  ReplayStrategy by_value(recorded.choices, ReplayStrategy::Mode::strict, revalued);
  EXPECT_THROW(run_once(s, by_value, keeping_steps(false)), InputError);
}

/// Every field of a Step, as text.
std::string fields(const Step& step) {
  std::string out = std::to_string(step.index) + " " + to_string(step.action.kind) + " " + std::to_string(step.action.rank) +
                    " " + std::to_string(step.action.lane) + " op " + std::to_string(step.op.rank) + "/" +
                    std::to_string(step.op.thread) + "/" + std::to_string(step.op.index) + " " + step.op_name + " | " +
                    step.lane + " | " + std::to_string(step.collective) + " " + std::to_string(step.comm) + " " +
                    std::to_string(step.seq) + "\n";
  for (const WrittenValues& w : step.written) {
    out += "  wrote " + std::to_string(w.rank) + " " + std::to_string(w.range.buffer) + "[" + std::to_string(w.range.offset) +
           "+" + std::to_string(w.range.count) + "]";
    for (float v : w.values) out += " " + std::to_string(v);
    out += "\n";
  }
  for (const Touch& t : step.touches) {
    out += "  touch " + std::to_string(t.object) + " " + std::to_string(t.write) + std::to_string(t.needs) +
           std::to_string(t.disables) + "\n";
  }
  return out;
}

// The run loop records a step in the engine's own Step when it keeps none (step_enabled): reused
// step after step, it must hold exactly what a new Step from apply_enabled holds, with nothing
// left over from the step before (a collective's seq, an issue's touches, written values).
TEST(StepDetail, a_step_recorded_in_place_is_the_step_a_new_one_records) {
  bool collective_then_not = false, any_written = false;
  for (const Scenario& s : {testing::te_async_point(CommChoice::separate, WaitPoint::after_copy, 2),
                            testing::wait_after_copy(3), testing::racy_collective(3)}) {
    for (std::uint64_t seed = 0; seed < 10; ++seed) {
      Engine fresh(s), in_place(s);
      Prng prng(seed);
      bool last_collective = false;
      for (std::size_t steps = 0; !fresh.enabled().empty(); ++steps) {
        ASSERT_EQ(fresh.enabled(), in_place.enabled());
        const std::size_t index = prng.below(fresh.enabled().size());
        const Step made = fresh.apply_enabled(index);
        ASSERT_EQ(fields(made), fields(in_place.step_enabled(index))) << "seed " << seed << " step " << steps;
        collective_then_not |= last_collective && !made.collective;
        any_written |= !made.written.empty();
        last_collective = made.collective;
      }
    }
  }
  // What a leftover would show in: a collective's fields after it, values written.
  EXPECT_TRUE(collective_then_not && any_written);
}

}  // namespace
}  // namespace amaxcheck::sched
