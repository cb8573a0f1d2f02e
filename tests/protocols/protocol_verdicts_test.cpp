// Each built-in protocol at 2, 8 and 64 ranks, run through the engine and the detectors: the
// verdicts the design notes predict, and final values equal to the sequential reference.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "run_protocol.h"

namespace amaxcheck {
namespace {

using testing::knobs_of;
using testing::run_protocol;

class AtScale : public ::testing::TestWithParam<int> {
 protected:
  std::string dp() const { return std::to_string(GetParam()); }
};

INSTANTIATE_TEST_SUITE_P(Ranks, AtScale, ::testing::Values(2, 8, 64),
                         [](const ::testing::TestParamInfo<int>& info) { return std::to_string(info.param) + "_ranks"; });

TEST_P(AtScale, te_sync_is_clean_and_matches_the_reference) {
  for (const char* comm : {"shared", "separate"}) {
    const auto run = run_protocol(knobs_of(ProtocolName::te_sync, {{"dp", dp()}, {"comm", comm}, {"modules", "3"}}));
    EXPECT_TRUE(run.done) << comm;
    EXPECT_TRUE(run.hazards.empty()) << comm << "\n" << run.describe();
  }
}

TEST_P(AtScale, te_async_wait_after_copy_races_with_the_reduction) {
  for (const char* comm : {"shared", "separate"}) {
    const auto run = run_protocol(
        knobs_of(ProtocolName::te_async, {{"dp", dp()}, {"comm", comm}, {"wait", "after-copy"}}));
    EXPECT_TRUE(run.has(HazardKind::data_race)) << comm << "\n" << run.describe();
    bool copy_back_named = false;
    for (const Hazard& h : run.hazards) {
      for (const Participant& p : h.participants) copy_back_named |= p.op_name.rfind("copy_back_", 0) == 0;
    }
    EXPECT_TRUE(copy_back_named) << run.describe();
  }
}

/// Names of the copy-backs that some data race of `run` names.
std::set<std::string> racing_copy_backs(const testing::ProtocolRun& run) {
  std::set<std::string> names;
  for (const Hazard& h : run.hazards) {
    if (h.kind != HazardKind::data_race) continue;
    for (const Participant& p : h.participants) {
      if (p.op_name.rfind("copy_back_", 0) == 0) names.insert(p.op_name);
    }
  }
  return names;
}

TEST_P(AtScale, wait_after_copy_moves_only_the_forward_wait_as_the_te_release_did) {
  const auto run = run_protocol(
      knobs_of(ProtocolName::te_async, {{"dp", dp()}, {"comm", "separate"}, {"wait", "after-copy"}}));
  EXPECT_EQ(racing_copy_backs(run), (std::set<std::string>{"copy_back_fwd"})) << run.describe();
}

TEST_P(AtScale, wait_bwd_after_copy_moves_the_backward_wait_too) {
  const auto both = run_protocol(knobs_of(ProtocolName::te_async,
                                          {{"dp", dp()}, {"comm", "separate"}, {"wait", "after-copy"}, {"wait-bwd", "after-copy"}}));
  EXPECT_EQ(racing_copy_backs(both), (std::set<std::string>{"copy_back_bwd", "copy_back_fwd"})) << both.describe();
  const auto backward_only = run_protocol(knobs_of(ProtocolName::te_async, {{"dp", dp()}, {"comm", "separate"}, {"wait-bwd", "after-copy"}}));
  EXPECT_EQ(racing_copy_backs(backward_only), (std::set<std::string>{"copy_back_bwd"})) << backward_only.describe();
}

TEST_P(AtScale, one_microbatch_on_a_shared_comm_masks_the_forward_race_behind_the_gradient_buckets) {
  // DDP waits for the buckets before the optimizer; NCCL ran them after the amax reduction on
  // the same communicator, so the next copy-back is ordered after it. A separate comm has no
  // such accidental edge.
  const auto shared = run_protocol(knobs_of(
      ProtocolName::te_async, {{"dp", dp()}, {"comm", "shared"}, {"wait", "after-copy"}, {"microbatches", "1"}}));
  EXPECT_FALSE(shared.has(HazardKind::data_race)) << shared.describe();
  const auto separate = run_protocol(knobs_of(
      ProtocolName::te_async, {{"dp", dp()}, {"comm", "separate"}, {"wait", "after-copy"}, {"microbatches", "1"}}));
  EXPECT_TRUE(separate.has(HazardKind::data_race)) << separate.describe();
}

TEST_P(AtScale, te_async_wait_before_copy_on_a_separate_comm_is_clean) {
  const auto run = run_protocol(
      knobs_of(ProtocolName::te_async, {{"dp", dp()}, {"comm", "separate"}, {"wait", "before-copy"}, {"modules", "3"}}));
  EXPECT_TRUE(run.done);
  EXPECT_TRUE(run.hazards.empty()) << run.describe();
}

TEST_P(AtScale, shared_comm_with_rank_dependent_amax_order_mismatches_collectives) {
  for (ProtocolName p : {ProtocolName::te_sync, ProtocolName::te_async}) {
    const auto run = run_protocol(knobs_of(p, {{"dp", dp()}, {"comm", "shared"}, {"amax-order", "rank-dependent"}}));
    EXPECT_TRUE(run.has(HazardKind::collective_mismatch)) << to_string(p) << "\n" << run.describe();
    EXPECT_FALSE(run.done);
  }
}

TEST_P(AtScale, separate_comm_with_rank_dependent_order_deadlocks_when_kernels_serialize) {
  const auto run = run_protocol(knobs_of(ProtocolName::te_async, {{"dp", dp()},
                                                                  {"comm", "separate"},
                                                                  {"amax-order", "rank-dependent"},
                                                                  {"kernels", "serialized"}}));
  EXPECT_TRUE(run.has(HazardKind::deadlock)) << run.describe();
  EXPECT_FALSE(run.has(HazardKind::collective_mismatch)) << run.describe();
  EXPECT_FALSE(run.done);
}

TEST_P(AtScale, separate_comm_with_rank_dependent_order_is_clean_when_kernels_run_concurrently) {
  const auto run = run_protocol(knobs_of(ProtocolName::te_async, {{"dp", dp()},
                                                                  {"comm", "separate"},
                                                                  {"amax-order", "rank-dependent"},
                                                                  {"kernels", "concurrent"}}));
  EXPECT_TRUE(run.done);
  EXPECT_TRUE(run.hazards.empty()) << run.describe();
}

TEST_P(AtScale, current_scaling_over_the_tp_group_is_clean) {
  // At 64 ranks: TP 8 x DP 8, so both the TP amax groups and the DP gradient groups are real.
  const std::string tp = GetParam() == 64 ? "8" : dp();
  const std::string dps = GetParam() == 64 ? "8" : "1";
  const auto run = run_protocol(knobs_of(ProtocolName::current_scaling, {{"tp", tp}, {"dp", dps}}));
  EXPECT_TRUE(run.done);
  EXPECT_TRUE(run.hazards.empty()) << run.describe();
}

}  // namespace
}  // namespace amaxcheck
