// `amaxcheck check` has one `--<name>` option per parameter of the strategy table, grouped by
// strategy in --help; their values reach the strategy, and a bad one is exit 2 naming it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "cli/commands.h"
#include "run_cli.h"
#include "scheduler/strategy_table.h"

namespace amaxcheck::cli {
namespace {

const std::vector<std::string> target = {"check", "te-sync", "--dp", "2", "--modules", "1", "--iters", "1"};

std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(StrategyOptions, help_lists_every_parameter_of_every_strategy_under_its_strategy) {
  const Ran r = amaxcheck({"check", "--help"});
  EXPECT_EQ(r.code, 0) << r.err;
  for (const sched::StrategyEntry& entry : sched::strategy_table()) {
    EXPECT_NE(r.out.find(std::string("  ") + entry.name + ": " + entry.help), std::string::npos) << entry.name;
    if (entry.params.empty()) continue;
    const std::size_t group = r.out.find(std::string("[Option Group: --strategy ") + entry.name + "]");
    ASSERT_NE(group, std::string::npos) << entry.name << "\n" << r.out;
    for (const sched::StrategyParam& param : entry.params) {
      EXPECT_GT(r.out.find(std::string("--") + param.name, group), group) << param.name << "\n" << r.out;
    }
  }
}

TEST(StrategyOptions, values_reach_the_strategy) {
  const Ran exhaustive = amaxcheck(with(target, {"--strategy", "exhaustive", "--no-reduction", "--max-schedules", "3",
                                                 "--keep-going", "--json"}));
  EXPECT_EQ(exhaustive.code, exit_inconclusive) << exhaustive.out << exhaustive.err;
  const auto j = nlohmann::json::parse(exhaustive.out);
  EXPECT_EQ(j["runs"], 3) << "--max-schedules 3";
  const Ran timed = amaxcheck(with(target, {"--strategy", "timed", "--alpha-us", "1000", "--json"}));
  const Ran slower = amaxcheck(with(target, {"--strategy", "timed", "--alpha-us", "2000", "--json"}));
  ASSERT_EQ(timed.code, exit_clean) << timed.err;
  EXPECT_LT(nlohmann::json::parse(timed.out)["timing"]["iteration_time_us"],
            nlohmann::json::parse(slower.out)["timing"]["iteration_time_us"]);
}

TEST(StrategyOptions, another_strategy_s_parameter_is_exit_2_naming_its_strategy) {
  // Once silently ignored: `--strategy random --depth 3` ran plain random runs.
  for (const auto& [strategy, option, value] : {std::tuple{"random", "--depth", "3"}, {"pct", "--max-schedules", "9"},
                                                {"exhaustive", "--alpha-us", "5"}}) {
    const Ran r = amaxcheck(with(target, {"--strategy", strategy, option, value}));
    EXPECT_EQ(r.code, exit_bad_input) << strategy << " " << option << ": " << r.out << r.err;
    EXPECT_NE(r.err.find(std::string(option) + ": a parameter of --strategy "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(std::string("not of --strategy ") + strategy), std::string::npos) << r.err;
  }
}

TEST(StrategyOptions, a_bad_value_is_exit_2_naming_the_option) {
  const Ran algo = amaxcheck(with(target, {"--strategy", "timed", "--collective-algo", "mesh"}));
  EXPECT_EQ(algo.code, exit_bad_input);
  EXPECT_NE(algo.err.find("--collective-algo: expected auto|ring|tree|nvls, got \"mesh\""), std::string::npos) << algo.err;
  // A choice is a whole word: neither a prefix of one nor nothing.
  for (const char* partial : {"rin", ""}) {
    const Ran r = amaxcheck(with(target, {"--strategy", "timed", "--collective-algo", partial}));
    EXPECT_EQ(r.code, exit_bad_input) << "\"" << partial << "\"\n" << r.out << r.err;
    EXPECT_NE(r.err.find("--collective-algo: expected auto|ring|tree|nvls"), std::string::npos) << r.err;
  }
  const Ran depth = amaxcheck(with(target, {"--strategy", "pct", "--depth", "two"}));
  EXPECT_EQ(depth.code, exit_bad_input);
  EXPECT_NE(depth.err.find("--depth"), std::string::npos) << depth.err;
  const Ran strategy = amaxcheck(with(target, {"--strategy", "bfs"}));
  EXPECT_EQ(strategy.code, exit_bad_input);
  EXPECT_NE(strategy.err.find("--strategy: expected random | pct | exhaustive | timed, got \"bfs\""), std::string::npos)
      << strategy.err;
}

TEST(StrategyOptions, a_negative_or_overflowing_count_is_exit_2_naming_the_option) {
  // CLI11 once took "-1" as 2^64 - 1 (`--runs -1` ran until killed) and saturated overflows
  // (`--seed 2^64` was the seed 2^64 - 1).
  const std::vector<std::vector<std::string>> bad = {
      {"--runs", "-1"},        {"--seed", "-1"}, {"--seed", "18446744073709551616"},
      {"--max-steps", "-1"},   {"--strategy", "exhaustive", "--max-schedules", "-1"},
      {"--strategy", "pct", "--depth", "-3"},
  };
  for (const auto& args : bad) {
    const Ran r = amaxcheck(with(target, args));
    EXPECT_EQ(r.code, exit_bad_input) << args[args.size() - 2] << " " << args.back() << "\n" << r.out << r.err;
    EXPECT_NE(r.err.find(args[args.size() - 2]), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("expected a whole number from 0 to 18446744073709551615"), std::string::npos) << r.err;
  }
  const Ran bound = amaxcheck(with(target, {"--strategy", "exhaustive", "--preemption-bound", "-7"}));
  EXPECT_EQ(bound.code, exit_bad_input) << bound.out << bound.err;
  EXPECT_NE(bound.err.find("--preemption-bound: expected -1 (none) or a bound from 0, got -7"), std::string::npos) << bound.err;
  const Ran largest = amaxcheck(with(target, {"--seed", "18446744073709551615", "--runs", "1", "--json"}));
  EXPECT_EQ(largest.code, exit_clean) << largest.err;
  EXPECT_EQ(nlohmann::json::parse(largest.out)["seed"], 18446744073709551615ull);
}

TEST(StrategyOptions, a_cost_figure_that_is_not_a_finite_non_negative_number_is_exit_2) {
  // Once accepted: NaN and inf made the figures NaN or inf, a negative kernel ran backwards,
  // a negative --bus-gbps or --alpha-us was silently the default, 2^32 channels were 0.
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"--launch-us", "nan"}, {"--launch-us", "1e400"}, {"--kernel-us", "-1000"}, {"--alpha-us", "nan"},
      {"--alpha-us", "-100"}, {"--bus-gbps", "-5"},     {"--channels", "4294967296"},
  };
  for (const auto& [option, value] : bad) {
    const Ran r = amaxcheck(with(target, {"--strategy", "timed", option, value}));
    EXPECT_EQ(r.code, exit_bad_input) << option << " " << value << "\n" << r.out << r.err;
    EXPECT_NE(r.err.find(option), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace amaxcheck::cli
