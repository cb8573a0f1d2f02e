// Rank, local rank and device mapping from launcher variables: no GPU needed.
#include <gtest/gtest.h>

#include <map>

#include "cuda/launch_env.h"
#include "util/check.h"

namespace amaxcheck::gpu {
namespace {

EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](std::string_view name) -> std::optional<std::string> {
    auto it = vars.find(std::string(name));
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(LaunchEnv, no_launcher_variables_mean_one_process) {
  const LaunchEnv env = launch_env_from(env_of({}));
  EXPECT_EQ(env.launcher, "none");
  EXPECT_EQ(env.world_rank, 0);
  EXPECT_EQ(env.world_size, 1);
  EXPECT_FALSE(env.multi_process());
}

TEST(LaunchEnv, openmpi_variables_give_rank_and_local_rank) {
  const LaunchEnv env = launch_env_from(env_of({{"OMPI_COMM_WORLD_RANK", "5"},
                                                {"OMPI_COMM_WORLD_SIZE", "8"},
                                                {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                                                {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}}));
  EXPECT_EQ(env.launcher, "openmpi");
  EXPECT_EQ(env.world_rank, 5);
  EXPECT_EQ(env.world_size, 8);
  EXPECT_EQ(env.local_rank, 1);
  EXPECT_EQ(env.local_size, 4);
}

TEST(LaunchEnv, slurm_variables_are_used_when_openmpi_is_absent) {
  const LaunchEnv env = launch_env_from(
      env_of({{"SLURM_PROCID", "3"}, {"SLURM_NTASKS", "4"}, {"SLURM_LOCALID", "1"}, {"SLURM_NTASKS_PER_NODE", "2"}}));
  EXPECT_EQ(env.launcher, "slurm");
  EXPECT_EQ(env.world_rank, 3);
  EXPECT_EQ(env.local_rank, 1);
  EXPECT_EQ(env.local_size, 2);
}

TEST(LaunchEnv, openmpi_wins_over_slurm_when_mpirun_runs_inside_an_allocation) {
  const LaunchEnv env = launch_env_from(env_of({{"SLURM_PROCID", "0"},
                                                {"SLURM_NTASKS", "1"},
                                                {"OMPI_COMM_WORLD_RANK", "1"},
                                                {"OMPI_COMM_WORLD_SIZE", "2"},
                                                {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}}));
  EXPECT_EQ(env.launcher, "openmpi");
  EXPECT_EQ(env.world_rank, 1);
  EXPECT_EQ(env.local_size, 2) << "an unset local size is at least local rank + 1";
}

TEST(LaunchEnv, a_non_numeric_rank_is_an_input_error_naming_the_variable) {
  try {
    launch_env_from(env_of({{"OMPI_COMM_WORLD_RANK", "one"}}));
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("OMPI_COMM_WORLD_RANK='one'"), std::string::npos) << e.what();
  }
}

TEST(LaunchEnv, a_rank_not_below_the_size_is_an_input_error) {
  EXPECT_THROW(launch_env_from(env_of({{"SLURM_PROCID", "4"}, {"SLURM_NTASKS", "4"}})), InputError);
}

TEST(LaunchEnv, processes_own_contiguous_blocks_of_scenario_ranks) {
  LaunchEnv env;
  env.world_rank = 1;
  env.world_size = 2;
  EXPECT_EQ(ranks_of_process(4, env), (std::vector<std::uint32_t>{2, 3}));
  EXPECT_EQ(process_of_rank(2, 4, 2), 1);
  EXPECT_EQ(process_of_rank(1, 4, 2), 0);
  EXPECT_THROW(ranks_of_process(3, env), InputError);
}

TEST(LaunchEnv, local_ranks_take_consecutive_devices_and_wrap_only_when_sharing_is_allowed) {
  LaunchEnv env;
  env.local_rank = 1;
  EXPECT_EQ(device_for_slot(env, 2, 0, 4, false), 2);
  EXPECT_EQ(device_for_slot(env, 2, 1, 4, false), 3);
  EXPECT_EQ(device_for_slot(env, 2, 1, 2, false), -1);
  EXPECT_EQ(device_for_slot(env, 2, 1, 2, true), 1);
  EXPECT_EQ(device_for_slot(env, 1, 0, 0, true), -1);
}

}  // namespace
}  // namespace amaxcheck::gpu
