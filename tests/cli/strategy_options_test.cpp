// `amaxcheck check` has one `--<name>` option per parameter of the strategy table, grouped by
// strategy in --help; their values reach the strategy, and a bad one is exit 2 naming it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
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

TEST(StrategyOptions, a_bad_value_is_exit_2_naming_the_option) {
  const Ran algo = amaxcheck(with(target, {"--strategy", "timed", "--collective-algo", "mesh"}));
  EXPECT_EQ(algo.code, exit_bad_input);
  EXPECT_NE(algo.err.find("--collective-algo: expected auto|ring|tree|nvls, got \"mesh\""), std::string::npos) << algo.err;
  const Ran depth = amaxcheck(with(target, {"--strategy", "pct", "--depth", "two"}));
  EXPECT_EQ(depth.code, exit_bad_input);
  EXPECT_NE(depth.err.find("--depth"), std::string::npos) << depth.err;
  const Ran strategy = amaxcheck(with(target, {"--strategy", "bfs"}));
  EXPECT_EQ(strategy.code, exit_bad_input);
  EXPECT_NE(strategy.err.find("--strategy: expected random | pct | exhaustive | timed, got \"bfs\""), std::string::npos)
      << strategy.err;
}

}  // namespace
}  // namespace amaxcheck::cli
