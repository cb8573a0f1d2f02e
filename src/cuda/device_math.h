#pragma once
/// The per-element arithmetic of the GPU kernels, compiled for both host and device.
///
/// The kernels in kernels.cu call exactly these functions, and the CPU tests call the same
/// functions on the host and compare them bit for bit with the simulator's math
/// (engine/fp8_math.h). That is how "the GPU computes what the oracle computes" is tested on a
/// machine without a GPU; what remains unproven there is only that the device compiler agrees
/// with the host compiler on IEEE float division and on cuda_fp8.h's conversion (both are
/// specified to be correctly rounded, and nvcc is not given --use_fast_math).
///
/// Rules that keep host and device bit-identical:
/// - no fused multiply-add opportunities (each expression is one rounding);
/// - finiteness is tested on the bit pattern, not with a library call;
/// - fmaxf's NaN-ignoring behaviour is relied on for local amaxes, as in the engine (std::fmax);
///   the history window's max propagates NaN like torch.max.

#include <cuda_fp8.h>
#include <math.h>

#include <cfloat>
#include <cstdint>
#include <cstring>

#include "model/scenario.h"

#if defined(__CUDACC__)
#define AMAX_HOST_DEVICE __host__ __device__
#else
#define AMAX_HOST_DEVICE
#endif

namespace amaxcheck::gpu::math {

AMAX_HOST_DEVICE inline std::uint32_t float_bits(float x) {
  std::uint32_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}

AMAX_HOST_DEVICE inline bool is_finite(float x) { return (float_bits(x) & 0x7f800000u) != 0x7f800000u; }
AMAX_HOST_DEVICE inline bool is_inf(float x) { return (float_bits(x) & 0x7fffffffu) == 0x7f800000u; }

/// Largest finite value: 448 (E4M3) and 57344 (E5M2).
AMAX_HOST_DEVICE inline float fp8_max(Fp8Format format) { return format == Fp8Format::e4m3 ? 448.0f : 57344.0f; }

/// One step of the absmax reduction: NaN-ignoring, starting from +0.
AMAX_HOST_DEVICE inline float absmax_step(float acc, float value) { return fmaxf(acc, fabsf(value)); }

/// Rounds to FP8 (nearest, ties to even, saturating to the largest finite value: __NV_SATFINITE)
/// and widens back to float, which is how the scenario's float buffers hold FP8 tensors.
AMAX_HOST_DEVICE inline float fp8_round_trip(float value, Fp8Format format) {
  const __nv_fp8_interpretation_t kind = format == Fp8Format::e4m3 ? __NV_E4M3 : __NV_E5M2;
  const __nv_fp8_storage_t stored = __nv_cvt_float_to_fp8(value, __NV_SATFINITE, kind);
  const __half_raw wide = __nv_cvt_fp8_to_halfraw(stored, kind);
  return __half2float(__half(wide));
}

/// The FP8 cast of one element: fp8(value * scale).
AMAX_HOST_DEVICE inline float fp8_cast(float value, float scale, Fp8Format format) {
  const float scaled = value * scale;
  return fp8_round_trip(scaled, format);
}

/// amax_and_scale_update for tensor `t` of a history_len x tensors history (row 0 newest), in
/// place: the window's amax, the new scale (kept when amax is not finite or not > 0; inf
/// clamps to FLT_MAX), scale_inv = 1 / scale, then TransformerEngine's roll
/// (row r <- row r+1, last row <- old row 0) and row 0 zeroed. Tensors are independent: one
/// device thread per tensor computes exactly this.
AMAX_HOST_DEVICE inline void scale_update_tensor(float* history, float* scale, float* scale_inv,
                                                 std::uint32_t tensors, std::uint32_t rows, std::uint32_t t,
                                                 HistoryAlgo algo, int margin, Fp8Format format) {
  float amax = history[t];
  if (algo == HistoryAlgo::max) {
    // torch.max over the window propagates NaN, as the engine does.
    for (std::uint32_t r = 1; r < rows && !(amax != amax); ++r) {
      const float v = history[r * tensors + t];
      amax = (v != v) ? v : fmaxf(amax, v);
    }
  }
  if (is_finite(amax) && amax > 0.0f) {
    const float ratio = fp8_max(format) / amax;
    float s = ratio / ldexpf(1.0f, margin);
    if (is_inf(s)) s = FLT_MAX;
    scale[t] = s;
  }
  scale_inv[t] = 1.0f / scale[t];
  if (rows > 1) {
    const float newest = history[t];
    for (std::uint32_t r = 0; r + 1 < rows; ++r) history[r * tensors + t] = history[(r + 1) * tensors + t];
    history[(rows - 1) * tensors + t] = newest;
  }
  history[t] = 0.0f;
}

}  // namespace amaxcheck::gpu::math
