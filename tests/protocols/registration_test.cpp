// How modules take amax slots (--registration) and what a module that did not register gets
// (--unrun), tested both ways against the sequential reference: a module skipped on part of its
// amax group mismatches the reduction under dynamic registration, diverges under static slots
// that only update the modules that ran, and is clean under static slots that update every slot.
#include <gtest/gtest.h>

#include "proven_clean.h"
#include "run_protocol.h"

namespace amaxcheck {
namespace {

using testing::expect_proven_clean;
using testing::knobs_of;
using testing::run_protocol;

using Settings = std::vector<std::pair<std::string, std::string>>;

/// Module 1 is skipped on rank 1 in iteration 1 (an MoE expert that got no tokens there).
Settings skipped_on_rank_1(const char* registration, const char* unrun) {
  return {{"dp", "2"}, {"modules", "2"}, {"microbatches", "1"}, {"skip", "1:1:1"},
          {"registration", registration}, {"unrun", unrun}};
}

/// The amax reductions' element counts on `rank`, in program order.
std::vector<std::uint32_t> reduction_sizes(const Scenario& s, RankId rank) {
  std::vector<std::uint32_t> sizes;
  for (const Thread& thread : s.ranks[rank].threads) {
    for (const Op& op : thread.program) {
      if (op.name.rfind("amax_reduce_", 0) == 0) sizes.push_back(op.reads.at(0).count);
    }
  }
  return sizes;
}

TEST(Registration, the_defaults_are_dynamic_registration_and_updating_every_static_slot) {
  EXPECT_EQ(ProtocolKnobs{}.registration, Registration::dynamic);
  EXPECT_EQ(ProtocolKnobs{}.unrun, UnrunUpdate::update);
}

TEST(Registration, dynamic_registration_shrinks_the_skipping_ranks_buffer_and_its_reduction_mismatches) {
  const auto run = run_protocol(knobs_of(ProtocolName::te_sync, skipped_on_rank_1("dynamic", "update")));
  EXPECT_NE(reduction_sizes(run.scenario, 0), reduction_sizes(run.scenario, 1));
  EXPECT_TRUE(run.has(HazardKind::collective_mismatch)) << run.describe();
}

TEST(Registration, static_slots_keep_every_buffer_the_same_size) {
  for (const char* unrun : {"update", "keep"}) {
    const Scenario s = build_protocol(knobs_of(ProtocolName::te_sync, skipped_on_rank_1("static", unrun)));
    EXPECT_EQ(reduction_sizes(s, 0), reduction_sizes(s, 1)) << unrun;
    EXPECT_EQ(reduction_sizes(s, 0).front(), 4u) << unrun;  // 2 modules x 2 forward tensors
  }
}

TEST(Registration, static_slots_that_update_only_the_modules_that_ran_leave_the_skipping_rank_behind) {
  const auto run = run_protocol(knobs_of(ProtocolName::te_sync, skipped_on_rank_1("static", "keep")));
  EXPECT_TRUE(run.done);
  EXPECT_FALSE(run.has(HazardKind::collective_mismatch)) << run.describe();
  EXPECT_TRUE(run.has(HazardKind::replica_divergence)) << run.describe();
}

TEST(Registration, static_slots_that_update_every_slot_are_clean_and_match_the_reference) {
  for (ProtocolName protocol : {ProtocolName::te_sync, ProtocolName::te_async}) {
    for (const char* at : {"exit", "next-entry", "first-module"}) {
      Settings settings = skipped_on_rank_1("static", "update");
      settings.emplace_back("reduce-at", at);
      settings.emplace_back("tp", "2");
      settings.emplace_back("skip", "0:0");  // and rank 0 never runs module 0
      const auto run = run_protocol(knobs_of(protocol, settings));
      EXPECT_TRUE(run.done) << to_string(protocol) << " " << at;
      EXPECT_TRUE(run.hazards.empty()) << to_string(protocol) << " " << at << "\n" << run.describe();
    }
  }
}

TEST(Registration, static_slots_that_update_every_slot_are_proven_clean_in_the_small_shape) {
  Settings settings = skipped_on_rank_1("static", "update");
  settings.insert(settings.end(), {{"buckets", "1"}, {"fwd-tensors", "1"}, {"iters", "2"}});
  for (ProtocolName protocol : {ProtocolName::te_sync, ProtocolName::te_async}) {
    expect_proven_clean(knobs_of(protocol, settings));
  }
}

TEST(Registration, evaluation_mode_and_frozen_modules_keep_their_static_slots_and_are_clean) {
  for (const char* unrun : {"update", "keep"}) {
    const auto run = run_protocol(knobs_of(ProtocolName::te_sync, {{"tp", "2"}, {"modules", "3"}, {"eval", "1:1"},
                                                                   {"frozen", "0"}, {"registration", "static"}, {"unrun", unrun}}));
    EXPECT_TRUE(run.done) << unrun;
    EXPECT_TRUE(run.hazards.empty()) << unrun << "\n" << run.describe();
  }
}

TEST(Registration, a_rank_whose_modules_all_skip_still_joins_the_static_reduction) {
  const auto run = run_protocol(knobs_of(ProtocolName::te_sync, {{"dp", "2"}, {"modules", "2"}, {"skip", "1:0:0"},
                                                                 {"skip", "1:1:0"}, {"registration", "static"}}));
  EXPECT_TRUE(run.done);
  EXPECT_TRUE(run.hazards.empty()) << run.describe();
  const auto dynamic = run_protocol(knobs_of(ProtocolName::te_sync, {{"dp", "2"}, {"modules", "2"}, {"skip", "1:0:0"},
                                                                     {"skip", "1:1:0"}}));
  EXPECT_TRUE(dynamic.has(HazardKind::collective_mismatch) || dynamic.has(HazardKind::unjoined_collective) ||
              dynamic.has(HazardKind::deadlock))
      << dynamic.describe();
}

}  // namespace
}  // namespace amaxcheck
