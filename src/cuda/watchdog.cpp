#include "cuda/watchdog.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <thread>

#include "cuda/cuda_error.h"

namespace amaxcheck::gpu {

Watchdog::Watchdog(std::chrono::milliseconds per_wait, std::chrono::milliseconds whole_run)
    : per_wait_(per_wait), run_deadline_(Clock::now() + whole_run) {}

void Watchdog::watch(ncclComm_t comm) { comms_.push_back(comm); }

void Watchdog::wait(const std::string& what, const std::function<bool()>& ready) const {
  wait_for([&what] { return what; }, ready, per_wait_);
}

void Watchdog::wait(const std::function<std::string()>& describe, const std::function<bool()>& ready) const {
  wait_for(describe, ready, per_wait_);
}

void Watchdog::wait_for(const std::string& what, const std::function<bool()>& ready,
                        std::chrono::milliseconds limit) const {
  wait_for([&what] { return what; }, ready, limit);
}

void Watchdog::wait_for(const std::function<std::string()>& describe, const std::function<bool()>& ready,
                        std::chrono::milliseconds limit) const {
  const auto start = Clock::now();
  const auto deadline = std::min(start + limit, run_deadline_);
  std::uint64_t polls = 0;
  for (;;) {
    if (ready()) return;
    for (ncclComm_t comm : comms_) {
      ncclResult_t async = ncclSuccess;
      const ncclResult_t query = ncclCommGetAsyncError(comm, &async);
      if (query != ncclSuccess) nccl_check(query, "ncclCommGetAsyncError", false);
      if (async != ncclSuccess && async != ncclInProgress) {
        nccl_check(async, fmt::format("NCCL asynchronous error while waiting for {}", describe()), false);
      }
    }
    const auto now = Clock::now();
    if (now >= deadline) {
      const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(now - start).count();
      throw HangDetected(fmt::format("{} did not finish within {} ms{}", describe(), waited,
                                     deadline == run_deadline_ ? " (the run's deadline)" : ""));
    }
    // Spin briefly (small ops finish in microseconds), then back off to a yield.
    if (++polls > 64) std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

bool Watchdog::event_done(void* event) {
  const cudaError_t status = cudaEventQuery(static_cast<cudaEvent_t>(event));
  if (status == cudaErrorNotReady) return false;
  cuda_check(status, "cudaEventQuery");
  return true;
}

bool Watchdog::stream_done(void* stream) {
  const cudaError_t status = cudaStreamQuery(static_cast<cudaStream_t>(stream));
  if (status == cudaErrorNotReady) return false;
  cuda_check(status, "cudaStreamQuery");
  return true;
}

}  // namespace amaxcheck::gpu
