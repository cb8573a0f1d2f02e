// What the recomputed forward of activation checkpointing does with amaxes (--recompute-amax),
// tested both ways against the sequential reference, for which a recompute changes nothing (one
// forward amax per module and autocast): casting with the forward's saved scales and registering
// nothing (skip) is clean; re-entering fp8_autocast per module (register) copies back, updates and
// registers again, so the forward history rolls twice per autocast and every rank alike ends with
// values the reference does not give.
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

Settings recomputing(const char* amax) {
  return {{"dp", "2"}, {"modules", "2"}, {"recompute", "on"}, {"recompute-amax", amax}};
}

TEST(Recompute, the_default_registers_nothing_in_the_recompute) {
  EXPECT_EQ(ProtocolKnobs{}.recompute_amax, RecomputeAmax::skip);
}

TEST(Recompute, a_recompute_that_registers_nothing_is_clean_and_reduces_once_per_autocast) {
  for (ProtocolName protocol : {ProtocolName::te_sync, ProtocolName::te_async}) {
    const auto run = run_protocol(knobs_of(protocol, recomputing("skip")));
    EXPECT_TRUE(run.done) << to_string(protocol);
    EXPECT_TRUE(run.hazards.empty()) << to_string(protocol) << "\n" << run.describe();
    EXPECT_EQ(count_ops(run.scenario, 0, "amax_reduce_fwd"), 4u);  // 2 iterations x 2 microbatches
  }
}

TEST(Recompute, a_recompute_that_registers_again_reduces_once_more_per_module) {
  const Scenario s = build_protocol(knobs_of(ProtocolName::te_sync, recomputing("register")));
  EXPECT_EQ(count_ops(s, 0, "amax_reduce_fwd"), 4u * 3);  // the forward's and each module's recompute
  EXPECT_EQ(count_ops(s, 1, "amax_reduce_fwd"), 4u * 3);
}

TEST(Recompute, a_recompute_that_registers_again_rolls_the_history_twice_and_mismatches_the_reference) {
  for (ProtocolName protocol : {ProtocolName::te_sync, ProtocolName::te_async}) {
    for (const char* at : {"exit", "next-entry", "first-module"}) {
      Settings settings = recomputing("register");
      settings.emplace_back("reduce-at", at);
      const auto run = run_protocol(knobs_of(protocol, settings));
      EXPECT_TRUE(run.done) << to_string(protocol) << " " << at;
      EXPECT_TRUE(run.has(HazardKind::value_mismatch)) << to_string(protocol) << " " << at << "\n" << run.describe();
      // Every rank rolls alike: the values agree, they are only not the reference's.
      EXPECT_FALSE(run.has(HazardKind::replica_divergence)) << to_string(protocol) << " " << at << "\n" << run.describe();
      EXPECT_FALSE(run.has(HazardKind::collective_mismatch)) << to_string(protocol) << " " << at << "\n" << run.describe();
      EXPECT_FALSE(run.has(HazardKind::data_race)) << to_string(protocol) << " " << at << "\n" << run.describe();
    }
  }
}

TEST(Recompute, a_recompute_that_registers_nothing_is_proven_clean_in_the_small_shape) {
  Settings settings = recomputing("skip");
  settings.insert(settings.end(), {{"modules", "1"}, {"microbatches", "1"}, {"buckets", "1"}, {"fwd-tensors", "1"}});
  for (ProtocolName protocol : {ProtocolName::te_sync, ProtocolName::te_async}) {
    expect_proven_clean(knobs_of(protocol, settings));
  }
}

TEST(Recompute, registering_again_without_a_recompute_or_outside_dynamic_keyed_slots_is_an_input_error) {
  EXPECT_THROW(build_protocol(knobs_of(ProtocolName::te_sync, {{"recompute-amax", "register"}})), InputError);
  Settings settings = recomputing("register");
  settings.emplace_back("registration", "static");
  EXPECT_THROW(build_protocol(knobs_of(ProtocolName::te_sync, settings)), InputError);
  EXPECT_THROW(build_protocol(knobs_of(ProtocolName::current_scaling, recomputing("register"))), InputError);
}

}  // namespace
}  // namespace amaxcheck
