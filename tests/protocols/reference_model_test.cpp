// The sequential reference model on hand-set inputs: the FP8 edge cases, computed by hand, and
// the engine agreeing with it when it runs the generated programs.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <limits>

#include "protocols/reference_model.h"
#include "run_protocol.h"

namespace amaxcheck {
namespace {

using testing::knobs_of;

/// One module, one tensor each way, history `history`, two ranks, one autocast; every
/// element of rank r's forward tensor is fwd[r], of its backward tensor bwd[r].
ProtocolKnobs one_step(ProtocolName protocol, const std::string& fwd0, const std::string& fwd1,
                       std::vector<std::pair<std::string, std::string>> extra = {}) {
  std::vector<std::pair<std::string, std::string>> settings = {
      {"modules", "1"}, {"fwd-tensors", "1"}, {"bwd-tensors", "1"}, {"iters", "1"}, {"microbatches", "1"},
      {"history", "1"}, {"input", "0:0:0:fwd=" + fwd0}, {"input", "1:0:0:fwd=" + fwd1},
      {"input", "0:0:0:bwd=3"}, {"input", "1:0:0:bwd=-7"}};
  settings.insert(settings.end(), extra.begin(), extra.end());
  return knobs_of(protocol, settings);
}

float fwd_scale(const ProtocolKnobs& knobs, RankId rank = 0) {
  return run_reference_model(knobs).at(rank, Direction::forward, 0).scale[0];
}

TEST(ReferenceModel, reduced_amax_is_the_max_over_the_group_and_sets_the_e4m3_scale) {
  const auto ref = run_reference_model(one_step(ProtocolName::te_sync, "2", "-4"));
  for (RankId r : {0u, 1u}) {
    EXPECT_EQ(ref.at(r, Direction::forward, 0).scale[0], 448.0f / 4.0f);
    EXPECT_EQ(ref.at(r, Direction::forward, 0).scale_inv[0], 4.0f / 448.0f);
  }
}

TEST(ReferenceModel, backward_uses_the_e5m2_maximum) {
  const auto ref = run_reference_model(one_step(ProtocolName::te_sync, "2", "4"));
  EXPECT_EQ(ref.at(0, Direction::backward, 0).scale[0], 57344.0f / 7.0f);
  EXPECT_EQ(ref.at(1, Direction::backward, 0).scale[0], 57344.0f / 7.0f);
}

TEST(ReferenceModel, margin_divides_the_scale_by_a_power_of_two) {
  EXPECT_EQ(fwd_scale(one_step(ProtocolName::te_sync, "7", "7", {{"margin", "3"}})), 448.0f / 7.0f / 8.0f);
  EXPECT_EQ(fwd_scale(one_step(ProtocolName::te_sync, "7", "7", {{"margin", "-1"}})), 448.0f / 7.0f * 2.0f);
}

TEST(ReferenceModel, zero_amax_keeps_the_previous_scale) {
  EXPECT_EQ(fwd_scale(one_step(ProtocolName::te_sync, "0", "-0")), 1.0f);
}

TEST(ReferenceModel, infinite_amax_keeps_the_previous_scale) {
  EXPECT_EQ(fwd_scale(one_step(ProtocolName::te_sync, "inf", "3")), 1.0f);
}

TEST(ReferenceModel, nan_elements_are_ignored_by_the_local_amax) {
  // All-NaN tensors have amax 0 (fmaxf ignores NaN), so the other rank's amax decides.
  EXPECT_EQ(fwd_scale(one_step(ProtocolName::te_sync, "nan", "8")), 448.0f / 8.0f);
  EXPECT_EQ(fwd_scale(one_step(ProtocolName::te_sync, "nan", "nan")), 1.0f);
}

TEST(ReferenceModel, a_tiny_amax_clamps_the_infinite_scale_to_flt_max) {
  EXPECT_EQ(fwd_scale(one_step(ProtocolName::te_sync, "1e-45", "1e-45")), FLT_MAX);
}

TEST(ReferenceModel, max_algo_keeps_the_largest_amax_of_the_window) {
  // Iteration 0 sees amax 8, iteration 1 sees 2: with a window of 2 the scale still uses 8.
  const auto knobs = knobs_of(ProtocolName::te_sync, {{"modules", "1"}, {"fwd-tensors", "1"}, {"microbatches", "1"},
                                                      {"history", "2"}, {"input", "0:0:0:fwd=8"}, {"input", "1:0:0:fwd=1"},
                                                      {"input", "0:1:0:fwd=2"}, {"input", "1:1:0:fwd=1"}});
  const ReferenceResult ref = run_reference_model(knobs);
  const auto& fwd = ref.at(0, Direction::forward, 0);
  EXPECT_EQ(fwd.scale[0], 448.0f / 8.0f);
  EXPECT_EQ(fwd.amax_history, (std::vector<float>{0.0f, 2.0f}));  // rolled: the newest moved to the last row
  auto recent = knobs;
  set_knob(recent, "algo", "most_recent");
  EXPECT_EQ(run_reference_model(recent).at(0, Direction::forward, 0).scale[0], 448.0f / 2.0f);
}

TEST(ReferenceModel, a_skipped_module_does_not_update_on_that_rank) {
  const auto knobs = knobs_of(ProtocolName::te_sync, {{"dp", "1"}, {"modules", "2"}, {"skip", "0:1"}});
  const auto ref = run_reference_model(knobs);
  EXPECT_EQ(ref.at(0, Direction::forward, 1).scale, (std::vector<float>{1.0f, 1.0f}));
  EXPECT_NE(ref.at(0, Direction::forward, 0).scale[0], 1.0f);
}

TEST(ReferenceModel, skipping_on_one_rank_only_leaves_the_group_undefined) {
  const auto ref = run_reference_model(knobs_of(ProtocolName::te_sync, {{"dp", "2"}, {"skip", "1:0:1"}}));
  EXPECT_FALSE(ref.at(0, Direction::forward, 0).defined);
  EXPECT_FALSE(ref.at(1, Direction::backward, 1).defined);
}

/// Rank 0 skips module 0 and rank 1 module 1: each registers one module, so their reductions
/// match and the reference defines both ranks' values, which differ (a skipped module keeps its
/// scale). No expected value holds for the pair: one taken from the first holder's reference
/// would report rank 1, which is right, as a value mismatch. What breaks is their agreement.
TEST(ReferenceModel, holders_whose_references_differ_get_no_expected_value_and_only_their_divergence_is_reported) {
  const auto knobs = knobs_of(ProtocolName::te_sync, {{"dp", "2"}, {"modules", "2"}, {"skip", "0:0"}, {"skip", "1:1"}});
  const ReferenceResult ref = run_reference_model(knobs);
  for (std::uint32_t m = 0; m < 2; ++m) {
    ASSERT_TRUE(ref.at(0, Direction::forward, m).defined && ref.at(1, Direction::forward, m).defined) << m;
    ASSERT_NE(ref.at(0, Direction::forward, m).scale, ref.at(1, Direction::forward, m).scale) << m;
  }
  const auto run = testing::run_protocol(knobs);
  ASSERT_FALSE(run.scenario.checks.empty());
  for (const ReplicaCheck& check : run.scenario.checks) EXPECT_TRUE(check.expected.empty()) << check.tensor;
  EXPECT_TRUE(run.has(HazardKind::replica_divergence)) << run.describe();
  EXPECT_FALSE(run.has(HazardKind::value_mismatch)) << run.describe();
}

TEST(ReferenceModel, current_scaling_uses_each_quantizations_own_amax) {
  const auto knobs = knobs_of(ProtocolName::current_scaling,
                              {{"tp", "2"}, {"dp", "1"}, {"modules", "1"}, {"fwd-tensors", "1"}, {"microbatches", "1"},
                               {"input", "0:0:0:fwd=8"}, {"input", "1:0:0:fwd=1"}, {"input", "0:1:0:fwd=2"},
                               {"input", "1:1:0:fwd=1"}});
  const ReferenceResult ref = run_reference_model(knobs);
  const auto& fwd = ref.at(1, Direction::forward, 0);
  EXPECT_EQ(fwd.scale[0], 448.0f / 2.0f) << "no history: the last quantization's amax alone";
  EXPECT_EQ(fwd.amax_history, (std::vector<float>{0.0f}));
}

TEST(ReferenceModel, the_engine_running_the_generated_program_agrees_on_every_edge_case) {
  for (const char* value : {"0", "inf", "nan", "1e-45", "3.5"}) {
    for (ProtocolName p : {ProtocolName::te_sync, ProtocolName::te_async, ProtocolName::current_scaling}) {
      auto knobs = one_step(p, value, "2", {{"margin", "1"}, {"history", "3"}});
      set_knob(knobs, "iters", "2");
      if (p == ProtocolName::current_scaling) {
        // Current scaling reduces over the TP shards of a tensor (DP replicas keep their own).
        set_knob(knobs, "tp", "2");
        set_knob(knobs, "dp", "1");
      }
      const auto run = testing::run_protocol(knobs);
      EXPECT_TRUE(run.done) << value << " " << to_string(p);
      EXPECT_TRUE(run.hazards.empty()) << value << " " << to_string(p) << "\n" << run.describe();
      std::size_t with_expected = 0;
      for (const ReplicaCheck& check : run.scenario.checks) with_expected += check.expected.empty() ? 0 : 1;
      EXPECT_EQ(with_expected, run.scenario.checks.size()) << "every check carries reference values";
    }
  }
}

}  // namespace
}  // namespace amaxcheck
