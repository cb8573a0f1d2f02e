#pragma once
/// Everything one scenario rank owns on its GPU: streams, events, buffers, per-op completion
/// events and the scratch space the kernels need. Created and destroyed on the rank's device.

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "model/scenario.h"

namespace amaxcheck::gpu {

class Watchdog;

struct RankResources {
  RankId rank = 0;
  int device = 0;
  std::vector<cudaStream_t> streams;  ///< non-blocking: no implicit sync with the legacy stream
  std::vector<cudaEvent_t> events;    ///< the scenario's events (timing disabled)
  std::vector<float*> buffers;        ///< device memory, or mapped pinned memory for host buffers
  std::vector<bool> host_buffer;
  std::vector<float*> absmax_scratch;  ///< per stream
  std::vector<float*> copy_scratch;    ///< per stream, for copies whose ranges overlap
  std::uint32_t copy_scratch_count = 0;
  float* fill_values = nullptr;        ///< every fill op's values, staged once
  /// Per program op ([thread][index]): its completion event (device ops only) and the offset
  /// of its values in fill_values (fill ops only).
  std::vector<std::vector<cudaEvent_t>> op_done;
  std::vector<std::vector<std::uint32_t>> fill_offset;

  /// Allocates everything for `rank` of `scenario` on `device` (must be current).
  void create(const Scenario& scenario, RankId rank, int device);
  /// Writes every buffer's initial values (Buffer::init, else zeros) and waits for it.
  void write_initial_values(const Scenario& scenario, const Watchdog& watchdog);
  /// Reads a range back (device to host through stream 0, waited for with the watchdog).
  std::vector<float> read(const Range& range, const Watchdog& watchdog) const;
  /// Frees everything. With `device_healthy` false (the watchdog could not drain the device),
  /// device memory is leaked on purpose: cudaFree would synchronize with a wedged kernel.
  void destroy(bool device_healthy);

  float* at(const Range& range) const { return buffers.at(range.buffer) + range.offset; }
};

}  // namespace amaxcheck::gpu
