// The GPU backend's kernels. Arithmetic comes from device_math.h so the host tests cover it.
#include <cuda_bf16.h>

#include <algorithm>

#include "cuda/device_math.h"
#include "cuda/kernels.h"

namespace amaxcheck::gpu {
namespace {

constexpr int kThreads = 256;

__device__ std::uint64_t global_time_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void gate_kernel(const volatile std::uint32_t* flag, std::uint32_t* state, std::uint64_t timeout_ns) {
  const std::uint64_t start = global_time_ns();
  while (*flag == 0) {
    if (global_time_ns() - start > timeout_ns) {
      *reinterpret_cast<volatile std::uint32_t*>(state) = gate_timed_out;
      __threadfence_system();
      return;
    }
    __nanosleep(200);
  }
  *reinterpret_cast<volatile std::uint32_t*>(state) = gate_passed;
  // Make the later kernels of this stream see the host's writes that preceded the release.
  __threadfence_system();
}

__device__ float load_as_float(const void* in, Dtype dtype, std::uint64_t i) {
  if (dtype == Dtype::bf16) return __bfloat162float(static_cast<const __nv_bfloat16*>(in)[i]);
  return static_cast<const float*>(in)[i];
}

/// Block-wide absmax of a grid-stride slice; block b writes partial[b].
__global__ void absmax_partial_kernel(const void* in, Dtype dtype, std::uint64_t count, float* partial) {
  __shared__ float shared[kThreads];
  float acc = 0.0f;
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    acc = math::absmax_step(acc, load_as_float(in, dtype, i));
  }
  shared[threadIdx.x] = acc;
  __syncthreads();
  for (unsigned width = blockDim.x / 2; width > 0; width /= 2) {
    if (threadIdx.x < width) shared[threadIdx.x] = fmaxf(shared[threadIdx.x], shared[threadIdx.x + width]);
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = shared[0];
}

/// One block folds the partial maxima and writes the single output element.
__global__ void absmax_final_kernel(const float* partial, unsigned blocks, float* out) {
  __shared__ float shared[kThreads];
  float acc = 0.0f;
  for (unsigned i = threadIdx.x; i < blocks; i += blockDim.x) acc = fmaxf(acc, partial[i]);
  shared[threadIdx.x] = acc;
  __syncthreads();
  for (unsigned width = blockDim.x / 2; width > 0; width /= 2) {
    if (threadIdx.x < width) shared[threadIdx.x] = fmaxf(shared[threadIdx.x], shared[threadIdx.x + width]);
    __syncthreads();
  }
  if (threadIdx.x == 0) out[0] = shared[0];
}

__global__ void fp8_cast_kernel(const float* in, const float* scale, float* out, std::uint64_t count, Fp8Format format) {
  const float s = scale[0];
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    out[i] = math::fp8_cast(in[i], s, format);
  }
}

__global__ void copy_batch_kernel(CopyBatch batch) {
  const int pair = static_cast<int>(blockIdx.y);
  const float* src = batch.src[pair];
  float* dst = batch.dst[pair];
  const std::uint32_t count = batch.count[pair];
  for (std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x) dst[i] = src[i];
}

__global__ void scale_update_kernel(float* history, float* scale, float* scale_inv, ScaleUpdateParams params) {
  const std::uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= params.tensors) return;
  math::scale_update_tensor(history, scale, scale_inv, params.tensors, params.history_len, t, params.algo,
                            params.margin, params.format);
}

unsigned blocks_for(std::uint64_t count, unsigned cap) {
  const std::uint64_t wanted = (count + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::max<std::uint64_t>(1, std::min<std::uint64_t>(wanted, cap)));
}

}  // namespace

cudaError_t preload_kernels() {
  const void* kernels[] = {
      reinterpret_cast<const void*>(&gate_kernel),          reinterpret_cast<const void*>(&absmax_partial_kernel),
      reinterpret_cast<const void*>(&absmax_final_kernel),  reinterpret_cast<const void*>(&fp8_cast_kernel),
      reinterpret_cast<const void*>(&copy_batch_kernel),    reinterpret_cast<const void*>(&scale_update_kernel),
  };
  for (const void* kernel : kernels) {
    cudaFuncAttributes attributes;
    if (const cudaError_t error = cudaFuncGetAttributes(&attributes, kernel); error != cudaSuccess) return error;
  }
  return cudaSuccess;
}

cudaError_t launch_gate(const volatile std::uint32_t* flag, std::uint32_t* state, std::uint64_t timeout_ns,
                        cudaStream_t stream) {
  gate_kernel<<<1, 1, 0, stream>>>(flag, state, timeout_ns);
  return cudaGetLastError();
}

cudaError_t launch_absmax(const void* in, Dtype dtype, std::uint64_t count, float* scratch, float* out,
                          cudaStream_t stream) {
  const unsigned blocks = blocks_for(count, absmax_max_blocks);
  absmax_partial_kernel<<<blocks, kThreads, 0, stream>>>(in, dtype, count, scratch);
  absmax_final_kernel<<<1, kThreads, 0, stream>>>(scratch, blocks, out);
  return cudaGetLastError();
}

cudaError_t launch_fp8_cast(const float* in, const float* scale, float* out, std::uint64_t count, Fp8Format format,
                            cudaStream_t stream) {
  fp8_cast_kernel<<<blocks_for(count, 4096), kThreads, 0, stream>>>(in, scale, out, count, format);
  return cudaGetLastError();
}

cudaError_t launch_copy_batch(const CopyBatch& batch, cudaStream_t stream) {
  if (batch.pairs <= 0) return cudaSuccess;
  std::uint32_t largest = 0;
  for (int i = 0; i < batch.pairs; ++i) largest = std::max(largest, batch.count[i]);
  const dim3 grid(blocks_for(largest, 1024), static_cast<unsigned>(batch.pairs));
  copy_batch_kernel<<<grid, kThreads, 0, stream>>>(batch);
  return cudaGetLastError();
}

cudaError_t launch_scale_update(float* history, float* scale, float* scale_inv, const ScaleUpdateParams& params,
                                cudaStream_t stream) {
  if (params.tensors == 0) return cudaSuccess;
  scale_update_kernel<<<blocks_for(params.tensors, 65535), kThreads, 0, stream>>>(history, scale, scale_inv, params);
  return cudaGetLastError();
}

}  // namespace amaxcheck::gpu
