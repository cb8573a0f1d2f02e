#include "engine/fp8_math.h"

#include <cfloat>
#include <cmath>

#include "util/check.h"

namespace amaxcheck {

float fp8_max(Fp8Format format) { return format == Fp8Format::e4m3 ? 448.0f : 57344.0f; }

float round_to_fp8(float value, Fp8Format format) {
  if (std::isnan(value)) return value;
  const float max = fp8_max(format);
  if (std::isinf(value)) return std::copysign(max, value);
  if (value == 0.0f) return value;
  const int mantissa_bits = format == Fp8Format::e4m3 ? 3 : 2;
  const int min_normal_exp = format == Fp8Format::e4m3 ? -6 : -14;
  const int exp = std::max(std::ilogb(value), min_normal_exp);
  // value / quantum is exact (a power-of-two scaling); rint rounds half to even.
  const float quantum = std::ldexp(1.0f, exp - mantissa_bits);
  const float rounded = std::rint(value / quantum) * quantum;
  return std::fabs(rounded) > max ? std::copysign(max, value) : rounded;
}

float abs_max(std::span<const float> values) {
  float amax = 0.0f;
  for (float v : values) amax = std::fmax(amax, std::fabs(v));
  return amax;
}

void amax_and_scale_update(const ScaleUpdateParams& params, std::span<float> history,
                           std::span<float> scale, std::span<float> scale_inv, bool check_finite) {
  const std::size_t n = params.tensors;
  const std::size_t rows = params.history_len;
  AMAX_CHECK(history.size() == rows * n && scale.size() == n && scale_inv.size() == n,
             "scale_update ranges do not match its parameters");
  const float max = fp8_max(params.format);
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
      float s = (max / amax) / std::ldexp(1.0f, params.margin);
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
