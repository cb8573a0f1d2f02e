// Property 6: scale-update edge cases through the engine's scale_update op.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "scale_update_check.h"

namespace amaxcheck::props {
namespace {

RC_GTEST_PROP(ScaleUpdate, the_engine_writes_the_history_scale_and_scale_inv_of_the_sequential_reference, ()) {
  check_scale_update_matches_reference();
}

RC_GTEST_PROP(ScaleUpdate, a_zero_negative_infinite_or_nan_amax_keeps_the_previous_scale, ()) {
  check_bad_amax_keeps_the_scale();
}

RC_GTEST_PROP(ScaleUpdate, a_scale_that_overflows_clamps_to_flt_max, ()) { check_overflowing_scale_clamps_to_flt_max(); }

RC_GTEST_PROP(ScaleUpdate, the_e4m3_and_e5m2_maxima_are_448_and_57344, ()) { check_format_maxima(); }

RC_GTEST_PROP(ScaleUpdate, the_margin_divides_the_scale_by_exactly_two_to_the_margin, ()) {
  check_margin_is_a_power_of_two();
}

// TransformerEngine reduces the window of `max` with torch.max, which propagates NaN (so the
// scale is kept); the engine and the GPU kernel do the same.
RC_GTEST_PROP(ScaleUpdate, a_nan_anywhere_in_a_max_window_keeps_the_previous_scale_like_torch_max, ()) {
  check_nan_in_a_max_window_keeps_the_scale();
}

}  // namespace
}  // namespace amaxcheck::props
