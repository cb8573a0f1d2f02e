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

}  // namespace
}  // namespace amaxcheck::props
