#include "engine/fp8_math.h"

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>

#include "util/check.h"

namespace amaxcheck {

float fp8_max(Fp8Format format) { return format == Fp8Format::e4m3 ? 448.0f : 57344.0f; }

namespace {

/// A format's rounding written in float32 bit patterns. A finite float's bits, sign cleared, order
/// like its magnitude, so rounding, saturation and the maximum of magnitudes are integer work.
struct Fp8Bits {
  /// float32 mantissa bits below the format's last one (23 - 3 for E4M3, 23 - 2 for E5M2).
  std::uint32_t dropped_bits;
  /// The smallest normal magnitude, 2^-6 / 2^-14: below it the format's step stops shrinking.
  std::uint32_t min_normal;
  /// fp8_max: every larger magnitude, infinity included, saturates to it.
  std::uint32_t max;
  /// 2^(min_normal_exp - mantissa_bits + 23), whose float32 step is the format's subnormal step
  /// (2^-9 / 2^-16): adding it to a magnitude below min_normal rounds that magnitude to a
  /// multiple of the step, half to even, and subtracting it again is exact.
  float subnormal_shift;
};

constexpr Fp8Bits e4m3_bits{20, 0x3C800000u /* 2^-6 */, 0x43E00000u /* 448 */, 16384.0f /* 2^14 */};
constexpr Fp8Bits e5m2_bits{21, 0x38800000u /* 2^-14 */, 0x47600000u /* 57344 */, 128.0f /* 2^7 */};
static_assert(std::bit_cast<float>(e4m3_bits.min_normal) == 0x1p-6f && std::bit_cast<float>(e4m3_bits.max) == 448.0f);
static_assert(std::bit_cast<float>(e5m2_bits.min_normal) == 0x1p-14f && std::bit_cast<float>(e5m2_bits.max) == 57344.0f);

const Fp8Bits& bits_of(Fp8Format format) { return format == Fp8Format::e4m3 ? e4m3_bits : e5m2_bits; }

/// round_to_fp8 for one format. Below min_normal it rounds by a float addition, so it assumes the
/// default rounding mode (to nearest, ties to even), as the std::rint it replaced did.
[[gnu::always_inline]] inline float round_with(float value, const Fp8Bits& f) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  const std::uint32_t sign = bits & 0x80000000u;
  const std::uint32_t magnitude = bits ^ sign;
  if (magnitude > 0x7F800000u) return value;  // NaN, its payload kept
  std::uint32_t rounded;
  if (magnitude >= f.min_normal) {
    // Round the mantissa to the format's bits, half to even: add just under half a step, plus
    // one when the last kept bit is odd, and cut. A carry moves into the exponent, as it should;
    // infinity stays infinity and then saturates like every magnitude past max.
    const std::uint32_t step = std::uint32_t{1} << f.dropped_bits;
    rounded = (magnitude + (step / 2 - 1) + ((magnitude >> f.dropped_bits) & 1u)) & ~(step - 1);
  } else {
    // Zero, and float32 subnormals, take this path too: +0 comes out and the sign goes back on.
    const float below_normal = std::bit_cast<float>(magnitude);
    rounded = std::bit_cast<std::uint32_t>((below_normal + f.subnormal_shift) - f.subnormal_shift);
  }
  return std::bit_cast<float>(std::min(rounded, f.max) | sign);
}

/// 2^exp as std::ldexp(1.0f, exp) gives it, built from its bits when it is a normal float (every
/// margin the knobs allow) instead of a libm call per scale update.
float power_of_two(int exp) {
  if (exp < -126 || exp > 127) return std::ldexp(1.0f, exp);
  return std::bit_cast<float>(static_cast<std::uint32_t>(exp + 127) << 23);
}

/// The cast loop with the format's constants known at compile time (shifts and masks become
/// immediates): the loop is most of the fp8_cast kernel's cost.
template <const Fp8Bits& format>
void cast_with(std::span<const float> in, float scale, std::span<float> out) {
  for (std::size_t i = 0; i < in.size(); ++i) out[i] = round_with(in[i] * scale, format);
}

}  // namespace

float round_to_fp8(float value, Fp8Format format) { return round_with(value, bits_of(format)); }

void cast_to_fp8(std::span<const float> in, float scale, std::span<float> out, Fp8Format format) {
  AMAX_CHECK(out.size() >= in.size(), "fp8 cast writes fewer elements than it reads");
  if (format == Fp8Format::e4m3) {
    cast_with<e4m3_bits>(in, scale, out);
  } else {
    cast_with<e5m2_bits>(in, scale, out);
  }
}

float abs_max(std::span<const float> values) {
  // The max of magnitudes as bits (a finite magnitude's bits order like its value). NaNs follow
  // the fmaxf loop this replaced, fmaxf(|v|, amax) with glibc's rules: a quiet NaN |v| leaves
  // amax, a signaling one makes amax that NaN quieted, and a NaN amax gives way to any |v|.
  constexpr std::uint32_t infinity = 0x7F800000u, quiet = 0x00400000u;
  std::uint32_t amax = 0;
  for (float v : values) {
    const std::uint32_t magnitude = std::bit_cast<std::uint32_t>(v) & 0x7FFFFFFFu;
    if (magnitude <= infinity && amax <= infinity) {
      amax = std::max(amax, magnitude);
    } else if (amax > infinity || (magnitude & quiet) == 0) {
      amax = magnitude > infinity ? magnitude | quiet : magnitude;
    }
  }
  return std::bit_cast<float>(amax);
}

void amax_and_scale_update(const ScaleUpdateParams& params, std::span<float> history,
                           std::span<float> scale, std::span<float> scale_inv, bool check_finite) {
  const std::size_t n = params.tensors;
  const std::size_t rows = params.history_len;
  AMAX_CHECK(history.size() == rows * n && scale.size() == n && scale_inv.size() == n,
             "scale_update ranges do not match its parameters");
  const float max = fp8_max(params.format);
  const float margin_factor = power_of_two(params.margin);
  for (std::size_t t = 0; t < n; ++t) {
    float amax = history[t];
    if (params.algo == HistoryAlgo::max) {
      // torch.max over the window propagates NaN (and a NaN amax keeps the old scale).
      for (std::size_t r = 1; r < rows && !std::isnan(amax); ++r) {
        const float v = history[r * n + t];
        amax = std::isnan(v) ? v : std::fmax(amax, v);
      }
    }
    if (!check_finite || (std::isfinite(amax) && amax > 0.0f)) {
      float s = (max / amax) / margin_factor;
      if (std::isinf(s)) s = FLT_MAX;
      scale[t] = s;
    }
    scale_inv[t] = 1.0f / scale[t];
  }
  // torch.roll(history, -1, 0): row r <- row r+1, last row <- old row 0; then zero row 0.
  if (rows > 1) {
    for (std::size_t t = 0; t < n; ++t) {
      const float newest = history[t];
      for (std::size_t r = 0; r + 1 < rows; ++r) history[r * n + t] = history[(r + 1) * n + t];
      history[(rows - 1) * n + t] = newest;
    }
  }
  for (std::size_t t = 0; t < n; ++t) history[t] = 0.0f;
}

}  // namespace amaxcheck
