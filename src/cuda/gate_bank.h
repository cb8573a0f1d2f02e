#pragma once
/// The host side of gate kernels: one release flag and one state word per gated op, in pinned
/// host memory that the device reads through a mapped pointer.
///
/// The scheduler, not the GPU, decides when a gated op may start: the op is queued behind a
/// gate kernel at issue time, and the replay stores 1 into the gate's flag when the schedule
/// executes the op. release_all() is the watchdog's way of never leaving a spinning kernel.

#include <cstddef>
#include <cstdint>

namespace amaxcheck::gpu {

class GateBank {
 public:
  /// Allocates `count` gates (cudaHostAlloc, mapped and portable across devices).
  explicit GateBank(std::size_t count);
  ~GateBank();
  GateBank(const GateBank&) = delete;
  GateBank& operator=(const GateBank&) = delete;

  std::size_t size() const { return count_; }
  /// Device-visible pointers for launch_gate.
  const volatile std::uint32_t* device_flag(std::size_t gate) const;
  std::uint32_t* device_state(std::size_t gate) const;

  void release(std::size_t gate);
  void release_all();
  /// Back to "closed" for a new replay of the same session.
  void reset();
  /// GateState written by the kernel (gate_waiting until it ran).
  std::uint32_t state(std::size_t gate) const;
  bool any_timed_out() const;

 private:
  std::size_t count_ = 0;
  std::uint32_t* flags_ = nullptr;   ///< host pointers
  std::uint32_t* states_ = nullptr;
  std::uint32_t* device_flags_ = nullptr;
  std::uint32_t* device_states_ = nullptr;
};

}  // namespace amaxcheck::gpu
