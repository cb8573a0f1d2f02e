// The strategy table is every strategy's identity: its parameters reach its factory (given, or
// their defaults), a bad value is an input error naming the option, and every strategy runs
// through the one exploration loop and the determinism check by its hooks alone.
#include "scheduler/strategy_table.h"

#include <gtest/gtest.h>

#include <set>

#include "scheduler/explore.h"
#include "scheduler/run.h"
#include "scenarios.h"
#include "trace/reproduce.h"
#include "util/check.h"

namespace amaxcheck::sched {
namespace {

ExploreOptions options_for(const std::string& strategy) {
  ExploreOptions options;
  options.strategy = strategy;
  options.seed = 3;
  options.runs = 10;
  return options;
}

std::string input_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no InputError)";
}

TEST(StrategyTable, names_every_strategy_once_with_unique_parameters_and_valid_defaults) {
  std::set<std::string> names;
  for (const StrategyEntry& entry : strategy_table()) {
    EXPECT_TRUE(names.insert(entry.name).second) << entry.name;
    EXPECT_EQ(find_strategy(entry.name), &entry);
    for (const StrategyParam& param : entry.params) {
      EXPECT_TRUE(names.insert(param.name).second) << param.name;
      EXPECT_NO_THROW(check_param_value(param, param.default_value)) << param.name;
    }
  }
  EXPECT_EQ(strategy_choices(), "random | pct | exhaustive | timed");
}

TEST(StrategyTable, an_unknown_strategy_is_an_input_error_listing_the_choices) {
  EXPECT_EQ(find_strategy("bfs"), nullptr);
  EXPECT_EQ(input_error_of([] { strategy_entry("bfs"); }),
            "--strategy: expected random | pct | exhaustive | timed, got \"bfs\"");
  EXPECT_EQ(input_error_of([] { explore(testing::wait_after_copy(2), options_for("bfs")); }),
            "--strategy: expected random | pct | exhaustive | timed, got \"bfs\"");
}

TEST(StrategyTable, parameters_reach_the_factory_given_or_by_default) {
  const Scenario s = testing::wait_after_copy(2);
  ExploreOptions pct = options_for("pct");
  EXPECT_EQ(make_strategy(s, pct)->parameters()["depth"], 3) << "the declared default";
  pct.args.set("depth", 5);
  auto strategy = make_strategy(s, pct);
  ASSERT_TRUE(strategy->begin_run(0));
  EXPECT_EQ(strategy->parameters()["depth"], 5);
  EXPECT_EQ(strategy->parameters()["change_points"].size(), 4u);

  ExploreOptions exhaustive = options_for("exhaustive");
  EXPECT_EQ(make_strategy(s, exhaustive)->parameters()["reduction"], "source-dpor+sleep-sets");
  exhaustive.args.set("no-reduction", true);
  exhaustive.args.set("max-schedules", 7);
  exhaustive.args.set("preemption-bound", 2);
  const auto params = make_strategy(s, exhaustive)->parameters();
  EXPECT_EQ(params["reduction"], "none");
  EXPECT_EQ(params["max_schedules"], 7);
  EXPECT_EQ(params["preemption_bound"], 2);
}

TEST(StrategyTable, the_timed_defaults_are_the_cost_models) {
  const Scenario s = testing::wait_after_copy(2);
  CostModel defaults;  // the default preset, with the cost model's other defaults
  defaults.topology = *topology_preset("h100-8x-nvlink-ib400");
  EXPECT_EQ(make_strategy(s, options_for("timed"))->parameters()["cost_model"], defaults.to_json());
  ExploreOptions options = options_for("timed");
  options.args.set("alpha-us", 2.5);
  options.args.set("bus-gbps", 50.0);
  options.args.set("collective-algo", "tree");
  CostModel expected;  // --alpha-us / --bus-gbps select the flat model
  expected.topology = *topology_preset("flat");
  expected.alpha_us = 2.5;
  expected.beta_us_per_byte = 1.0 / 50'000.0;
  expected.algo = CollectiveAlgo::tree;
  EXPECT_EQ(make_strategy(s, options)->parameters()["cost_model"], expected.to_json());
}

TEST(StrategyTable, a_malformed_value_is_an_input_error_naming_the_option) {
  StrategyArgs args;
  args.set("collective-algo", "mesh");
  EXPECT_EQ(input_error_of([&] { check_strategy_args(strategy_entry("timed"), args); }),
            "--collective-algo: expected auto|ring|tree|nvls, got \"mesh\"");
  ExploreOptions timed = options_for("timed");
  timed.args.set("bus-gbps", 0.0);
  EXPECT_EQ(input_error_of([&] { make_strategy(testing::wait_after_copy(2), timed); }),
            "--bus-gbps: expected a positive number, got \"0\"");
  args = {};
  args.set("depth", "two");
  EXPECT_EQ(input_error_of([&] { check_strategy_args(strategy_entry("pct"), args); }),
            "--depth: expected a whole number >= 0, got \"two\"");
  EXPECT_EQ(input_error_of([&] { check_strategy_args(strategy_entry("random"), args); }),
            "--depth: a parameter of --strategy pct, not of --strategy random, which would ignore it");
  args = {};
  args.set("bound", 1);
  EXPECT_EQ(input_error_of([&] { check_strategy_args(strategy_entry("pct"), args); }),
            "--bound: no strategy has this parameter");
  ExploreOptions options = options_for("pct");
  options.args.set("depth", "-1");
  EXPECT_EQ(input_error_of([&] { explore(testing::wait_after_copy(2), options); }),
            "--depth: expected a whole number >= 0, got \"-1\"");
}

TEST(StrategyTable, every_strategy_runs_through_the_loop_and_reports_by_its_hooks) {
  const Scenario s = testing::wait_after_copy(2, false);
  for (const StrategyEntry& entry : strategy_table()) {
    ExploreOptions options = options_for(entry.name);
    const ExploreResult r = explore(s, options);
    EXPECT_GT(r.runs, 0u) << entry.name;
    EXPECT_EQ(r.coverage, entry.coverage) << entry.name;
    EXPECT_EQ(r.exhaustive.has_value(), std::string(entry.name) == "exhaustive") << entry.name;
    EXPECT_EQ(r.timing.has_value(), std::string(entry.name) == "timed") << entry.name;
    if (entry.coverage == Coverage::sampled) {
      EXPECT_EQ(r.runs, options.runs) << entry.name;
    }
    if (entry.coverage == Coverage::timed) {
      EXPECT_EQ(r.runs, 1u) << entry.name;
    }
  }
}

TEST(StrategyTable, the_determinism_check_runs_every_strategy_including_the_search) {
  const Scenario s = testing::wait_after_copy(2);
  for (const StrategyEntry& entry : strategy_table()) {
    EXPECT_EQ(check_determinism(s, options_for(entry.name), 5), std::nullopt) << entry.name;
  }
}

TEST(StrategyTable, a_sampled_strategy_has_exactly_its_runs_and_seeds_them_by_index) {
  const Scenario s = testing::wait_after_copy(2);
  ExploreOptions options = options_for("random");
  auto a = make_strategy(s, options), b = make_strategy(s, options);
  ASSERT_TRUE(a->begin_run(7));
  EXPECT_EQ(a->seed(), run_seed(3, 7));
  ASSERT_TRUE(b->begin_run(2));
  ASSERT_TRUE(b->begin_run(7));
  EXPECT_EQ(run_once(s, *a).choices, run_once(s, *b).choices) << "run 7 does not depend on what ran before";
  EXPECT_TRUE(a->begin_run(9));
  EXPECT_FALSE(a->begin_run(10)) << "--runs 10";
}

}  // namespace
}  // namespace amaxcheck::sched
