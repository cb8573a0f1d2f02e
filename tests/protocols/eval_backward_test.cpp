// Evaluation mode with a backward (--eval-backward: the frozen base layers of an adapter / LoRA
// fine-tune, whose forward registers nothing but through which the gradient flows), tested both
// ways: with the backward reduction after the last module that runs backward (--reduce-at-bwd
// last-backward, te-sync's default) it is clean; tied to the forward's first *registering* module
// (--reduce-at-bwd first-module, TE v0.8-v1.5 and te-async's default, or te-sync's with --reduce-at
// first-module), an
// evaluation-mode module ahead of it registers its backward amaxes after that reduction went out,
// into a buffer NCCL may still be reducing in place.
#include <gtest/gtest.h>

#include "protocols/reference_model.h"
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

/// Module 0 of two is the adapter's frozen base layer: evaluation mode, with a backward.
Settings adapter_base(const char* reduce_at) {
  return {{"dp", "2"}, {"modules", "2"}, {"eval-backward", "0"}, {"reduce-at", reduce_at}};
}

TEST(EvalBackward, the_module_registers_its_backward_but_not_its_forward_and_computes_no_wgrad) {
  const Scenario s = build_protocol(knobs_of(ProtocolName::te_sync, adapter_base("exit")));
  const std::size_t autocasts = 4;  // 2 iterations x 2 microbatches
  EXPECT_EQ(count_ops(s, 0, "local_amax_fwd"), autocasts * 2 * 1);  // module 1 only, 2 tensors
  EXPECT_EQ(count_ops(s, 0, "local_amax_bwd"), autocasts * 1 * 2);  // both modules, 1 tensor
  EXPECT_EQ(count_ops(s, 0, "gemm_wgrad"), autocasts * 1);          // module 1 only
  const ReferenceResult ref = run_reference_model(knobs_of(ProtocolName::te_sync, adapter_base("exit")));
  EXPECT_EQ(ref.at(0, Direction::forward, 0).scale, std::vector<float>(2, 1.0f));  // never updated
  EXPECT_NE(ref.at(0, Direction::backward, 0).scale, std::vector<float>(1, 1.0f));
}

TEST(EvalBackward, with_the_backward_reduction_after_the_last_backward_it_is_clean) {
  for (ProtocolName protocol : {ProtocolName::te_sync, ProtocolName::te_async, ProtocolName::current_scaling}) {
    for (const char* at : {"exit", "next-entry"}) {
      Settings settings = adapter_base(at);
      settings.emplace_back("reduce-at-bwd", "last-backward");
      if (protocol == ProtocolName::current_scaling) settings = {{"tp", "2"}, {"dp", "1"}, {"eval-backward", "0"}};
      const auto run = run_protocol(knobs_of(protocol, settings));
      EXPECT_TRUE(run.done) << to_string(protocol) << " " << at;
      EXPECT_TRUE(run.hazards.empty()) << to_string(protocol) << " " << at << "\n" << run.describe();
    }
  }
}

TEST(EvalBackward, with_the_backward_reduction_after_the_last_backward_it_is_proven_clean_in_the_small_shape) {
  Settings settings = adapter_base("exit");
  settings.insert(settings.end(), {{"microbatches", "1"}, {"buckets", "1"}, {"fwd-tensors", "1"}, {"reduce-at-bwd", "last-backward"}});
  for (ProtocolName protocol : {ProtocolName::te_sync, ProtocolName::te_async}) {
    expect_proven_clean(knobs_of(protocol, settings));
  }
}

TEST(EvalBackward, tied_to_the_first_registering_module_a_synchronous_reduction_misses_its_backward_amaxes) {
  const auto run = run_protocol(knobs_of(ProtocolName::te_sync, adapter_base("first-module")));
  EXPECT_TRUE(run.done);
  EXPECT_TRUE(run.has(HazardKind::replica_divergence)) << run.describe();
}

TEST(EvalBackward, tied_to_the_first_registering_module_an_async_reduction_races_with_its_backward_amaxes) {
  const auto run = run_protocol(knobs_of(ProtocolName::te_async, adapter_base("first-module")));
  EXPECT_TRUE(run.has(HazardKind::data_race)) << run.describe();
}

TEST(EvalBackward, te_async_ties_its_backward_reduction_to_the_first_registering_module_by_default) {
  // The forward reduction stays at fp8_autocast exit; only the backward one moves (TE v0.8-v1.5).
  const auto run = run_protocol(knobs_of(ProtocolName::te_async, adapter_base("exit")));
  EXPECT_TRUE(run.has(HazardKind::data_race)) << run.describe();
}

TEST(EvalBackward, a_rule_outside_the_model_is_an_input_error) {
  EXPECT_THROW(build_protocol(knobs_of(ProtocolName::te_sync, {{"eval-backward", "2"}})), InputError);
  EXPECT_THROW(build_protocol(knobs_of(ProtocolName::te_sync, {{"eval-backward", "0:9"}})), InputError);
}

}  // namespace
}  // namespace amaxcheck
