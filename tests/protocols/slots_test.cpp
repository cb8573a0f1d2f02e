// How a module finds its slot in an autocast's global buffer (--slots) when a module is called
// twice in one autocast (--repeat), tested both ways against the sequential reference, whose
// amax for a repeated module is the max over both calls: keyed slots (one per module, both calls
// maxed into it) are clean; positional slots (one per call, read back at the position the
// module's first registration got) shift once an autocast calls a module a second time, and the
// modules after it copy back their neighbours' amaxes.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/fp8_math.h"
#include "protocols/reference_model.h"
#include "protocols/schedule.h"
#include "proven_clean.h"
#include "run_protocol.h"
#include "util/check.h"

namespace amaxcheck {
namespace {

using testing::expect_proven_clean;
using testing::knobs_of;
using testing::run_protocol;

using Settings = std::vector<std::pair<std::string, std::string>>;

/// Module `rule` of three is called twice (in the iteration the rule names), on every rank.
Settings repeated(const char* rule, const char* slots) {
  return {{"dp", "2"}, {"modules", "3"}, {"microbatches", "1"}, {"repeat", rule}, {"slots", slots}};
}

std::vector<std::uint32_t> reduction_sizes(const Scenario& s, RankId rank) {
  std::vector<std::uint32_t> sizes;
  for (const Thread& thread : s.ranks[rank].threads) {
    for (const Op& op : thread.program) {
      if (op.name.rfind("amax_reduce_", 0) == 0) sizes.push_back(op.reads.at(0).count);
    }
  }
  return sizes;
}

TEST(Slots, the_default_is_keyed_slots_and_no_repeated_module) {
  EXPECT_EQ(ProtocolKnobs{}.slots, SlotKey::keyed);
  EXPECT_TRUE(ProtocolKnobs{}.repeats.empty());
}

TEST(Slots, a_later_call_quantizes_inputs_of_its_own) {
  ProtocolKnobs k = knobs_of(ProtocolName::te_sync, repeated("0", "keyed"));
  EXPECT_EQ(module_calls(k, 0, 0), 2u);
  EXPECT_EQ(module_calls(k, 0, 1), 1u);
  EXPECT_NE(tensor_values(k, 0, 0, 0, Direction::forward, 0, 1), tensor_values(k, 0, 0, 0, Direction::forward, 0, 0));
  EXPECT_EQ(tensor_values(k, 0, 0, 0, Direction::forward, 0), tensor_values(k, 0, 0, 0, Direction::forward, 0, 0));
}

TEST(Slots, the_reference_registers_the_max_over_both_calls) {
  ProtocolKnobs k = knobs_of(ProtocolName::te_sync, repeated("0", "keyed"));
  k.iters = 1;
  const ReferenceResult ref = run_reference_model(k);
  for (std::uint32_t t = 0; t < k.fwd_tensors; ++t) {
    float amax = 0.0f;
    for (RankId r : {0u, 1u}) {
      for (std::uint32_t call : {0u, 1u}) {
        amax = std::fmax(amax, abs_max(tensor_values(k, r, 0, 0, Direction::forward, t, call)));
      }
    }
    // A history of 2 rolled once: the autocast's amax is in row 1.
    EXPECT_EQ(ref.at(0, Direction::forward, 0).amax_history.at(k.fwd_tensors + t), amax) << t;
  }
}

TEST(Slots, keyed_slots_give_a_repeated_module_one_slot) {
  const Scenario once = build_protocol(knobs_of(ProtocolName::te_sync, {{"dp", "2"}, {"modules", "3"}, {"microbatches", "1"}}));
  const Scenario twice = build_protocol(knobs_of(ProtocolName::te_sync, repeated("1", "keyed")));
  EXPECT_EQ(reduction_sizes(twice, 0), reduction_sizes(once, 0));
  const Scenario positional = build_protocol(knobs_of(ProtocolName::te_sync, repeated("1", "positional")));
  EXPECT_EQ(reduction_sizes(positional, 0).front(), reduction_sizes(once, 0).front() + 2);  // + 2 forward tensors
}

TEST(Slots, keyed_slots_are_clean_and_match_the_reference_for_a_repeated_module) {
  for (ProtocolName protocol : {ProtocolName::te_sync, ProtocolName::te_async}) {
    for (const char* rule : {"0", "1:1", "2:0"}) {
      for (const char* registration : {"dynamic", "static"}) {
        Settings settings = repeated(rule, "keyed");
        settings.emplace_back("registration", registration);
        settings.emplace_back("recompute", "on");
        const auto run = run_protocol(knobs_of(protocol, settings));
        EXPECT_TRUE(run.done) << to_string(protocol) << " " << rule << " " << registration;
        EXPECT_TRUE(run.hazards.empty()) << to_string(protocol) << " " << rule << " " << registration << "\n"
                                         << run.describe();
      }
    }
  }
}

TEST(Slots, keyed_slots_are_proven_clean_in_the_small_shape) {
  Settings settings = repeated("0:1", "keyed");
  settings.insert(settings.end(), {{"modules", "2"}, {"buckets", "1"}, {"fwd-tensors", "1"}});
  for (ProtocolName protocol : {ProtocolName::te_sync, ProtocolName::te_async}) {
    expect_proven_clean(knobs_of(protocol, settings));
  }
}

TEST(Slots, positional_slots_shift_when_a_later_iteration_calls_a_module_twice) {
  // Iteration 0 fixes module 1's slot at 1; in iteration 1 module 0's second call takes it.
  for (ProtocolName protocol : {ProtocolName::te_sync, ProtocolName::te_async}) {
    const auto run = run_protocol(knobs_of(protocol, repeated("0:1", "positional")));
    EXPECT_TRUE(run.done) << to_string(protocol);
    EXPECT_TRUE(run.has(HazardKind::value_mismatch)) << to_string(protocol) << "\n" << run.describe();
    EXPECT_FALSE(run.has(HazardKind::collective_mismatch)) << to_string(protocol) << "\n" << run.describe();
  }
}

TEST(Slots, positional_slots_lose_the_second_calls_amax) {
  // Called twice in every iteration: the positions are stable, but the module reads back only
  // its first call's slot.
  const auto run = run_protocol(knobs_of(ProtocolName::te_sync, repeated("2", "positional")));
  EXPECT_TRUE(run.done);
  EXPECT_TRUE(run.has(HazardKind::value_mismatch)) << run.describe();
}

TEST(Slots, positional_slots_without_a_repeated_module_are_the_keyed_program) {
  const auto keyed = run_protocol(knobs_of(ProtocolName::te_async, {{"dp", "2"}, {"modules", "3"}}));
  const auto positional = run_protocol(knobs_of(ProtocolName::te_async, {{"dp", "2"}, {"modules", "3"}, {"slots", "positional"}}));
  EXPECT_TRUE(positional.hazards.empty()) << positional.describe();
  EXPECT_EQ(positional.steps, keyed.steps);
  EXPECT_EQ(reduction_sizes(positional.scenario, 1), reduction_sizes(keyed.scenario, 1));
}

TEST(Slots, a_positional_slot_past_the_end_of_a_later_buffer_is_an_input_error) {
  // Iteration 0 fixes module 2's slot at 3; iteration 1's buffer has 3 slots.
  try {
    build_protocol(knobs_of(ProtocolName::te_sync, repeated("0:0", "positional")));
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--slots positional"), std::string::npos) << e.what();
  }
}

TEST(Slots, knob_combinations_that_mean_nothing_are_input_errors) {
  EXPECT_THROW(build_protocol(knobs_of(ProtocolName::te_sync, {{"slots", "positional"}, {"registration", "static"}})),
               InputError);
  EXPECT_THROW(build_protocol(knobs_of(ProtocolName::current_scaling, {{"repeat", "0"}})), InputError);
  EXPECT_THROW(build_protocol(knobs_of(ProtocolName::te_sync, {{"repeat", "5"}})), InputError);
  EXPECT_THROW(build_protocol(knobs_of(ProtocolName::te_sync, {{"repeat", "0:7"}})), InputError);
}

}  // namespace
}  // namespace amaxcheck
