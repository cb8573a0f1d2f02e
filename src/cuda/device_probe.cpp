#include "cuda/device_probe.h"

#include <fmt/format.h>

#include "cuda/compat.h"
#include "cuda/cuda_error.h"
#include "cuda/gpu_run.h"

namespace amaxcheck::gpu {

void cuda_check(cudaError_t error, const std::string& what) {
  if (error == cudaSuccess) return;
  throw GpuError(fmt::format("{}: {}: {}", what, cudaGetErrorName(error), cudaGetErrorString(error)));
}

bool nccl_check(ncclResult_t result, const std::string& what, bool in_progress_ok) {
  if (result == ncclSuccess) return false;
  if (result == ncclInProgress && in_progress_ok) return true;
  throw GpuError(fmt::format("{}: {} ({})", what, ncclGetErrorString(result), ncclGetLastError(nullptr)));
}

std::string nccl_version_text(int code) {
  const auto v = compat::decode_nccl_version(code);
  return fmt::format("{}.{}.{}", v.major, v.minor, v.patch);
}

DeviceProbe probe_devices() {
  DeviceProbe probe;
  probe.nccl_header_version = NCCL_VERSION_CODE;
  probe.nccl_runtime_version = compat::runtime_nccl_version();
  cudaDriverGetVersion(&probe.cuda_driver_version);
  cudaRuntimeGetVersion(&probe.cuda_runtime_version);
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess) {
    probe.unusable_reason = fmt::format("{} ({})", cudaGetErrorString(error), cudaGetErrorName(error));
    cudaGetLastError();  // clear the sticky-free error so later calls start clean
    return probe;
  }
  if (count == 0) {
    probe.unusable_reason = "the driver reports no CUDA device";
    return probe;
  }
  probe.device_count = count;
  return probe;
}

std::optional<std::string> cuda_unavailable_reason() {
  const DeviceProbe probe = probe_devices();
  if (probe.usable()) return std::nullopt;
  return "no usable CUDA device: " + probe.unusable_reason;
}

}  // namespace amaxcheck::gpu
