#pragma once
/// Every wait of the GPU backend goes through here: poll, never block, give up at a deadline.
///
/// Like nccl-tests' testStreamSynchronize: poll the CUDA condition (cudaEventQuery /
/// cudaStreamQuery) and ncclCommGetAsyncError of every communicator, yield between polls, and
/// throw HangDetected when the per-wait or the whole-run deadline passes. The caller (the
/// session) then aborts the communicators and releases the gates.

#include <nccl.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace amaxcheck::gpu {

class Watchdog {
 public:
  using Clock = std::chrono::steady_clock;

  Watchdog(std::chrono::milliseconds per_wait, std::chrono::milliseconds whole_run);

  /// Communicators whose asynchronous errors every wait checks.
  void watch(ncclComm_t comm);
  void forget_all() { comms_.clear(); }

  /// Polls `ready` until it returns true. Throws HangDetected("<what> did not finish within
  /// N ms") at the deadline, GpuError on an NCCL asynchronous error.
  void wait(const std::string& what, const std::function<bool()>& ready) const;
  /// The same, with the description made only when it is needed (an error or the deadline):
  /// replay steps wait once per op, and formatting every description would cost more than
  /// the wait itself.
  void wait(const std::function<std::string()>& describe, const std::function<bool()>& ready) const;
  /// The same with an explicit limit (used while draining after an abort).
  void wait_for(const std::string& what, const std::function<bool()>& ready, std::chrono::milliseconds limit) const;
  void wait_for(const std::function<std::string()>& describe, const std::function<bool()>& ready,
                std::chrono::milliseconds limit) const;

  /// True when cudaEventQuery says the event completed; throws GpuError on a device error.
  static bool event_done(void* event);
  static bool stream_done(void* stream);

 private:
  std::chrono::milliseconds per_wait_;
  Clock::time_point run_deadline_;
  std::vector<ncclComm_t> comms_;
};

}  // namespace amaxcheck::gpu
