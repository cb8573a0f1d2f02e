#pragma once
/// Turning CUDA and NCCL return codes into exceptions that say what was being done.
///
/// GpuError is a run-time failure of the device or the library (not the user's input and not
/// an amaxcheck invariant). HangDetected is the watchdog's verdict: a deadline passed.

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <stdexcept>
#include <string>

#include "util/check.h"

namespace amaxcheck::gpu {

/// A DeviceError, so the CLI exits 5 ("device error") rather than calling it internal.
struct GpuError : DeviceError {
  using DeviceError::DeviceError;
};

/// A DeviceError too: one that escapes the replay (while making communicators, in the data
/// check or the read-back) is exit 5, not an internal error. The replay catches it first and
/// reports a hang.
struct HangDetected : DeviceError {
  using DeviceError::DeviceError;
};

/// "what: cudaErrorX: text"; throws GpuError unless `error` is cudaSuccess.
void cuda_check(cudaError_t error, const std::string& what);

/// Throws GpuError unless `result` is ncclSuccess or, when `in_progress_ok`, ncclInProgress
/// (the normal answer of a non-blocking communicator). Returns true when still in progress.
bool nccl_check(ncclResult_t result, const std::string& what, bool in_progress_ok = true);

}  // namespace amaxcheck::gpu
