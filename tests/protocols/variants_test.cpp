// Framework variants selected by knob, each tested both ways: the variant that shipped with a
// bug is reported with its hazard kind, its fixed twin is clean. The oracle is the layout and
// the sequential reference (an empty input's local amax is 0), never the variant.
#include <gtest/gtest.h>

#include "run_protocol.h"
#include "util/check.h"

namespace amaxcheck {
namespace {

using testing::knobs_of;
using testing::run_protocol;

TEST(EmptyInput, a_current_scaling_quantizer_that_joins_with_amax_zero_is_clean_and_matches_the_reference) {
  for (const char* rule : {"1:0", "1:1:1", "0:0:0"}) {
    const auto run = run_protocol(knobs_of(ProtocolName::current_scaling, {{"tp", "2"}, {"dp", "1"}, {"empty", rule}}));
    EXPECT_TRUE(run.done) << rule;
    EXPECT_TRUE(run.hazards.empty()) << rule << "\n" << run.describe();
  }
}

TEST(EmptyInput, a_current_scaling_quantizer_that_returns_early_leaves_its_tp_peers_in_the_all_reduce) {
  const auto run = run_protocol(
      knobs_of(ProtocolName::current_scaling, {{"tp", "2"}, {"dp", "1"}, {"empty", "1:0:1"}, {"empty-quantize", "return-early"}}));
  EXPECT_FALSE(run.done);
  EXPECT_TRUE(run.has(HazardKind::unjoined_collective) || run.has(HazardKind::deadlock)) << run.describe();
}

TEST(EmptyInput, the_default_is_to_join) { EXPECT_EQ(ProtocolKnobs{}.empty_quantize, EmptyQuantize::join); }

TEST(EmptyInput, delayed_scaling_registers_an_amax_of_zero_for_an_empty_input) {
  const auto run = run_protocol(knobs_of(ProtocolName::te_sync, {{"tp", "2"}, {"dp", "2"}, {"empty", "3:1"}}));
  EXPECT_TRUE(run.done);
  EXPECT_TRUE(run.hazards.empty()) << run.describe();
}

TEST(EmptyInput, an_empty_rule_outside_the_layout_is_an_input_error) {
  EXPECT_THROW(build_protocol(knobs_of(ProtocolName::current_scaling, {{"empty", "9:0"}})), InputError);
  EXPECT_THROW(build_protocol(knobs_of(ProtocolName::current_scaling, {{"empty", "0:5"}})), InputError);
}

}  // namespace
}  // namespace amaxcheck
