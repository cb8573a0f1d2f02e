// The kernels' arithmetic (device_math.h, compiled here for the host) against the simulator's
// (engine/fp8_math.h), bit for bit. This is what makes a GPU run comparable with the oracle.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>

#include "cuda/device_math.h"
#include "cuda/differential.h"
#include "engine/fp8_math.h"

namespace amaxcheck::gpu {
namespace {

float from_bits(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

/// splitmix64: the tests' own deterministic generator.
struct Mix {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
};

TEST(DeviceMath, fp8_rounding_matches_known_values) {
  using math::fp8_round_trip;
  EXPECT_EQ(fp8_round_trip(460.0f, Fp8Format::e4m3), 448.0f) << "rounds down to the largest finite";
  EXPECT_EQ(fp8_round_trip(1e6f, Fp8Format::e4m3), 448.0f) << "saturates";
  EXPECT_EQ(fp8_round_trip(-INFINITY, Fp8Format::e4m3), -448.0f) << "saturates infinities too";
  EXPECT_EQ(fp8_round_trip(61440.0f, Fp8Format::e5m2), 57344.0f);
  EXPECT_EQ(fp8_round_trip(1.0625f, Fp8Format::e4m3), 1.0f) << "a tie goes to the even mantissa";
  EXPECT_EQ(fp8_round_trip(1.1875f, Fp8Format::e4m3), 1.25f) << "a tie goes to the even mantissa";
  EXPECT_EQ(fp8_round_trip(std::ldexp(1.0f, -9), Fp8Format::e4m3), std::ldexp(1.0f, -9)) << "smallest subnormal";
  EXPECT_EQ(fp8_round_trip(std::ldexp(1.0f, -10), Fp8Format::e4m3), 0.0f) << "half of it ties to zero";
  EXPECT_EQ(fp8_round_trip(std::ldexp(3.0f, -10), Fp8Format::e4m3), std::ldexp(1.0f, -8));
  EXPECT_TRUE(std::isnan(fp8_round_trip(NAN, Fp8Format::e5m2)));
  EXPECT_TRUE(std::signbit(fp8_round_trip(-0.0f, Fp8Format::e4m3)));
}

TEST(DeviceMath, fp8_rounding_agrees_with_the_simulator_over_a_sweep_of_float_bit_patterns) {
  std::size_t checked = 0;
  for (Fp8Format format : {Fp8Format::e4m3, Fp8Format::e5m2}) {
    // Every 509th bit pattern covers every exponent with many mantissas, both signs, inf, NaN.
    for (std::uint64_t u = 0; u <= 0xffffffffull; u += 509) {
      const float x = from_bits(static_cast<std::uint32_t>(u));
      const float gpu = math::fp8_round_trip(x, format);
      const float sim = round_to_fp8(x, format);
      ASSERT_TRUE(same_value(sim, gpu)) << "x=" << x << " bits=0x" << std::hex << u << " sim=" << sim
                                        << " gpu=" << gpu;
      ++checked;
    }
  }
  EXPECT_GT(checked, 16'000'000u);
}

TEST(DeviceMath, fp8_cast_multiplies_before_rounding_like_the_simulator) {
  Mix mix{7};
  for (int i = 0; i < 100000; ++i) {
    const float x = from_bits(static_cast<std::uint32_t>(mix.next()));
    const float scale = from_bits(0x3f000000u + static_cast<std::uint32_t>(mix.next() % 0x02000000u));
    ASSERT_TRUE(same_value(round_to_fp8(x * scale, Fp8Format::e4m3), math::fp8_cast(x, scale, Fp8Format::e4m3)));
  }
}

TEST(DeviceMath, absmax_ignores_nans_and_signs_like_the_simulator) {
  const std::vector<float> values = {-3.0f, NAN, 2.0f, -0.0f, -7.5f, NAN};
  float acc = 0.0f;
  for (float v : values) acc = math::absmax_step(acc, v);
  EXPECT_EQ(acc, 7.5f);
  EXPECT_EQ(acc, abs_max(values));
  float only_nan = 0.0f;
  only_nan = math::absmax_step(only_nan, NAN);
  EXPECT_EQ(only_nan, 0.0f);
}

TEST(DeviceMath, scale_update_known_values) {
  // Three tensors, history of 2: amax 448 -> scale 1; amax 2 with margin 1 -> 112; amax 0 keeps.
  const std::uint32_t n = 3, rows = 2;
  std::vector<float> history = {448.0f, 2.0f, 0.0f, 100.0f, 1.0f, 0.0f};
  std::vector<float> scale = {9.0f, 9.0f, 9.0f};
  std::vector<float> scale_inv(3, 0.0f);
  for (std::uint32_t t = 0; t < n; ++t) {
    math::scale_update_tensor(history.data(), scale.data(), scale_inv.data(), n, rows, t, HistoryAlgo::max, t == 1 ? 1 : 0,
                              Fp8Format::e4m3);
  }
  EXPECT_EQ(scale, (std::vector<float>{1.0f, 112.0f, 9.0f}));
  EXPECT_EQ(scale_inv[1], 1.0f / 112.0f);
  EXPECT_EQ(history, (std::vector<float>{0.0f, 0.0f, 0.0f, 448.0f, 2.0f, 0.0f})) << "rolled, row 0 zeroed";
}

TEST(DeviceMath, scale_update_agrees_with_the_simulator_bit_for_bit_on_hostile_histories) {
  Mix mix{42};
  const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, FLT_MIN, 1e-45f, FLT_MAX, 448.0f, 1.0f};
  for (int trial = 0; trial < 2000; ++trial) {
    ScaleUpdateParams p;
    p.tensors = 1 + static_cast<std::uint32_t>(mix.next() % 5);
    p.history_len = 1 + static_cast<std::uint32_t>(mix.next() % 4);
    p.algo = mix.next() % 2 == 0 ? HistoryAlgo::max : HistoryAlgo::most_recent;
    p.margin = static_cast<int>(mix.next() % 5) - 1;
    p.format = mix.next() % 2 == 0 ? Fp8Format::e4m3 : Fp8Format::e5m2;
    std::vector<float> history(p.tensors * p.history_len);
    for (float& h : history) {
      h = mix.next() % 3 == 0 ? specials[mix.next() % std::size(specials)]
                              : from_bits(static_cast<std::uint32_t>(mix.next()) & 0x7fffffffu);
    }
    std::vector<float> scale(p.tensors), scale_inv(p.tensors, 0.0f);
    for (float& s : scale) s = from_bits(0x3f800000u + static_cast<std::uint32_t>(mix.next() % 0x01000000u));
    auto sim_history = history, sim_scale = scale, sim_inv = scale_inv;
    amax_and_scale_update(p, sim_history, sim_scale, sim_inv);
    for (std::uint32_t t = 0; t < p.tensors; ++t) {
      math::scale_update_tensor(history.data(), scale.data(), scale_inv.data(), p.tensors, p.history_len, t, p.algo,
                                p.margin, p.format);
    }
    for (std::size_t i = 0; i < history.size(); ++i) ASSERT_TRUE(same_value(sim_history[i], history[i])) << trial;
    for (std::size_t t = 0; t < p.tensors; ++t) {
      ASSERT_TRUE(same_value(sim_scale[t], scale[t])) << "trial " << trial << " tensor " << t;
      ASSERT_TRUE(same_value(sim_inv[t], scale_inv[t])) << "trial " << trial << " tensor " << t;
    }
  }
}

}  // namespace
}  // namespace amaxcheck::gpu
