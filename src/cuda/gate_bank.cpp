#include "cuda/gate_bank.h"

#include <atomic>

#include "cuda/cuda_error.h"
#include "cuda/kernels.h"
#include "util/check.h"

namespace amaxcheck::gpu {
namespace {

void store_release(std::uint32_t* word, std::uint32_t value) {
  // The device polls with volatile loads over PCIe / C2C; a release store orders the host's
  // earlier writes (e.g. staged values) before the flag.
  std::atomic_ref<std::uint32_t>(*word).store(value, std::memory_order_release);
}

}  // namespace

GateBank::GateBank(std::size_t count) : count_(count) {
  const std::size_t bytes = (count == 0 ? 1 : count) * sizeof(std::uint32_t);
  void* flags = nullptr;
  void* states = nullptr;
  cuda_check(cudaHostAlloc(&flags, bytes, cudaHostAllocMapped | cudaHostAllocPortable), "allocating gate flags");
  cuda_check(cudaHostAlloc(&states, bytes, cudaHostAllocMapped | cudaHostAllocPortable), "allocating gate states");
  flags_ = static_cast<std::uint32_t*>(flags);
  states_ = static_cast<std::uint32_t*>(states);
  void* device_flags = nullptr;
  void* device_states = nullptr;
  cuda_check(cudaHostGetDevicePointer(&device_flags, flags, 0), "mapping gate flags");
  cuda_check(cudaHostGetDevicePointer(&device_states, states, 0), "mapping gate states");
  device_flags_ = static_cast<std::uint32_t*>(device_flags);
  device_states_ = static_cast<std::uint32_t*>(device_states);
  reset();
}

GateBank::~GateBank() {
  if (flags_ != nullptr) cudaFreeHost(flags_);
  if (states_ != nullptr) cudaFreeHost(states_);
}

const volatile std::uint32_t* GateBank::device_flag(std::size_t gate) const {
  AMAX_CHECK(gate < count_, "gate index out of range");
  return device_flags_ + gate;
}

std::uint32_t* GateBank::device_state(std::size_t gate) const {
  AMAX_CHECK(gate < count_, "gate index out of range");
  return device_states_ + gate;
}

void GateBank::release(std::size_t gate) {
  AMAX_CHECK(gate < count_, "gate index out of range");
  store_release(flags_ + gate, 1);
}

void GateBank::release_all() {
  for (std::size_t g = 0; g < count_; ++g) store_release(flags_ + g, 1);
}

void GateBank::reset() {
  for (std::size_t g = 0; g < count_; ++g) {
    store_release(flags_ + g, 0);
    store_release(states_ + g, gate_waiting);
  }
}

std::uint32_t GateBank::state(std::size_t gate) const {
  AMAX_CHECK(gate < count_, "gate index out of range");
  return std::atomic_ref<std::uint32_t>(states_[gate]).load(std::memory_order_acquire);
}

bool GateBank::any_timed_out() const {
  for (std::size_t g = 0; g < count_; ++g) {
    if (state(g) == gate_timed_out) return true;
  }
  return false;
}

}  // namespace amaxcheck::gpu
