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

// Known engine portability issue, reported to the lead: the sign of fmax(-0, +0) is
// unspecified, and GCC's inlined std::fmax (at -O2) returns the first operand where libm's
// returns the second, so a max reduction of signed zeros depends on the member order and on the
// build. A trace recorded in one build can then diverge ("-0" vs "0") when replayed in another.
// Run with --gtest_also_run_disabled_tests.
RC_GTEST_PROP(EngineModel, DISABLED_a_max_all_reduce_gives_the_same_zero_whatever_the_member_order, ()) {
  check_max_all_reduce_zero_is_order_independent();
}

}  // namespace
}  // namespace amaxcheck::props
