// Property 5: the engine against a simple sequential model of streams, events and
// communicators, with rc::state (see engine_model_check.h).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "engine_model_check.h"

namespace amaxcheck::props {
namespace {

RC_GTEST_PROP(EngineModel, the_engine_and_a_sequential_stream_model_agree_on_enabled_actions_values_and_the_end, ()) {
  check_engine_against_model();
}

// The same, the engine asked for no Step at all, as random and PCT runs ask: its steps take the
// lean form, which records nothing and tests no option (engine_apply.cpp).
RC_GTEST_PROP(EngineModel, the_lean_engine_and_the_model_agree_too, ()) {
  check_engine_against_model(EngineOptions{Mutant::none, 16, StepDetail{false, false, false, false}});
}

// Ranks of 63 to 66 lanes (1-2 threads, 62-64 streams): the enabled list keeps per-lane bits up
// to 64 lanes a rank and re-asks a wider rank whole, so both sides of that edge, and ops on the
// highest lanes, are checked, full and lean.
RC_GTEST_PROP(EngineModel, ranks_of_64_lanes_and_more_agree_with_the_model_too, ()) {
  const auto streams = *rc::gen::element<StreamId>(62, 63, 64);
  const StepDetail detail = *rc::gen::element(StepDetail{}, StepDetail{false, false, false, false});
  check_engine_against_model(EngineOptions{Mutant::none, 16, detail}, ProgramShape{streams, 2, 3});
}

// 8 to 11 ranks: the enabled list finds the blocks of the first 8 ranks by counting the actions
// before them, and those of later ranks by a binary search (enabled_set.cpp, block_start).
RC_GTEST_PROP(EngineModel, programs_of_8_to_11_ranks_agree_with_the_model_too, ()) {
  const StepDetail detail = *rc::gen::element(StepDetail{}, StepDetail{false, false, false, false});
  check_engine_against_model(EngineOptions{Mutant::none, 16, detail}, ProgramShape{2, 8, 11});
}

// The sign of fmax(-0, +0) is unspecified (GCC's inlined std::fmax and libm's differ), so the
// engine's MAX reduction gives +0 for equal operands: the result must not depend on member order.
RC_GTEST_PROP(EngineModel, a_max_all_reduce_gives_the_same_zero_whatever_the_member_order, ()) {
  check_max_all_reduce_zero_is_order_independent();
}

}  // namespace
}  // namespace amaxcheck::props
