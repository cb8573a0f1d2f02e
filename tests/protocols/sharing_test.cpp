// The specification from the layout (protocols/sharing.h): which ranks share each tensor, and
// a configured amax group that differs from it reported as a hazard naming the tensor and the
// ranks, since the checks and the reference values come from the layout, not from `--group`.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "protocols/layout.h"
#include "protocols/sharing.h"
#include "run_protocol.h"

namespace amaxcheck {
namespace {

using ::testing::HasSubstr;
using testing::knobs_of;
using testing::run_protocol;

const Hazard* first_of(const testing::ProtocolRun& run, HazardKind kind) {
  for (const Hazard& h : run.hazards) {
    if (h.kind == kind) return &h;
  }
  return nullptr;
}

std::vector<RankId> ranks_of(const Hazard& h) {
  std::vector<RankId> ranks;
  for (const Participant& p : h.participants) ranks.push_back(p.rank);
  return ranks;
}

TEST(Sharing, delayed_scaling_shares_every_tensor_across_its_whole_pipeline_stage) {
  const auto knobs = knobs_of(ProtocolName::te_sync, {{"tp", "2"}, {"dp", "2"}, {"pp", "2"}});
  EXPECT_EQ(sharing_groups(Layout(knobs), knobs.protocol), (Groups{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  EXPECT_EQ(sharing_label(knobs), "TP shards x DP replicas");
}

TEST(Sharing, current_scaling_shares_a_tensor_among_the_tp_shards_of_one_dp_and_cp_index) {
  // TE's Linear reduces current-scaling amaxes over tp_group only: CP peers cast their own part of
  // the sequence with their own scale.
  const auto knobs = knobs_of(ProtocolName::current_scaling, {{"tp", "2"}, {"cp", "2"}, {"dp", "2"}});
  EXPECT_EQ(sharing_groups(Layout(knobs), knobs.protocol), (Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
  EXPECT_EQ(sharing_label(knobs), "TP shards");
  EXPECT_EQ(Layout(knobs).amax_groups(), (Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));  // auto: the TP group
}

TEST(Sharing, delayed_scaling_still_shares_across_tp_cp_and_dp) {
  // Megatron-LM's amax reduction group with context parallelism: TP x CP x DP within a stage.
  const auto knobs = knobs_of(ProtocolName::te_sync, {{"tp", "2"}, {"cp", "2"}, {"dp", "2"}});
  EXPECT_EQ(sharing_groups(Layout(knobs), knobs.protocol), (Groups{{0, 1, 2, 3, 4, 5, 6, 7}}));
  EXPECT_EQ(sharing_label(knobs), "TP shards x CP shards x DP replicas");
  EXPECT_EQ(Layout(knobs).amax_groups(), sharing_groups(Layout(knobs), knobs.protocol));
}

TEST(Sharing, the_named_tp_group_is_the_tp_group_alone_and_dp_spans_cp) {
  const auto knobs = knobs_of(ProtocolName::te_sync, {{"tp", "2"}, {"cp", "2"}, {"dp", "1"}, {"group", "tp"}});
  EXPECT_EQ(Layout(knobs).amax_groups(), (Groups{{0, 1}, {2, 3}}));
  const auto dp = knobs_of(ProtocolName::te_sync, {{"tp", "2"}, {"cp", "2"}, {"dp", "1"}, {"group", "dp"}});
  EXPECT_EQ(Layout(dp).amax_groups(), (Groups{{0, 2}, {1, 3}}));
}

TEST(Sharing, follows_the_rank_order) {
  // dp fastest: ranks 0 and 1 are DP peers, 0 and 2 TP peers.
  const auto knobs = knobs_of(ProtocolName::current_scaling, {{"tp", "2"}, {"dp", "2"}, {"order", "dp-tp-cp-pp"}});
  EXPECT_EQ(sharing_groups(Layout(knobs), knobs.protocol), (Groups{{0, 2}, {1, 3}}));
}

TEST(Sharing, auto_resolves_to_the_sharing_groups) {
  for (ProtocolName p : {ProtocolName::te_sync, ProtocolName::te_async, ProtocolName::current_scaling}) {
    const auto knobs = knobs_of(p, {{"tp", "2"}, {"dp", "2"}, {"pp", "2"}, {"cp", "2"}, {"order", "cp-dp-pp-tp"}});
    const Layout layout(knobs);
    EXPECT_EQ(layout.amax_groups(), sharing_groups(layout, p)) << to_string(p);
  }
}

TEST(Sharing, every_check_covers_exactly_one_sharing_group_whatever_the_configured_group) {
  for (const char* group : {"auto", "dp", "tp", "world", "0/1/2/3"}) {
    const auto knobs = knobs_of(ProtocolName::te_sync, {{"tp", "2"}, {"dp", "2"}, {"group", group}, {"modules", "1"}});
    const Scenario s = build_protocol(knobs);
    ASSERT_EQ(s.checks.size(), 6u) << group;  // 1 module x 2 directions x 3 quantities
    for (const ReplicaCheck& check : s.checks) {
      std::vector<RankId> ranks;
      for (const auto& replica : check.replicas) ranks.push_back(replica.rank);
      EXPECT_EQ(ranks, (std::vector<RankId>{0, 1, 2, 3})) << group << ": " << check.tensor;
    }
  }
}

// The first command: Megatron's old bug, the DP group as the FP8 group under TP.
TEST(WrongGroup, the_dp_group_under_tp_is_a_divergence_between_tp_peers) {
  const auto run = run_protocol(
      knobs_of(ProtocolName::te_sync, {{"tp", "2"}, {"dp", "2"}, {"modules", "1"}, {"iters", "1"}, {"group", "dp"}}));
  ASSERT_TRUE(run.done);
  const Hazard* divergence = first_of(run, HazardKind::replica_divergence);
  ASSERT_NE(divergence, nullptr) << run.describe();
  EXPECT_EQ(divergence->subject, "stage 0 / module 0 / forward / amax_history");
  EXPECT_THAT(divergence->summary, HasSubstr("stage 0 / module 0 / forward / amax_history differs between rank 0 and rank 1"));
  EXPECT_EQ(ranks_of(*divergence), (std::vector<RankId>{0, 1}));
  // Rank names carry the coordinates, so the report shows the two differ only in TP.
  EXPECT_THAT(divergence->details, ::testing::Contains(HasSubstr("rank0 (dp0 tp0 pp0 cp0)")));
  EXPECT_THAT(divergence->details, ::testing::Contains(HasSubstr("rank1 (dp0 tp1 pp0 cp0)")));
  EXPECT_THAT(divergence->details, ::testing::Contains("ranks that must hold it bit-identical: 0, 1, 2, 3"));
  // The DP peers did reduce with each other: no divergence between ranks 0 and 2.
  for (const Hazard& h : run.hazards) {
    if (h.kind == HazardKind::replica_divergence) {
      EXPECT_NE(ranks_of(h), (std::vector<RankId>{0, 2})) << h.summary;
    }
  }
  EXPECT_TRUE(run.has(HazardKind::value_mismatch)) << run.describe();
}

// The second command: one group per rank, so no TP reduction at all.
TEST(WrongGroup, a_group_per_rank_under_tp_is_a_divergence_and_a_mismatch_naming_the_tensor) {
  const auto run = run_protocol(knobs_of(ProtocolName::te_sync, {{"tp", "2"}, {"dp", "1"}, {"group", "0/1"}}));
  ASSERT_TRUE(run.done);
  const Hazard* divergence = first_of(run, HazardKind::replica_divergence);
  ASSERT_NE(divergence, nullptr) << run.describe();
  EXPECT_EQ(ranks_of(*divergence), (std::vector<RankId>{0, 1}));
  const Hazard* mismatch = first_of(run, HazardKind::value_mismatch);
  ASSERT_NE(mismatch, nullptr) << run.describe();
  EXPECT_THAT(mismatch->summary, HasSubstr("but the sequential reference gives"));
  EXPECT_THAT(mismatch->subject, HasSubstr("stage 0 / module "));
  // The participant is the op that produced the wrong value.
  EXPECT_THAT(mismatch->participants.at(0).op_name, HasSubstr("scale_update"));
}

TEST(WrongGroup, every_affected_tensor_is_its_own_hazard) {
  const auto run = run_protocol(
      knobs_of(ProtocolName::te_sync, {{"tp", "2"}, {"dp", "2"}, {"modules", "1"}, {"iters", "1"}, {"group", "dp"}}));
  std::set<std::string> diverged;
  for (const Hazard& h : run.hazards) {
    if (h.kind == HazardKind::replica_divergence) diverged.insert(h.subject);
  }
  // History, scale and scale_inv of both directions.
  EXPECT_EQ(diverged.size(), 6u) << run.describe();
}

TEST(WrongGroup, a_tp_group_under_dp_with_delayed_scaling_leaves_the_dp_replicas_apart) {
  const auto run = run_protocol(knobs_of(ProtocolName::te_sync, {{"tp", "2"}, {"dp", "2"}, {"group", "tp"}}));
  const Hazard* divergence = first_of(run, HazardKind::replica_divergence);
  ASSERT_NE(divergence, nullptr) << run.describe();
  EXPECT_EQ(ranks_of(*divergence), (std::vector<RankId>{0, 2}));  // DP peers
}

TEST(WrongGroup, a_world_group_across_independent_pipeline_stages_mixes_different_layers) {
  // Stages that do not communicate reach their reductions alike, so only the values show it;
  // with a real schedule the same group hangs (pipeline_test.cpp).
  const auto run = run_protocol(
      knobs_of(ProtocolName::te_sync, {{"dp", "2"}, {"pp", "2"}, {"group", "world"}, {"pp-schedule", "independent"}}));
  ASSERT_TRUE(run.done);
  EXPECT_TRUE(run.has(HazardKind::value_mismatch)) << run.describe();
  EXPECT_FALSE(run.has(HazardKind::replica_divergence)) << "every stage-mate reduced alike";
}

TEST(WrongGroup, current_scaling_over_dp_replicas_makes_a_cast_depend_on_another_replica) {
  const auto run = run_protocol(knobs_of(ProtocolName::current_scaling, {{"tp", "2"}, {"dp", "2"}, {"group", "tp-dp"}}));
  ASSERT_TRUE(run.done);
  EXPECT_TRUE(run.has(HazardKind::value_mismatch)) << run.describe();
}

// The audit's commands: TE's TP-only group under context parallelism, and an empty input at tp 1.
TEST(CurrentScalingWithCp, te_tp_only_group_is_clean_cp_peers_need_not_agree) {
  const auto run = run_protocol(knobs_of(ProtocolName::current_scaling, {{"cp", "2"}, {"dp", "1"}, {"tp", "2"}, {"modules", "1"},
                                                                         {"iters", "1"}, {"microbatches", "1"}, {"group", "0,1/2,3"}}));
  EXPECT_TRUE(run.done);
  EXPECT_TRUE(run.hazards.empty()) << run.describe();
}

TEST(CurrentScalingWithCp, at_tp_1_an_empty_input_that_returns_early_leaves_nobody_waiting) {
  const auto run = run_protocol(knobs_of(ProtocolName::current_scaling,
                                         {{"cp", "2"}, {"dp", "2"}, {"modules", "1"}, {"iters", "1"}, {"microbatches", "1"},
                                          {"empty", "0:0"}, {"empty-quantize", "return-early"}}));
  EXPECT_TRUE(run.done) << run.describe();
  EXPECT_TRUE(run.hazards.empty()) << run.describe();
  EXPECT_TRUE(run.scenario.comms.size() == 1u) << "only the DP x CP gradient group: no amax communicator at tp 1";
}

TEST(CurrentScalingWithCp, an_empty_input_that_returns_early_still_strands_its_tp_peer) {
  const auto run = run_protocol(knobs_of(ProtocolName::current_scaling,
                                         {{"cp", "2"}, {"tp", "2"}, {"dp", "1"}, {"modules", "1"}, {"iters", "1"},
                                          {"microbatches", "1"}, {"empty", "0:0"}, {"empty-quantize", "return-early"}}));
  EXPECT_TRUE(run.has(HazardKind::unjoined_collective) || run.has(HazardKind::deadlock)) << run.describe();
}

TEST(CurrentScalingWithCp, a_group_over_cp_peers_makes_a_cast_depend_on_another_part_of_the_sequence) {
  // tp-dp spans TP x CP x DP: the old default's CP reduction is now the wrong design it is.
  const auto run = run_protocol(knobs_of(ProtocolName::current_scaling, {{"cp", "2"}, {"tp", "2"}, {"dp", "1"}, {"group", "tp-dp"}}));
  ASSERT_TRUE(run.done);
  EXPECT_TRUE(run.has(HazardKind::value_mismatch)) << run.describe();
}

TEST(WrongGroup, the_correct_groups_spelled_out_are_clean) {
  // tp fastest: stage-mates are 0-3 (delayed), TP peers {0,1} and {2,3} (current).
  const auto delayed = run_protocol(knobs_of(ProtocolName::te_sync, {{"tp", "2"}, {"dp", "2"}, {"group", "0-3"}}));
  EXPECT_TRUE(delayed.hazards.empty()) << delayed.describe();
  const auto current = run_protocol(knobs_of(ProtocolName::current_scaling, {{"tp", "2"}, {"dp", "2"}, {"group", "0,1/2,3"}}));
  EXPECT_TRUE(current.hazards.empty()) << current.describe();
}

}  // namespace
}  // namespace amaxcheck
