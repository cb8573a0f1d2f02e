#pragma once
/// The arithmetic of FP8 delayed scaling, as pure functions over plain floats.
/// Shared by the engine's kernels and by reference models; no engine types here.

#include <cstdint>
#include <span>

#include "model/scenario.h"

namespace amaxcheck {

/// Largest finite value of the format: 448 for E4M3, 57344 for E5M2.
float fp8_max(Fp8Format format);

/// Rounds to the nearest representable FP8 value (ties to even), saturating to +-fp8_max
/// (CUDA's __NV_SATFINITE); NaN stays NaN (payload and sign kept), a zero keeps its sign and a
/// magnitude that rounds to zero gives a zero of its sign. The result is returned as a float.
/// Exact integer work on the float's bits: no libm call, no dependence on the format's range.
float round_to_fp8(float value, Fp8Format format);

/// out[i] = round_to_fp8(in[i] * scale, format) for each i of `in`, in index order (what the
/// fp8_cast kernel computes; `out` may be `in` itself). The format is looked up once, not per
/// element. `out` must hold at least in.size() values.
void cast_to_fp8(std::span<const float> in, float scale, std::span<float> out, Fp8Format format);

/// max(|x|) over `values`, NaN-ignoring like fmaxf; 0 for an empty span. Bit for bit the loop
/// amax = fmaxf(|x|, amax) from +0 with glibc's fmaxf, NaNs included: a quiet NaN is skipped; a
/// signaling one (no arithmetic makes one) makes the running max that NaN, quieted, until the
/// next value replaces it.
float abs_max(std::span<const float> values);

/// amax_and_scale_update for `params.tensors` tensors, in place:
/// - amax = max over the history window (algo max, NaN-propagating like torch.max) or row 0
///   (most_recent);
/// - scale = (fp8_max / amax) / 2^margin only when amax is finite and > 0, else unchanged;
///   an infinite scale is clamped to FLT_MAX;
/// - scale_inv = 1 / scale;
/// - the history is rolled by one row as TransformerEngine does (torch.roll(h, -1, 0): row r
///   takes row r+1, the last row takes the old row 0), then row 0 is zeroed.
/// `history` is history_len x tensors, row-major, row 0 newest.
/// `check_finite=false` is a planted bug used only by the mutation tests.
void amax_and_scale_update(const ScaleUpdateParams& params, std::span<float> history,
                           std::span<float> scale, std::span<float> scale_inv,
                           bool check_finite = true);

}  // namespace amaxcheck
