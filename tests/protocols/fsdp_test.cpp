// FSDP-sharded FP8 weights (--fsdp), tested both ways (--fsdp-amax-group): every module's weight
// is sharded over the FSDP group (DP x CP), cast and all-gathered in FP8 by its pre-forward hook and
// read with this rank's scale, so its peers must cast with one scale: the weight amax all-reduced
// over the FSDP mesh (shard) is clean; over every rank (world, torchao before pytorch/ao#933) the
// pipeline stages wait for each other and hang, or mix other weights' amaxes into the scale.
#include <gtest/gtest.h>

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

Settings sharded(const char* mode, const char* group, Settings more = {}) {
  Settings settings{{"dp", "2"}, {"fsdp", mode}, {"fsdp-amax-group", group}};
  settings.insert(settings.end(), more.begin(), more.end());
  return settings;
}

TEST(Fsdp, the_default_shards_no_weights) {
  EXPECT_EQ(ProtocolKnobs{}.fsdp, FsdpMode::off);
  EXPECT_EQ(ProtocolKnobs{}.fsdp_amax_group, FsdpAmaxGroup::shard);
  EXPECT_EQ(count_ops(build_protocol(knobs_of(ProtocolName::current_scaling, {})), 0, "fsdp_all_gather"), 0u);
}

TEST(Fsdp, inline_reduces_at_every_gather_and_precompute_once_per_iteration) {
  const Scenario inline_amax = build_protocol(knobs_of(ProtocolName::current_scaling, sharded("inline", "shard")));
  EXPECT_EQ(count_ops(inline_amax, 0, "fsdp_all_gather"), 2u * 4);  // 2 modules x 2 iterations x 2 microbatches
  EXPECT_EQ(count_ops(inline_amax, 0, "amax_reduce_weight"), 2u * 4);
  const Scenario precompute = build_protocol(knobs_of(ProtocolName::current_scaling, sharded("precompute", "shard")));
  EXPECT_EQ(count_ops(precompute, 0, "fsdp_all_gather"), 2u * 4);
  EXPECT_EQ(count_ops(precompute, 0, "amax_reduce_weight"), 2u);  // one per iteration for every weight
}

TEST(Fsdp, a_weight_amax_reduced_over_the_fsdp_mesh_gathers_one_weight_with_the_references_values) {
  for (const char* mode : {"inline", "precompute"}) {
    for (const Settings& more : {Settings{}, Settings{{"pp", "2"}}, Settings{{"tp", "2"}}}) {
      const auto run = run_protocol(knobs_of(ProtocolName::current_scaling, sharded(mode, "shard", more)));
      EXPECT_TRUE(run.done) << mode;
      EXPECT_TRUE(run.hazards.empty()) << mode << "\n" << run.describe();
      std::size_t gathered = 0;
      for (const ReplicaCheck& check : run.scenario.checks) {
        if (check.tensor.find("fsdp_gathered") == std::string::npos) continue;
        ++gathered;
        EXPECT_EQ(check.expected.size(), 2u * 4 + 1) << mode << " " << check.tensor;  // 2 shards of 4, and scale_inv
      }
      EXPECT_GT(gathered, 0u) << mode;
    }
  }
}

TEST(Fsdp, a_weight_amax_reduced_over_the_world_at_each_gather_hangs_the_pipeline) {
  const auto run = run_protocol(knobs_of(ProtocolName::current_scaling, sharded("inline", "world", {{"pp", "2"}})));
  EXPECT_FALSE(run.done);
  EXPECT_TRUE(run.has(HazardKind::deadlock)) << run.describe();
}

TEST(Fsdp, a_precompute_over_the_world_mixes_the_stages_weights_or_mismatches_their_sizes) {
  const auto mixed = run_protocol(knobs_of(ProtocolName::current_scaling, sharded("precompute", "world", {{"pp", "2"}})));
  EXPECT_TRUE(mixed.done);
  EXPECT_TRUE(mixed.has_about(HazardKind::value_mismatch, "weight")) << mixed.describe();
  EXPECT_FALSE(mixed.has(HazardKind::replica_divergence)) << mixed.describe();
  const auto sized = run_protocol(
      knobs_of(ProtocolName::current_scaling, sharded("precompute", "world", {{"pp", "2"}, {"stage-modules", "2,1"}})));
  EXPECT_TRUE(sized.has(HazardKind::collective_mismatch)) << sized.describe();
}

TEST(Fsdp, a_weight_amax_over_the_world_mixes_tp_peers_weights) {
  const auto run = run_protocol(knobs_of(ProtocolName::current_scaling, sharded("inline", "world", {{"tp", "2"}})));
  EXPECT_TRUE(run.done);
  EXPECT_TRUE(run.has_about(HazardKind::value_mismatch, "fsdp_gathered")) << run.describe();
}

TEST(Fsdp, a_weight_amax_reduced_over_the_fsdp_mesh_is_proven_clean_in_the_small_shape) {
  const Settings small{{"modules", "1"}, {"microbatches", "1"}, {"buckets", "1"}, {"fwd-tensors", "1"}};
  for (const char* mode : {"inline", "precompute"}) {
    expect_proven_clean(knobs_of(ProtocolName::current_scaling, sharded(mode, "shard", small)));
    Settings staged = small;
    staged.emplace_back("pp", "2");
    expect_proven_clean(knobs_of(ProtocolName::current_scaling, sharded(mode, "shard", staged)));
  }
}

TEST(Fsdp, sharding_needs_current_scaling_and_an_fsdp_group) {
  EXPECT_THROW(build_protocol(knobs_of(ProtocolName::te_sync, sharded("inline", "shard"))), InputError);
  EXPECT_THROW(build_protocol(knobs_of(ProtocolName::current_scaling, {{"dp", "1"}, {"fsdp", "inline"}})), InputError);
  EXPECT_THROW(build_protocol(knobs_of(ProtocolName::current_scaling, {{"fsdp-amax-group", "world"}})), InputError);
}

}  // namespace
}  // namespace amaxcheck
