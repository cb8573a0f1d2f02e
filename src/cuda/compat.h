#pragma once
/// Every CUDA / NCCL version test of the GPU backend, in one place.
///
/// Two kinds of version matter:
/// - the headers we compile against (NCCL_VERSION_CODE, CUDART_VERSION): they decide which
///   API fields exist at compile time;
/// - the library loaded at run time (ncclGetVersion): the build directory may be carried to a
///   machine whose libnccl.so.2 (e.g. PyTorch's nvidia-nccl-cu13 wheel) is older or newer.
///   Behaviour that depends on the library (several ranks per GPU) is decided from the
///   run-time version, never from the header.

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstdlib>
#include <cstring>

#ifndef NCCL_VERSION
#define NCCL_VERSION(X, Y, Z) (((X) <= 2 && (Y) <= 8) ? (X) * 1000 + (Y) * 100 + (Z) : (X) * 10000 + (Y) * 100 + (Z))
#endif

// The backend needs non-blocking communicators with ncclCommSplit and splitShare (2.18),
// ncclCommGetAsyncError / ncclCommAbort (2.4), and ncclConfig_t (2.14).
#if NCCL_VERSION_CODE < NCCL_VERSION(2, 18, 0)
#error "amaxcheck's GPU backend needs NCCL >= 2.18 (ncclCommSplit with splitShare)"
#endif

#if CUDART_VERSION < 12000
#error "amaxcheck's GPU backend needs CUDA >= 12.0"
#endif

namespace amaxcheck::gpu::compat {

/// Run-time NCCL >= 2.30 may place several ranks of one communicator on one GPU, experimentally,
/// when NCCL_MULTI_RANK_GPU_ENABLE=1 (DESIGN.md section 3, "Same GPU").
inline constexpr int multi_rank_gpu_min_version = NCCL_VERSION(2, 30, 0);
inline constexpr const char* multi_rank_gpu_env = "NCCL_MULTI_RANK_GPU_ENABLE";

/// Kernels of different communicators may overlap on one device from NCCL 2.26 on CUDA 12.3
/// (implicit launch ordering); before that the conservative reading is one at a time.
inline constexpr int concurrent_kernels_min_nccl = NCCL_VERSION(2, 26, 0);
inline constexpr int concurrent_kernels_min_cudart = 12030;

/// The version of the libnccl.so actually loaded (not the header's).
inline int runtime_nccl_version() {
  int version = 0;
  if (ncclGetVersion(&version) != ncclSuccess) return 0;
  return version;
}

/// Decodes an NCCL version code (2.x uses major*10000 + minor*100 + patch).
struct NcclVersion {
  int major = 0, minor = 0, patch = 0;
};
inline NcclVersion decode_nccl_version(int code) {
  if (code >= 10000) return {code / 10000, (code % 10000) / 100, code % 100};
  return {code / 1000, (code % 1000) / 100, code % 100};
}

/// Whether the loaded NCCL lets two ranks of one communicator share a GPU right now.
inline bool multi_rank_gpu_enabled(int runtime_version) {
  const char* env = std::getenv(multi_rank_gpu_env);
  return runtime_version >= multi_rank_gpu_min_version && env != nullptr && std::strcmp(env, "1") == 0;
}

/// Config for every communicator the backend makes: non-blocking, so that no NCCL call can
/// block the host and the watchdog stays in charge (DESIGN.md: "nothing waits without a
/// deadline"). `split_share` only matters for ncclCommSplit.
inline ncclConfig_t communicator_config(bool split_share, const char* name) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  config.splitShare = split_share ? 1 : 0;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 23, 0)
  config.commName = name;
#else
  (void)name;
#endif
  return config;
}

/// Parent ranks that do not belong to a split-off communicator pass this color.
inline constexpr int split_no_color = NCCL_SPLIT_NOCOLOR;

}  // namespace amaxcheck::gpu::compat
