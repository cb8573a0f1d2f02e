#pragma once
/// What CUDA and NCCL say about this machine, asked once and without side effects.

#include <string>

namespace amaxcheck::gpu {

struct DeviceProbe {
  int device_count = 0;
  std::string unusable_reason;  ///< empty when at least one device is usable
  int nccl_runtime_version = 0;
  int nccl_header_version = 0;
  int cuda_driver_version = 0;
  int cuda_runtime_version = 0;

  bool usable() const { return unusable_reason.empty(); }
};

DeviceProbe probe_devices();

/// "2.28.9" for an NCCL version code.
std::string nccl_version_text(int code);

}  // namespace amaxcheck::gpu
