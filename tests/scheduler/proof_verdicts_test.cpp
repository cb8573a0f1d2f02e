// The seed question's small shape (te-async, one microbatch, one bucket, one forward tensor,
// 2 DP ranks, 1 module, 1 iteration) under the complete exhaustive search: the clean designs are
// proven clean (every schedule up to equivalence covered, no hazard) and the unsafe ones are
// reported with their hazard kind.
#include <gtest/gtest.h>

#include <algorithm>

#include "protocols/protocol.h"
#include "scheduler/explore.h"

namespace amaxcheck::sched {
namespace {

ProtocolKnobs small_shape(CommChoice comm, WaitPoint wait, AmaxOrder order, KernelConcurrency kernels) {
  ProtocolKnobs k;
  k.protocol = ProtocolName::te_async;
  k.comm = comm;
  k.wait = wait;
  k.amax_order = order;
  k.kernels = kernels;
  k.microbatches = 1;
  k.buckets = 1;
  k.fwd_tensors = 1;
  k.dp = 2;
  k.modules = 1;
  k.iters = 1;
  return k;
}

/// The whole search, without stopping at the first hazard, so a proof is a complete search.
ExploreResult search(const ProtocolKnobs& knobs) {
  ExploreOptions options;
  options.strategy = "exhaustive";
  options.stop_at_first = false;
  options.args.set("max-schedules", 2'000'000);  // far above what these need; hitting it fails the test
  return explore(build_protocol(knobs), options);
}

bool found(const ExploreResult& r, HazardKind kind) {
  return std::any_of(r.hazards.begin(), r.hazards.end(), [&](const FoundHazard& h) { return h.hazard.kind == kind; });
}

void expect_proven_clean(const ProtocolKnobs& knobs) {
  const ExploreResult r = search(knobs);
  EXPECT_TRUE(r.coverage_complete) << r.runs << " schedules";
  EXPECT_TRUE(r.hazards.empty()) << r.hazards.front().hazard.summary;
  EXPECT_GT(r.runs, 0u);
}

void expect_hazard(const ProtocolKnobs& knobs, HazardKind kind) {
  const ExploreResult r = search(knobs);
  EXPECT_TRUE(found(r, kind)) << to_string(kind) << " not found in " << r.runs << " schedules";
  EXPECT_TRUE(r.coverage_complete);
}

TEST(ProofVerdicts, separate_comm_waiting_before_the_copy_in_the_same_order_is_proven_clean) {
  expect_proven_clean(small_shape(CommChoice::separate, WaitPoint::before_copy, AmaxOrder::same, KernelConcurrency::concurrent));
}

TEST(ProofVerdicts, separate_comm_waiting_before_the_copy_in_a_rank_dependent_order_is_proven_clean) {
  expect_proven_clean(
      small_shape(CommChoice::separate, WaitPoint::before_copy, AmaxOrder::rank_dependent, KernelConcurrency::concurrent));
}

TEST(ProofVerdicts, a_shared_comm_in_the_same_order_is_proven_clean) {
  expect_proven_clean(small_shape(CommChoice::shared, WaitPoint::before_copy, AmaxOrder::same, KernelConcurrency::concurrent));
}

TEST(ProofVerdicts, waiting_after_the_copy_is_a_data_race) {
  expect_hazard(small_shape(CommChoice::separate, WaitPoint::after_copy, AmaxOrder::same, KernelConcurrency::concurrent),
                HazardKind::data_race);
}

TEST(ProofVerdicts, a_shared_comm_in_a_rank_dependent_order_is_a_collective_mismatch) {
  expect_hazard(small_shape(CommChoice::shared, WaitPoint::before_copy, AmaxOrder::rank_dependent, KernelConcurrency::concurrent),
                HazardKind::collective_mismatch);
}

TEST(ProofVerdicts, serialized_kernels_in_a_rank_dependent_order_deadlock) {
  expect_hazard(small_shape(CommChoice::separate, WaitPoint::before_copy, AmaxOrder::rank_dependent, KernelConcurrency::serialized),
                HazardKind::deadlock);
}

}  // namespace
}  // namespace amaxcheck::sched

namespace amaxcheck::sched {
namespace {

/// Two pipeline stages of two DP ranks each, under 1F1B with two microbatches.
ProtocolKnobs pipeline_shape(ProtocolName protocol, GroupKind group) {
  ProtocolKnobs k;
  k.protocol = protocol;
  k.pp = 2;
  k.dp = 2;
  k.group = group;
  k.buckets = 1;
  k.fwd_tensors = 1;
  k.modules = 1;
  k.iters = 1;
  return k;
}

TEST(ProofVerdicts, a_pipeline_with_a_per_stage_amax_group_is_proven_clean) {
  expect_proven_clean(pipeline_shape(ProtocolName::te_sync, GroupKind::automatic));
  expect_proven_clean(pipeline_shape(ProtocolName::te_async, GroupKind::automatic));
}

TEST(ProofVerdicts, a_pipeline_with_an_amax_group_spanning_its_stages_hangs) {
  expect_hazard(pipeline_shape(ProtocolName::te_sync, GroupKind::world), HazardKind::deadlock);
}

}  // namespace
}  // namespace amaxcheck::sched
