// How modules take amax slots (--registration) and what a module that did not register gets
// (--unrun), tested both ways against the sequential reference: a module skipped on part of its
// amax group mismatches the reduction under dynamic registration, diverges under static slots
// that only update the modules that ran, and is clean under static slots that update every slot.
// Static slots are taken at a module's first forward on the rank, in first-run order (TE v1.6+'s
// add_fp8_tensors_to_global_buffer): a module that first runs later on one rank than on its peers
// mismatches the buffers' sizes, and ranks that first ran the modules in different orders mix them.
#include <gtest/gtest.h>

#include "protocols/reference_model.h"
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
      // and no rank runs module 0 in iteration 0: every rank first runs module 1, so module 0
      // takes slot 1 on all of them alike
      for (const char* skip : {"0:0:0", "1:0:0", "2:0:0", "3:0:0"}) settings.emplace_back("skip", skip);
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

TEST(Registration, a_rank_whose_modules_all_skip_after_they_ran_still_joins_the_static_reduction) {
  const auto run = run_protocol(knobs_of(ProtocolName::te_sync, {{"dp", "2"}, {"modules", "2"}, {"skip", "1:0:1"},
                                                                 {"skip", "1:1:1"}, {"registration", "static"}}));
  EXPECT_TRUE(run.done);
  EXPECT_TRUE(run.hazards.empty()) << run.describe();
  // Before its modules' first forward the rank has no slots at all: its peers reduce alone.
  const auto early = run_protocol(knobs_of(ProtocolName::te_sync, {{"dp", "2"}, {"modules", "2"}, {"skip", "1:0:0"},
                                                                   {"skip", "1:1:0"}, {"registration", "static"}}));
  EXPECT_FALSE(early.done);
  EXPECT_TRUE(early.has(HazardKind::unjoined_collective) || early.has(HazardKind::deadlock) ||
              early.has(HazardKind::collective_mismatch))
      << early.describe();
  const auto dynamic = run_protocol(knobs_of(ProtocolName::te_sync, {{"dp", "2"}, {"modules", "2"}, {"skip", "1:0:0"},
                                                                     {"skip", "1:1:0"}}));
  EXPECT_TRUE(dynamic.has(HazardKind::collective_mismatch) || dynamic.has(HazardKind::unjoined_collective) ||
              dynamic.has(HazardKind::deadlock))
      << dynamic.describe();
}

// The audit's command: rank 1 skips module 1 in iteration 0, so its buffers hold one module's
// slots against its peer's two until module 1 first runs there.
TEST(StaticRegistration, a_module_first_run_later_on_one_rank_mismatches_the_buffer_sizes) {
  const ProtocolKnobs knobs = knobs_of(ProtocolName::te_sync, {{"registration", "static"}, {"skip", "1:1:0"}, {"dp", "2"},
                                                                {"modules", "2"}, {"iters", "2"}, {"microbatches", "1"},
                                                                {"buckets", "1"}});
  const Scenario s = build_protocol(knobs);
  // Forward reductions (main thread), then backward ones (autograd), per iteration: 2 modules x 2
  // forward tensors, 2 modules x 1 backward tensor; rank 1's module 1 joins in iteration 1.
  EXPECT_EQ(reduction_sizes(s, 0), (std::vector<std::uint32_t>{4, 4, 2, 2}));
  EXPECT_EQ(reduction_sizes(s, 1), (std::vector<std::uint32_t>{2, 4, 1, 2}));
  EXPECT_TRUE(testing::search_exhaustively(knobs).hazards.size() > 0);
  const auto run = run_protocol(knobs);
  EXPECT_TRUE(run.has(HazardKind::collective_mismatch)) << run.describe();
  EXPECT_FALSE(run_reference_model(knobs).at(0, Direction::forward, 0).defined);  // a mismatched reduction has no value
}

TEST(StaticRegistration, ranks_that_first_ran_the_modules_in_different_orders_mix_their_amaxes) {
  // Iteration 0: rank 0 runs module 0 only, rank 1 module 1 only; from then on rank 0's slots are
  // [m0, m1] and rank 1's [m1, m0]: equal sizes, so the all-reduce matches and maxes m0 with m1.
  const ProtocolKnobs knobs = knobs_of(ProtocolName::te_sync, {{"registration", "static"}, {"skip", "1:0:0"}, {"skip", "0:1:0"},
                                                                {"dp", "2"}, {"modules", "2"}, {"microbatches", "1"}});
  const Scenario s = build_protocol(knobs);
  EXPECT_EQ(reduction_sizes(s, 0), reduction_sizes(s, 1));
  const auto run = run_protocol(knobs);
  EXPECT_TRUE(run.done);
  EXPECT_FALSE(run.has(HazardKind::collective_mismatch)) << run.describe();
  EXPECT_TRUE(run.has(HazardKind::replica_divergence)) << run.describe();
  // The reference claims no value for a mix of slots; the divergence is the report.
  const ReferenceResult ref = run_reference_model(knobs);
  for (RankId r : {0u, 1u}) EXPECT_FALSE(ref.at(r, Direction::forward, 1).defined) << r;
}

TEST(StaticRegistration, a_module_every_rank_first_runs_late_takes_the_same_later_slot_everywhere_and_is_clean) {
  const ProtocolKnobs knobs = knobs_of(ProtocolName::te_sync, {{"registration", "static"}, {"skip", "0:0:0"}, {"skip", "1:0:0"},
                                                                {"dp", "2"}, {"modules", "2"}, {"microbatches", "1"}});
  const auto run = run_protocol(knobs);
  EXPECT_TRUE(run.done);
  EXPECT_TRUE(run.hazards.empty()) << run.describe();
  EXPECT_TRUE(run_reference_model(knobs).at(0, Direction::forward, 0).defined);
}

}  // namespace
}  // namespace amaxcheck
