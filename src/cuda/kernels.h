#pragma once
/// Launchers for the GPU backend's kernels. Every launcher queues work on `stream` and returns
/// the launch's error (cudaGetLastError), never waiting. The arithmetic lives in device_math.h.

#include <cuda_runtime_api.h>

#include <cstdint>

#include "model/scenario.h"

namespace amaxcheck::gpu {

/// Loads every kernel below into the current device's context now (cudaFuncGetAttributes).
/// Under CUDA's lazy loading (the default since CUDA 12.2) a kernel's first launch loads it,
/// and loading may wait for the context to go idle. With a gate kernel spinning until the host
/// opens it, that launch never returns, and the watchdog cannot interrupt a blocked launch:
/// the first GPU run of a random schedule hung exactly so. Call before any gate is queued.
cudaError_t preload_kernels();

/// How a gate finished, written by the gate kernel into host-mapped memory.
enum GateState : std::uint32_t { gate_waiting = 0, gate_passed = 1, gate_timed_out = 2 };

/// A gate: one thread spins on a host-mapped flag (volatile reads) until the host stores a
/// non-zero value, then writes gate_passed to `state`. It gives up after `timeout_ns` of
/// device time and writes gate_timed_out, so a forgotten gate cannot wedge the GPU.
cudaError_t launch_gate(const volatile std::uint32_t* flag, std::uint32_t* state, std::uint64_t timeout_ns,
                        cudaStream_t stream);

/// Partial maxima per block: `launch_absmax` needs scratch for this many floats.
inline constexpr std::uint32_t absmax_max_blocks = 1024;

/// out[0] = max |in[i]| over `count` elements (NaN-ignoring, 0 when empty), in two passes
/// through `scratch` (absmax_max_blocks floats, private to the stream).
cudaError_t launch_absmax(const void* in, Dtype dtype, std::uint64_t count, float* scratch, float* out,
                          cudaStream_t stream);

/// out[i] = fp8(in[i] * scale[0]) in `format`, saturating, widened back to float.
cudaError_t launch_fp8_cast(const float* in, const float* scale, float* out, std::uint64_t count,
                            Fp8Format format, cudaStream_t stream);

/// A batch of copies (copy, concatenate, split, and fill from a staged source).
inline constexpr int copy_batch_max = 16;
struct CopyBatch {
  int pairs = 0;
  const float* src[copy_batch_max] = {};
  float* dst[copy_batch_max] = {};
  std::uint32_t count[copy_batch_max] = {};
};
/// Copies every pair. Overlapping pairs are the caller's problem: the backend stages them.
cudaError_t launch_copy_batch(const CopyBatch& batch, cudaStream_t stream);

/// amax_and_scale_update in place over device (or mapped) arrays; see device_math.h.
cudaError_t launch_scale_update(float* history, float* scale, float* scale_inv, const ScaleUpdateParams& params,
                                cudaStream_t stream);

}  // namespace amaxcheck::gpu
