// Where delayed scaling's amax reductions are launched (--reduce-at for the forward, --reduce-at-bwd
// for the backward) and modules without a backward (--frozen), each tested both ways: the placement that shipped with a bug is reported with its
// hazard kind, its fixed twin is clean (proven, where the exhaustive search completes). The
// oracle is the sequential reference, which holds every placement to the same reduced amaxes.
#include <gtest/gtest.h>

#include <algorithm>

#include "proven_clean.h"
#include "run_protocol.h"
#include "scheduler/explore.h"
#include "util/check.h"

namespace amaxcheck {
namespace {

using testing::expect_proven_clean;
using testing::knobs_of;
using testing::search_exhaustively;
using testing::run_protocol;

/// The smallest shape with two modules: 2 DP ranks, one microbatch, bucket and forward tensor.
ProtocolKnobs small(ProtocolName protocol, std::vector<std::pair<std::string, std::string>> settings) {
  settings.insert(settings.begin(), {{"dp", "2"}, {"modules", "2"}, {"microbatches", "1"}, {"iters", "1"},
                                     {"buckets", "1"}, {"fwd-tensors", "1"}});
  return knobs_of(protocol, std::move(settings));
}

/// Ops of rank 0 named `name`, in program order, with their origins.
std::vector<std::string> origins_of(const Scenario& scenario, const std::string& name) {
  std::vector<std::string> origins;
  for (const Thread& thread : scenario.ranks[0].threads) {
    for (const Op& op : thread.program) {
      if (op.name == name) origins.push_back(op.origin);
    }
  }
  return origins;
}

TEST(ReducePoint, the_default_is_autocast_exit) { EXPECT_EQ(ProtocolKnobs{}.reduce_at, ReducePoint::exit); }

TEST(ReducePoint, next_entry_launches_each_forward_reduction_at_the_following_autocast_entry) {
  const Scenario s = build_protocol(knobs_of(ProtocolName::te_sync, {{"reduce-at", "next-entry"}}));
  const auto origins = origins_of(s, "amax_reduce_fwd");
  ASSERT_EQ(origins.size(), 4u);  // 2 iterations x 2 microbatches
  EXPECT_NE(origins[0].find("iter 0 / microbatch 1 / fp8_autocast entry (reduces autocast 0)"), std::string::npos) << origins[0];
  EXPECT_NE(origins[3].find("after iter 1 / the next fp8_autocast (reduces autocast 3)"), std::string::npos) << origins[3];
}

TEST(ReducePoint, first_module_launches_the_forward_reduction_in_the_next_autocasts_first_registering_module) {
  const Scenario s = build_protocol(knobs_of(ProtocolName::te_sync, {{"reduce-at", "first-module"}, {"skip", "0:0:1"}}));
  const auto origins = origins_of(s, "amax_reduce_fwd");
  ASSERT_EQ(origins.size(), 4u);
  // Rank 0 skips module 0 in iteration 1: module 1 is its first module there.
  EXPECT_NE(origins[1].find("iter 1 / microbatch 0 / module 1 / forward (first module) (reduces autocast 1)"), std::string::npos)
      << origins[1];
}

TEST(ReducePoint, every_placement_is_clean_and_matches_the_reference) {
  for (ProtocolName protocol : {ProtocolName::te_sync, ProtocolName::te_async}) {
    for (const char* at : {"exit", "next-entry", "first-module"}) {
      const auto run = run_protocol(knobs_of(protocol, {{"tp", "2"}, {"modules", "3"}, {"reduce-at", at}}));
      EXPECT_TRUE(run.done) << to_string(protocol) << " " << at;
      EXPECT_TRUE(run.hazards.empty()) << to_string(protocol) << " " << at << "\n" << run.describe();
    }
  }
}

TEST(ReducePoint, every_placement_is_proven_clean_in_the_small_shape) {
  for (ProtocolName protocol : {ProtocolName::te_sync, ProtocolName::te_async}) {
    for (const char* at : {"exit", "next-entry", "first-module"}) {
      // Two iterations, so the deferred placements reduce inside the run, not only at its end.
      expect_proven_clean(small(protocol, {{"reduce-at", at}, {"iters", "2"}}));
    }
  }
}

TEST(FrozenModule, a_frozen_module_has_no_backward_and_registers_only_its_forward_amaxes) {
  const Scenario s = build_protocol(knobs_of(ProtocolName::te_sync, {{"modules", "2"}, {"frozen", "0"}}));
  for (const std::string& origin : origins_of(s, "local_amax_bwd")) {
    EXPECT_EQ(origin.find("module 0"), std::string::npos) << origin;
  }
  EXPECT_EQ(origins_of(s, "local_amax_bwd").size(), 4u);  // module 1 only: 4 autocasts x 1 tensor
  EXPECT_EQ(origins_of(s, "local_amax_fwd").size(), 16u);  // both modules: 4 autocasts x 2 tensors
}

TEST(FrozenModule, with_the_reduction_at_the_end_of_the_backward_a_frozen_first_module_is_clean) {
  for (ProtocolName protocol : {ProtocolName::te_sync, ProtocolName::te_async, ProtocolName::current_scaling}) {
    for (const char* rule : {"0", "0:1", "1"}) {
      std::vector<std::pair<std::string, std::string>> settings = {{"tp", "2"}, {"modules", "2"}, {"frozen", rule}, {"recompute", "on"}};
      if (protocol != ProtocolName::current_scaling) settings.emplace_back("reduce-at-bwd", "last-backward");
      const auto run = run_protocol(knobs_of(protocol, settings));
      EXPECT_TRUE(run.done) << rule;
      EXPECT_TRUE(run.hazards.empty()) << to_string(protocol) << " --frozen " << rule << "\n" << run.describe();
    }
  }
  expect_proven_clean(small(ProtocolName::te_sync, {{"frozen", "0"}}));
  expect_proven_clean(small(ProtocolName::te_async, {{"frozen", "0"}, {"reduce-at-bwd", "last-backward"}}));
}

TEST(BackwardReducePoint, auto_is_the_first_module_for_te_async_and_after_the_last_backward_for_te_sync) {
  EXPECT_EQ(ProtocolKnobs{}.reduce_at_bwd, BwdReducePoint::automatic);
  EXPECT_EQ(reduce_at_bwd_of(knobs_of(ProtocolName::te_async, {})), BwdReducePoint::first_module);
  EXPECT_EQ(reduce_at_bwd_of(knobs_of(ProtocolName::te_sync, {})), BwdReducePoint::last_backward);
  // te-sync's --reduce-at first-module tied both reductions to the first module before the knobs were split.
  EXPECT_EQ(reduce_at_bwd_of(knobs_of(ProtocolName::te_sync, {{"reduce-at", "first-module"}})), BwdReducePoint::first_module);
  EXPECT_EQ(reduce_at_bwd_of(knobs_of(ProtocolName::te_async, {{"reduce-at-bwd", "last-backward"}})), BwdReducePoint::last_backward);
  EXPECT_EQ(reduce_at_bwd_of(knobs_of(ProtocolName::te_sync, {{"reduce-at-bwd", "first-module"}})), BwdReducePoint::first_module);
}

TEST(BackwardReducePoint, te_async_with_a_frozen_first_module_never_reduces_its_backward_amaxes_and_the_replicas_diverge) {
  // TE v0.8-v1.5 launch the backward reduction after fp8_meta["first_module"]'s backward, which a
  // frozen module never runs; the audit's command: amaxcheck check te-async --frozen 0 --dp 2
  // --modules 2 --iters 1 --microbatches 1 --buckets 1 --strategy exhaustive.
  const ProtocolKnobs knobs = knobs_of(ProtocolName::te_async, {{"frozen", "0"}, {"dp", "2"}, {"modules", "2"}, {"iters", "1"},
                                                                {"microbatches", "1"}, {"buckets", "1"}});
  const auto run = run_protocol(knobs);
  EXPECT_TRUE(run.done);
  EXPECT_TRUE(origins_of(run.scenario, "amax_reduce_bwd").empty());
  const sched::ExploreResult r = search_exhaustively(knobs);
  EXPECT_TRUE(std::any_of(r.hazards.begin(), r.hazards.end(), [](const sched::FoundHazard& h) {
    return h.hazard.kind == HazardKind::replica_divergence && h.hazard.summary.find("module 1 / backward") != std::string::npos;
  })) << r.hazards.size() << " hazards";
}

TEST(BackwardReducePoint, moves_only_the_backward_reduction_the_forward_one_stays_at_autocast_exit) {
  for (ProtocolName protocol : {ProtocolName::te_sync, ProtocolName::te_async}) {
    const Scenario s = build_protocol(knobs_of(protocol, {{"frozen", "0"}, {"reduce-at-bwd", "first-module"}}));
    const auto forward = origins_of(s, "amax_reduce_fwd");
    ASSERT_EQ(forward.size(), 4u) << to_string(protocol);  // 2 iterations x 2 microbatches
    for (const std::string& origin : forward) {
      EXPECT_NE(origin.find("fp8_autocast exit"), std::string::npos) << to_string(protocol) << ": " << origin;
    }
    EXPECT_TRUE(origins_of(s, "amax_reduce_bwd").empty()) << to_string(protocol);
    const auto run = run_protocol(knobs_of(protocol, {{"frozen", "0"}, {"reduce-at-bwd", "first-module"}}));
    EXPECT_TRUE(run.has(HazardKind::replica_divergence)) << to_string(protocol) << "\n" << run.describe();
  }
}

TEST(BackwardReducePoint, without_a_frozen_module_both_points_are_clean_and_proven_in_the_small_shape) {
  for (ProtocolName protocol : {ProtocolName::te_sync, ProtocolName::te_async}) {
    for (const char* at : {"first-module", "last-backward"}) {
      const auto run = run_protocol(knobs_of(protocol, {{"tp", "2"}, {"modules", "3"}, {"reduce-at-bwd", at}}));
      EXPECT_TRUE(run.done) << to_string(protocol) << " " << at;
      EXPECT_TRUE(run.hazards.empty()) << to_string(protocol) << " " << at << "\n" << run.describe();
      expect_proven_clean(small(protocol, {{"reduce-at-bwd", at}, {"iters", "2"}}));
    }
  }
}

TEST(BackwardReducePoint, is_delayed_scalings_knob) {
  EXPECT_THROW(build_protocol(knobs_of(ProtocolName::current_scaling, {{"reduce-at-bwd", "first-module"}})), InputError);
  EXPECT_NO_THROW(build_protocol(knobs_of(ProtocolName::current_scaling, {{"reduce-at-bwd", "auto"}})));
  ProtocolKnobs knobs;
  EXPECT_TRUE(try_set_knob(knobs, "reduce-at-bwd", "exit").has_value());
}

TEST(FrozenModule, a_backward_reduction_tied_to_a_frozen_first_module_never_goes_out_and_the_replicas_diverge) {
  const ProtocolKnobs knobs = small(ProtocolName::te_sync, {{"frozen", "0"}, {"reduce-at", "first-module"}});
  const auto run = run_protocol(knobs);
  EXPECT_TRUE(run.done);  // nothing hangs: every rank skips the reduction alike
  EXPECT_TRUE(origins_of(run.scenario, "amax_reduce_bwd").empty());
  EXPECT_TRUE(run.has(HazardKind::value_mismatch) || run.has(HazardKind::replica_divergence)) << run.describe();
  const sched::ExploreResult r = search_exhaustively(knobs);
  EXPECT_TRUE(r.coverage_complete);
  EXPECT_TRUE(std::any_of(r.hazards.begin(), r.hazards.end(), [](const sched::FoundHazard& h) {
    return h.hazard.kind == HazardKind::replica_divergence && h.hazard.summary.find("module 1 / backward") != std::string::npos;
  })) << r.hazards.size() << " hazards";
}

TEST(FrozenModule, the_frozen_first_module_only_breaks_the_iteration_it_is_frozen_in) {
  // Frozen in iteration 1 only: iteration 0's backward reduction goes out, iteration 1's not.
  const auto run = run_protocol(knobs_of(ProtocolName::te_sync, {{"modules", "2"}, {"microbatches", "1"},
                                                                 {"frozen", "0:1"}, {"reduce-at", "first-module"}}));
  EXPECT_EQ(origins_of(run.scenario, "amax_reduce_bwd").size(), 1u);
  EXPECT_TRUE(run.has(HazardKind::replica_divergence)) << run.describe();
}

TEST(ReducePoint, first_module_leaves_an_evaluation_mode_module_ahead_of_it_copying_back_an_unreduced_buffer) {
  // Module 0 trains in iteration 0 and runs in evaluation mode in iteration 1: its copy-back
  // comes before module 1, the first registering module, launches the reduction.
  const std::vector<std::pair<std::string, std::string>> design = {{"modules", "2"}, {"microbatches", "1"}, {"eval", "0:1"}};
  auto buggy = design, fixed = design;
  buggy.emplace_back("reduce-at", "first-module");
  fixed.emplace_back("reduce-at", "next-entry");
  const auto run = run_protocol(knobs_of(ProtocolName::te_sync, buggy));
  EXPECT_TRUE(run.has(HazardKind::replica_divergence)) << run.describe();
  const auto twin = run_protocol(knobs_of(ProtocolName::te_sync, fixed));
  EXPECT_TRUE(twin.done);
  EXPECT_TRUE(twin.hazards.empty()) << twin.describe();
}

TEST(FrozenModule, a_frozen_rule_outside_the_model_is_an_input_error) {
  EXPECT_THROW(build_protocol(knobs_of(ProtocolName::te_sync, {{"frozen", "5"}})), InputError);
  EXPECT_THROW(build_protocol(knobs_of(ProtocolName::te_sync, {{"frozen", "0:7"}})), InputError);
  ProtocolKnobs knobs;
  EXPECT_TRUE(try_set_knob(knobs, "reduce-at", "later").has_value());
}

}  // namespace
}  // namespace amaxcheck
