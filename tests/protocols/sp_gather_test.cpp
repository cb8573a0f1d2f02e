// Sequence parallelism's FP8 all-gather (--sp-gather fp8), tested both ways (--sp-amax): every
// TP peer casts its sequence shard of tensor 0 and all-gathers the FP8 bytes, which it reads with
// its own scale_inv, so the gathered tensor is one replicated tensor only when the peers' scales
// come from one amax. Reduced over a group holding the TP peers (reduce) it is clean; from each
// rank's own amax (local: TE before its sequence-parallel fix with reduce_amax=False, or a
// current-scaling quantizer without its TP-group all-reduce) the gathered tensor diverges.
#include <gtest/gtest.h>

#include <algorithm>

#include "proven_clean.h"
#include "run_protocol.h"
#include "util/check.h"

namespace amaxcheck {
namespace {

using testing::count_ops;
using testing::expect_proven_clean;
using testing::knobs_of;
using testing::run_protocol;

using Settings = std::vector<std::pair<std::string, std::string>>;

constexpr ProtocolName kProtocols[] = {ProtocolName::te_sync, ProtocolName::te_async, ProtocolName::current_scaling};

Settings sequence_parallel(const char* amax) { return {{"tp", "2"}, {"dp", "1"}, {"sp-gather", "fp8"}, {"sp-amax", amax}}; }

TEST(SpGather, the_default_gathers_nothing) {
  EXPECT_EQ(ProtocolKnobs{}.sp_gather, SpGather::off);
  EXPECT_EQ(ProtocolKnobs{}.sp_amax, SpAmax::reduce);
  const Scenario s = build_protocol(knobs_of(ProtocolName::te_sync, {{"tp", "2"}, {"dp", "1"}}));
  EXPECT_EQ(count_ops(s, 0, "sp_gather_fwd"), 0u);
}

TEST(SpGather, every_cast_of_tensor_0_is_gathered_over_the_tp_group) {
  const Scenario s = build_protocol(knobs_of(ProtocolName::te_sync, sequence_parallel("reduce")));
  EXPECT_EQ(count_ops(s, 1, "sp_gather_fwd"), 2u * 4);  // 2 modules x 2 iterations x 2 microbatches
  EXPECT_EQ(count_ops(s, 1, "sp_gather_bwd"), 2u * 4);
  const auto tp = std::find_if(s.comms.begin(), s.comms.end(), [](const Communicator& c) { return c.name == "tp"; });
  ASSERT_NE(tp, s.comms.end());
  EXPECT_EQ(tp->members, (std::vector<RankId>{0, 1}));
  Settings recomputing = sequence_parallel("reduce");
  recomputing.emplace_back("recompute", "on");
  EXPECT_EQ(count_ops(build_protocol(knobs_of(ProtocolName::te_sync, recomputing)), 0, "sp_gather_fwd"), 2u * 2 * 4);
}

TEST(SpGather, a_scale_reduced_over_the_tp_peers_gathers_one_tensor_with_the_references_values) {
  for (ProtocolName protocol : kProtocols) {
    const auto run = run_protocol(knobs_of(protocol, sequence_parallel("reduce")));
    EXPECT_TRUE(run.done) << to_string(protocol);
    EXPECT_TRUE(run.hazards.empty()) << to_string(protocol) << "\n" << run.describe();
    // Not vacuous: every gathered tensor is held to the reference's shards and scale_inv.
    std::size_t gathered = 0;
    for (const ReplicaCheck& check : run.scenario.checks) {
      if (check.tensor.find("sp_gathered") == std::string::npos) continue;
      ++gathered;
      EXPECT_EQ(check.expected.size(), 2u * 4 + 1) << to_string(protocol) << " " << check.tensor;
    }
    EXPECT_EQ(gathered, 2u * 2) << to_string(protocol);  // 2 modules x forward and backward, one TP group
  }
}

TEST(SpGather, a_local_amax_gathers_shards_cast_with_different_scales) {
  for (ProtocolName protocol : kProtocols) {
    const auto run = run_protocol(knobs_of(protocol, sequence_parallel("local")));
    EXPECT_TRUE(run.done) << to_string(protocol);
    EXPECT_TRUE(run.has_about(HazardKind::replica_divergence, "sp_gathered")) << to_string(protocol) << "\n" << run.describe();
    EXPECT_TRUE(run.has_about(HazardKind::value_mismatch, "sp_gathered")) << to_string(protocol) << "\n" << run.describe();
    EXPECT_FALSE(run.has(HazardKind::data_race)) << to_string(protocol) << "\n" << run.describe();
    EXPECT_FALSE(run.has(HazardKind::collective_mismatch)) << to_string(protocol) << "\n" << run.describe();
  }
}

TEST(SpGather, a_local_amax_leaves_out_only_the_reductions_it_models) {
  // Delayed scaling with reduce_amax=False reduces nothing; current scaling loses tensor 0's all-reduce only.
  const Scenario delayed = build_protocol(knobs_of(ProtocolName::te_sync, sequence_parallel("local")));
  EXPECT_EQ(count_ops(delayed, 0, "amax_reduce_fwd") + count_ops(delayed, 0, "amax_reduce_bwd"), 0u);
  const Scenario current = build_protocol(knobs_of(ProtocolName::current_scaling, sequence_parallel("local")));
  const Scenario reduced = build_protocol(knobs_of(ProtocolName::current_scaling, sequence_parallel("reduce")));
  // Forward: tensor 1 still reduces; backward has tensor 0 only.
  EXPECT_EQ(count_ops(current, 0, "amax_reduce_fwd"), count_ops(reduced, 0, "amax_reduce_fwd") / 2);
  EXPECT_EQ(count_ops(current, 0, "amax_reduce_bwd"), 0u);
}

TEST(SpGather, a_delayed_amax_group_without_the_tp_peers_diverges_the_gathered_input) {
  // TransformerEngine#79: with sequence parallelism fp8_group must contain the TP group.
  Settings settings = sequence_parallel("reduce");
  settings.insert(settings.end(), {{"dp", "2"}, {"group", "dp"}});
  const auto run = run_protocol(knobs_of(ProtocolName::te_sync, settings));
  EXPECT_TRUE(run.done);
  EXPECT_TRUE(run.has_about(HazardKind::replica_divergence, "sp_gathered")) << run.describe();
}

TEST(SpGather, a_scale_reduced_over_the_tp_peers_is_proven_clean_in_the_small_shape) {
  Settings settings = sequence_parallel("reduce");
  settings.insert(settings.end(), {{"modules", "1"}, {"microbatches", "1"}, {"buckets", "1"}, {"fwd-tensors", "1"}});
  for (ProtocolName protocol : kProtocols) expect_proven_clean(knobs_of(protocol, settings));
}

TEST(SpGather, a_gather_without_tp_peers_or_with_uneven_shards_is_an_input_error) {
  EXPECT_THROW(build_protocol(knobs_of(ProtocolName::te_sync, {{"sp-gather", "fp8"}})), InputError);
  EXPECT_THROW(build_protocol(knobs_of(ProtocolName::te_sync, {{"tp", "2"}, {"sp-amax", "local"}})), InputError);
  Settings skipped = sequence_parallel("reduce");
  skipped.emplace_back("skip", "1:0");
  EXPECT_THROW(build_protocol(knobs_of(ProtocolName::te_sync, skipped)), InputError);
  Settings emptied = sequence_parallel("reduce");
  emptied.emplace_back("empty", "1:0");
  EXPECT_THROW(build_protocol(knobs_of(ProtocolName::current_scaling, emptied)), InputError);
}

}  // namespace
}  // namespace amaxcheck
