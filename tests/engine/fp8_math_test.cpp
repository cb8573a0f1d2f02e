#include "engine/fp8_math.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace amaxcheck {
namespace {

/// round_to_fp8 as it was written before it became bit manipulation (issue 19): libm's ilogb,
/// ldexp and rint. The oracle the exact version is compared with.
float reference_round_to_fp8(float value, Fp8Format format) {
  if (std::isnan(value)) return value;
  const float max = format == Fp8Format::e4m3 ? 448.0f : 57344.0f;
  if (std::isinf(value)) return std::copysign(max, value);
  if (value == 0.0f) return value;
  const int mantissa_bits = format == Fp8Format::e4m3 ? 3 : 2;
  const int min_normal_exp = format == Fp8Format::e4m3 ? -6 : -14;
  const int exp = std::max(std::ilogb(value), min_normal_exp);
  const float quantum = std::ldexp(1.0f, exp - mantissa_bits);
  const float rounded = std::rint(value / quantum) * quantum;
  return std::fabs(rounded) > max ? std::copysign(max, value) : rounded;
}

/// abs_max as it was before issue 19, amax = std::fmax(amax, std::fabs(v)) from +0, as the
/// compiler emitted it: a call of libm's fmaxf with the operands swapped, fmaxf(|v|, amax). Called
/// through a pointer here so that this compiler cannot choose the order again (it decides which
/// NaN comes out when both are NaN, and a signaling NaN's effect).
float (*volatile libm_fmaxf)(float, float) = ::fmaxf;
float reference_abs_max(const std::vector<float>& values) {
  float amax = 0.0f;
  for (float v : values) amax = libm_fmaxf(std::fabs(v), amax);
  return amax;
}

std::uint32_t bits(float f) { return std::bit_cast<std::uint32_t>(f); }

/// Low bits for the sweep below: none, all, each alone, all but each.
std::vector<std::uint32_t> low_bit_patterns(int width) {
  const std::uint32_t all = (std::uint32_t{1} << width) - 1;
  std::vector<std::uint32_t> patterns{0, all};
  for (int k = 0; k < width; ++k) {
    patterns.push_back(std::uint32_t{1} << k);
    patterns.push_back(all ^ (std::uint32_t{1} << k));
  }
  return patterns;
}

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

// Exhaustive in what decides the result. A float32 rounds to FP8 at a step of 2^-20 of its
// leading bit or coarser (E4M3 keeps 3 mantissa bits, E5M2 2; below the smallest normal the step
// stays put, so fewer are kept), so the half-step bit is bit 19 or above; the bits under it only
// count through whether any is set. The sweep takes every value of bits 31..12 (sign, exponent,
// every kept bit, the half-step bit and seven bits under it) and, for bits 11..0, none, all,
// each alone and all but each: every float32 class of both formats, compared bit for bit (NaN
// payloads, the sign of zero). 2 x 2^20 x 26 values, about a second.
TEST(Fp8Math, round_to_fp8_matches_the_libm_reference_bit_for_bit_over_every_rounding_class) {
  const std::vector<std::uint32_t> lows = low_bit_patterns(12);
  for (Fp8Format format : {Fp8Format::e4m3, Fp8Format::e5m2}) {
    std::uint64_t mismatches = 0;
    for (std::uint32_t high = 0; high < (std::uint32_t{1} << 20); ++high) {
      for (std::uint32_t low : lows) {
        const float value = std::bit_cast<float>((high << 12) | low);
        const std::uint32_t got = bits(round_to_fp8(value, format));
        const std::uint32_t want = bits(reference_round_to_fp8(value, format));
        if (got != want && ++mismatches <= 5) {
          ADD_FAILURE() << enum_name(format) << " input 0x" << std::hex << bits(value) << " gave 0x" << got
                        << ", expected 0x" << want;
        }
      }
    }
    EXPECT_EQ(mismatches, 0u) << enum_name(format);
  }
}

TEST(Fp8Math, round_to_fp8_edge_values) {
  const float max = std::numeric_limits<float>::max(), inf = INFINITY;
  EXPECT_EQ(bits(round_to_fp8(-0.0f, Fp8Format::e4m3)), bits(-0.0f));
  EXPECT_EQ(bits(round_to_fp8(-std::ldexp(1.0f, -11), Fp8Format::e4m3)), bits(-0.0f));  // a quarter step
  EXPECT_EQ(round_to_fp8(std::ldexp(1.0f, -10), Fp8Format::e4m3), 0.0f);  // half the smallest step: even
  EXPECT_EQ(round_to_fp8(std::ldexp(3.0f, -10), Fp8Format::e4m3), std::ldexp(1.0f, -8));  // 1.5 steps: 2
  EXPECT_EQ(round_to_fp8(std::ldexp(15.5f, -10), Fp8Format::e4m3), std::ldexp(1.0f, -6));  // to the smallest normal
  EXPECT_EQ(round_to_fp8(std::numeric_limits<float>::denorm_min(), Fp8Format::e5m2), 0.0f);
  EXPECT_EQ(round_to_fp8(max, Fp8Format::e4m3), 448.0f);
  EXPECT_EQ(round_to_fp8(-inf, Fp8Format::e5m2), -57344.0f);
  EXPECT_EQ(round_to_fp8(464.0f, Fp8Format::e4m3), 448.0f);  // 448 + half a step rounds to even: 448
  EXPECT_EQ(round_to_fp8(61439.0f, Fp8Format::e5m2), 57344.0f);
  const float nan = std::bit_cast<float>(0xFFC12345u);  // negative, with a payload
  EXPECT_EQ(bits(round_to_fp8(nan, Fp8Format::e5m2)), 0xFFC12345u);
}

TEST(Fp8Math, cast_to_fp8_is_round_to_fp8_of_each_scaled_value_also_in_place) {
  std::vector<float> in;
  for (std::uint32_t i = 0; i < 4096; ++i) in.push_back(std::bit_cast<float>(i * 0x000FFFF1u + 0x3A000000u));
  in.insert(in.end(), {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-40f, -1e-40f});
  for (Fp8Format format : {Fp8Format::e4m3, Fp8Format::e5m2}) {
    for (float scale : {1.0f, 0.75f, 3e5f}) {
      std::vector<float> out(in.size()), in_place = in;
      cast_to_fp8(in, scale, out, format);
      cast_to_fp8(in_place, scale, in_place, format);
      for (std::size_t i = 0; i < in.size(); ++i) {
        const std::uint32_t want = bits(round_to_fp8(in[i] * scale, format));
        ASSERT_EQ(bits(out[i]), want) << enum_name(format) << " x" << scale << " at " << i;
        ASSERT_EQ(bits(in_place[i]), want) << enum_name(format) << " x" << scale << " in place at " << i;
      }
    }
  }
}

TEST(Fp8Math, abs_max_matches_fmax_of_fabs_ignoring_nan) {
  const float nan = NAN, inf = INFINITY, tiny = std::numeric_limits<float>::denorm_min();
  const std::vector<std::vector<float>> cases{
      {}, {-0.0f}, {nan}, {-nan, -0.0f}, {nan, -3.0f, 2.0f}, {-inf, 1.0f}, {tiny, -tiny}, {-2.0f, nan, inf, -5.0f},
      {1.0f, -1.0f, 0.5f}, {-FLT_MAX, FLT_MAX}};
  const float quiet_a = std::bit_cast<float>(0xFFC00011u), quiet_b = std::bit_cast<float>(0x7FC00022u);
  const float signaling_a = std::bit_cast<float>(0xFF800033u), signaling_b = std::bit_cast<float>(0x7F800044u);
  std::vector<std::vector<float>> nan_cases;
  const std::vector<float> pool{quiet_a, quiet_b, signaling_a, signaling_b, 2.0f, -7.0f, 0.0f, inf};
  for (float a : pool) {  // every ordered triple: what a NaN does to the running max, and after it
    for (float b : pool) {
      for (float c : pool) nan_cases.push_back({a, b, c});
    }
  }
  for (const auto& values : nan_cases) EXPECT_EQ(bits(abs_max(values)), bits(reference_abs_max(values)));
  for (const auto& values : cases) EXPECT_EQ(bits(abs_max(values)), bits(reference_abs_max(values)));
  std::vector<float> sweep;
  for (std::uint32_t i = 0; i < 100000; ++i) sweep.push_back(std::bit_cast<float>(i * 2654435761u));
  for (std::size_t n = 1; n <= sweep.size(); n *= 7) {
    const std::vector<float> prefix(sweep.begin(), sweep.begin() + static_cast<std::ptrdiff_t>(n));
    EXPECT_EQ(bits(abs_max(prefix)), bits(reference_abs_max(prefix))) << n;
  }
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

TEST(Fp8Math, the_margin_divides_by_exactly_two_to_the_margin_also_beyond_normal_powers_of_two) {
  for (int margin = -150; margin <= 150; ++margin) {
    for (Fp8Format format : {Fp8Format::e4m3, Fp8Format::e5m2}) {
      std::vector<float> hist{3.0f}, scale{1.0f}, inv{1.0f};
      amax_and_scale_update(ScaleUpdateParams{1, 1, HistoryAlgo::max, margin, format}, hist, scale, inv);
      float want = (fp8_max(format) / 3.0f) / std::ldexp(1.0f, margin);
      if (std::isinf(want)) want = FLT_MAX;
      EXPECT_EQ(bits(scale[0]), bits(want)) << margin;
    }
  }
}

}  // namespace
}  // namespace amaxcheck
