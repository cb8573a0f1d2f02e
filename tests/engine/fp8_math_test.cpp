#include "engine/fp8_math.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <limits>
#include <vector>

namespace amaxcheck {
namespace {

TEST(Fp8Math, format_maxima_are_448_for_e4m3_and_57344_for_e5m2) {
  EXPECT_EQ(fp8_max(Fp8Format::e4m3), 448.0f);
  EXPECT_EQ(fp8_max(Fp8Format::e5m2), 57344.0f);
}

TEST(Fp8Math, rounding_is_to_nearest_even_and_saturates) {
  EXPECT_EQ(round_to_fp8(1.0625f, Fp8Format::e4m3), 1.0f);    // halfway between 1 and 1.125 -> even
  EXPECT_EQ(round_to_fp8(1.1875f, Fp8Format::e4m3), 1.25f);   // halfway between 1.125 and 1.25 -> even
  EXPECT_EQ(round_to_fp8(1000.0f, Fp8Format::e4m3), 448.0f);
  EXPECT_EQ(round_to_fp8(-1e9f, Fp8Format::e5m2), -57344.0f);
  EXPECT_EQ(round_to_fp8(std::ldexp(1.0f, -9), Fp8Format::e4m3), std::ldexp(1.0f, -9));  // smallest subnormal
  EXPECT_TRUE(std::isnan(round_to_fp8(NAN, Fp8Format::e4m3)));
}

ScaleUpdateParams params(std::uint32_t history, HistoryAlgo algo, int margin = 0) {
  return ScaleUpdateParams{1, history, algo, margin, Fp8Format::e4m3};
}

TEST(Fp8Math, scale_is_fp8_max_over_amax_divided_by_two_to_the_margin) {
  std::vector<float> hist{4.0f}, scale{1.0f}, inv{1.0f};
  amax_and_scale_update(params(1, HistoryAlgo::max, 2), hist, scale, inv);
  EXPECT_EQ(scale[0], 448.0f / 4.0f / 4.0f);
  EXPECT_EQ(inv[0], 1.0f / scale[0]);
  EXPECT_EQ(hist[0], 0.0f);
}

TEST(Fp8Math, zero_infinite_and_nan_amax_keep_the_previous_scale) {
  for (float amax : {0.0f, INFINITY, NAN}) {
    std::vector<float> hist{amax}, scale{3.0f}, inv{0.0f};
    amax_and_scale_update(params(1, HistoryAlgo::most_recent), hist, scale, inv);
    EXPECT_EQ(scale[0], 3.0f) << amax;
    EXPECT_EQ(inv[0], 1.0f / 3.0f);
  }
}

TEST(Fp8Math, an_infinite_scale_clamps_to_flt_max) {
  std::vector<float> hist{std::numeric_limits<float>::denorm_min()}, scale{1.0f}, inv{1.0f};
  amax_and_scale_update(params(1, HistoryAlgo::max), hist, scale, inv);
  EXPECT_EQ(scale[0], FLT_MAX);
}

TEST(Fp8Math, max_algo_reduces_the_window_and_the_history_rolls_like_torch_roll_minus_one) {
  std::vector<float> hist{2.0f, 8.0f, 4.0f}, scale{1.0f}, inv{1.0f};
  amax_and_scale_update(params(3, HistoryAlgo::max), hist, scale, inv);
  EXPECT_EQ(scale[0], 448.0f / 8.0f);
  EXPECT_EQ(hist, (std::vector<float>{0.0f, 4.0f, 2.0f}));
  std::vector<float> hist2{2.0f, 8.0f, 4.0f};
  amax_and_scale_update(params(3, HistoryAlgo::most_recent), hist2, scale, inv);
  EXPECT_EQ(scale[0], 448.0f / 2.0f);
}

}  // namespace
}  // namespace amaxcheck
