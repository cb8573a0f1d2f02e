// Which GPU each rank gets, and the 1-rank-communicator variant for machines that are too small.
#include <gtest/gtest.h>

#include "cuda/placement.h"
#include "model/builder.h"
#include "model/split_communicators.h"
#include "util/check.h"

namespace amaxcheck::gpu {
namespace {

/// Two ranks, a DP communicator and an amax communicator over both.
Scenario two_ranks() {
  ScenarioBuilder b("two ranks");
  const RankId r0 = b.rank("r0"), r1 = b.rank("r1");
  const CommId dp = b.comm("dp", {r0, r1});
  const CommId amax = b.comm("amax", {r1, r0});
  for (RankId r : {r0, r1}) {
    const ThreadId t = b.thread(r, "main");
    const StreamId s = b.stream(r, "nccl");
    const BufferId buf = b.buffer(r, "amax", 2);
    b.op(r, t, ScenarioBuilder::all_reduce(s, dp, {buf, 0, 2}, {buf, 0, 2}, "grad"));
    Op bcast = ScenarioBuilder::all_reduce(s, amax, {buf, 0, 1}, {buf, 0, 1}, "bcast");
    bcast.kind = OpKind::broadcast;
    bcast.root = 1;
    b.op(r, t, bcast);
  }
  return b.build();
}

PlacementInput input(int devices, int nccl_version = 22809, bool multi_env = false) {
  PlacementInput in;
  in.device_count = devices;
  in.nccl_version = nccl_version;
  in.multi_rank_env = multi_env;
  return in;
}

TEST(Placement, enough_gpus_give_one_gpu_per_rank) {
  const Placement p = plan_placement(two_ranks(), input(2));
  EXPECT_EQ(p.mode, PlacementMode::one_gpu_per_rank);
  EXPECT_EQ(p.device_of_rank, (std::vector<int>{0, 1}));
  EXPECT_TRUE(p.fits());
}

TEST(Placement, one_gpu_with_nccl_before_2_30_does_not_fit_and_says_why) {
  const Placement p = plan_placement(two_ranks(), input(1));
  EXPECT_EQ(p.mode, PlacementMode::does_not_fit);
  EXPECT_NE(p.note.find("NCCL 2.28.9"), std::string::npos) << p.note;
  EXPECT_NE(p.note.find("1-rank"), std::string::npos) << p.note;
}

TEST(Placement, nccl_2_30_shares_a_gpu_only_with_the_environment_switch) {
  EXPECT_EQ(plan_placement(two_ranks(), input(1, 23000, true)).mode, PlacementMode::several_ranks_per_gpu);
  EXPECT_EQ(plan_placement(two_ranks(), input(1, 23000, false)).mode, PlacementMode::does_not_fit);
  EXPECT_EQ(plan_placement(two_ranks(), input(1, 22900, true)).mode, PlacementMode::does_not_fit);
  EXPECT_EQ(plan_placement(two_ranks(), input(1, several_ranks_per_gpu_min_nccl - 1, true)).mode,
            PlacementMode::does_not_fit);
}

/// `ranks` ranks on one DP communicator and a separate amax communicator split from it.
Scenario dp_and_amax(std::uint32_t ranks) {
  ScenarioBuilder b("dp and amax");
  std::vector<RankId> all;
  for (std::uint32_t i = 0; i < ranks; ++i) all.push_back(b.rank());
  const CommId dp = b.comm("dp", all);
  const CommId amax = b.comm("amax", all);
  for (RankId r : all) {
    const ThreadId t = b.thread(r, "main");
    const StreamId s = b.stream(r, "nccl");
    const BufferId buf = b.buffer(r, "amax", 2);
    b.op(r, t, ScenarioBuilder::all_reduce(s, dp, {buf, 0, 2}, {buf, 0, 2}, "grad"));
    b.op(r, t, ScenarioBuilder::all_reduce(s, amax, {buf, 0, 1}, {buf, 0, 1}, "amax"));
  }
  return b.build();
}

TEST(Placement, with_the_switch_2_4_and_8_members_all_go_on_the_one_gpu_and_the_note_names_the_library) {
  for (std::uint32_t ranks : {2u, 4u, 8u}) {
    const Placement p = plan_placement(dp_and_amax(ranks), input(1, 23007, true));
    EXPECT_EQ(p.mode, PlacementMode::several_ranks_per_gpu) << ranks << " ranks: " << p.note;
    EXPECT_EQ(p.device_of_rank, std::vector<int>(ranks, 0));
    EXPECT_EQ(p.local_ranks.size(), ranks);
    EXPECT_NE(p.note.find("NCCL 2.30.7 with NCCL_MULTI_RANK_GPU_ENABLE=1"), std::string::npos) << p.note;
  }
}

TEST(Placement, several_ranks_per_gpu_wrap_around_the_gpus_there_are) {
  const Placement p = plan_placement(dp_and_amax(4), input(2, 23007, true));
  EXPECT_EQ(p.mode, PlacementMode::several_ranks_per_gpu) << p.note;
  EXPECT_EQ(p.device_of_rank, (std::vector<int>{0, 1, 0, 1}));
}

TEST(Placement, enough_gpus_never_share_even_with_the_switch) {
  const Placement p = plan_placement(dp_and_amax(2), input(2, 23007, true));
  EXPECT_EQ(p.mode, PlacementMode::one_gpu_per_rank);
  EXPECT_EQ(p.device_of_rank, (std::vector<int>{0, 1}));
}

TEST(Placement, nccl_2_30_without_the_switch_says_that_the_switch_is_what_is_missing) {
  const Placement p = plan_placement(two_ranks(), input(1, 23007, false));
  EXPECT_EQ(p.mode, PlacementMode::does_not_fit);
  EXPECT_NE(p.note.find("NCCL 2.30.7 allows that only with NCCL_MULTI_RANK_GPU_ENABLE=1"), std::string::npos)
      << p.note;
  EXPECT_NE(p.note.find("which is not set"), std::string::npos) << p.note;
  EXPECT_NE(p.note.find("1-rank"), std::string::npos) << p.note;
}

TEST(Placement, nccl_before_2_30_with_the_switch_says_that_the_library_is_too_old) {
  const Placement p = plan_placement(two_ranks(), input(1, 22903, true));
  EXPECT_EQ(p.mode, PlacementMode::does_not_fit);
  EXPECT_NE(p.note.find("NCCL 2.29.3 does not allow that (needs NCCL >= 2.30"), std::string::npos) << p.note;
}

TEST(Placement, the_split_variant_fits_on_one_gpu) {
  const Scenario split = split_communicators_per_rank(two_ranks());
  const Placement p = plan_placement(split, input(1));
  EXPECT_EQ(p.mode, PlacementMode::shared_gpus_no_peers);
  EXPECT_EQ(p.device_of_rank, (std::vector<int>{0, 0}));
}

TEST(Placement, a_process_of_a_multi_process_launch_places_only_its_own_ranks) {
  PlacementInput in = input(4);
  in.launch.world_rank = 1;
  in.launch.world_size = 2;
  in.launch.local_rank = 1;
  const Placement p = plan_placement(two_ranks(), in);
  EXPECT_EQ(p.local_ranks, (std::vector<std::uint32_t>{1}));
  EXPECT_EQ(p.device_of_rank, (std::vector<int>{-1, 1}));
}

/// Process `local_rank` of an mpirun of two processes on a node with one GPU.
PlacementInput one_of_two_processes_on_one_gpu(int local_rank) {
  PlacementInput in = input(1);
  in.launch.world_rank = local_rank;
  in.launch.world_size = 2;
  in.launch.local_rank = local_rank;
  in.launch.local_size = 2;
  return in;
}

TEST(Placement, processes_sharing_a_gpu_do_not_fit_and_every_process_of_the_node_says_so) {
  for (int local_rank : {0, 1}) {
    const PlacementInput in = one_of_two_processes_on_one_gpu(local_rank);
    const Placement p = plan_placement(two_ranks(), in);
    EXPECT_EQ(p.mode, PlacementMode::does_not_fit) << "process " << local_rank << ": " << p.note;
    EXPECT_NE(p.note.find("need 2 GPUs"), std::string::npos) << p.note;
  }
}

TEST(Placement, processes_sharing_a_gpu_fit_with_nccl_2_30_and_the_switch_in_every_process) {
  for (int local_rank : {0, 1}) {
    PlacementInput in = one_of_two_processes_on_one_gpu(local_rank);
    in.nccl_version = 23007;
    in.multi_rank_env = true;
    const Placement p = plan_placement(two_ranks(), in);
    EXPECT_EQ(p.mode, PlacementMode::several_ranks_per_gpu) << "process " << local_rank << ": " << p.note;
    EXPECT_EQ(p.local_ranks, (std::vector<std::uint32_t>{static_cast<std::uint32_t>(local_rank)}));
  }
  PlacementInput off = one_of_two_processes_on_one_gpu(0);
  off.nccl_version = 23007;
  const Placement p = plan_placement(two_ranks(), off);
  EXPECT_EQ(p.mode, PlacementMode::does_not_fit);
  EXPECT_NE(p.note.find("which is not set"), std::string::npos) << p.note;
}

TEST(Placement, processes_may_share_a_gpu_when_every_communicator_has_one_member) {
  const Scenario split = split_communicators_per_rank(two_ranks());
  for (int local_rank : {0, 1}) {
    const PlacementInput in = one_of_two_processes_on_one_gpu(local_rank);
    const Placement p = plan_placement(split, in);
    EXPECT_EQ(p.mode, PlacementMode::shared_gpus_no_peers) << p.note;
    EXPECT_EQ(p.local_ranks, (std::vector<std::uint32_t>{static_cast<std::uint32_t>(local_rank)}));
    EXPECT_EQ(p.device_of_rank[static_cast<std::size_t>(local_rank)], 0);
  }
}

TEST(Placement, no_device_is_an_input_error) { EXPECT_THROW(plan_placement(two_ranks(), input(0)), InputError); }

TEST(SplitCommunicators, every_member_gets_its_own_communicator_and_roots_become_zero) {
  const Scenario split = split_communicators_per_rank(two_ranks());
  ASSERT_EQ(split.comms.size(), 4u);
  EXPECT_EQ(split.comms[0].name, "dp@r0");
  EXPECT_EQ(split.comms[1].name, "dp@r1");
  EXPECT_EQ(split.comms[2].name, "amax@r1") << "member order of the original is kept";
  EXPECT_EQ(split.comms[3].name, "amax@r0");
  const Op& grad_r1 = split.ranks[1].threads[0].program[0];
  const Op& bcast_r0 = split.ranks[0].threads[0].program[1];
  EXPECT_EQ(grad_r1.comm, 1u);
  EXPECT_EQ(bcast_r0.comm, 3u);
  EXPECT_EQ(bcast_r0.root, 0u);
  for (const Communicator& c : split.comms) EXPECT_EQ(c.members.size(), 1u);
}

TEST(SplitCommunicators, every_replica_becomes_a_check_of_its_own_without_a_reference) {
  Scenario s = two_ranks();
  s.checks.push_back(ReplicaCheck{"amax", {{0, {0, 0, 2}}, {1, {0, 0, 2}}}, {1.0f, 2.0f}});
  s.checks.push_back(ReplicaCheck{"alone", {{1, {0, 1, 1}}}, {}});
  const Scenario split = split_communicators_per_rank(s);
  ASSERT_EQ(split.checks.size(), 3u);
  EXPECT_EQ(split.checks[0].tensor, "amax@r0");
  EXPECT_EQ(split.checks[1].tensor, "amax@r1");
  EXPECT_EQ(split.checks[2].tensor, "alone");
  EXPECT_EQ(split.checks[1].replicas.size(), 1u);
  EXPECT_EQ(split.checks[1].replicas[0].rank, 1u);
  for (const ReplicaCheck& c : split.checks) EXPECT_TRUE(c.expected.empty()) << c.tensor;
}

TEST(SplitCommunicators, a_collective_from_a_non_member_is_an_input_error) {
  Scenario s = two_ranks();
  s.comms[0].members = {0};
  EXPECT_THROW(split_communicators_per_rank(s), InputError);
}

}  // namespace
}  // namespace amaxcheck::gpu
