#pragma once
/// Vector clocks over "actors": every (rank, host thread) and every (rank, stream) of a
/// scenario is one component. This is the happens-before representation the race detector
/// uses, as the CUDA stream sanitizer does, extended across ranks by collective completion.

#include <algorithm>
#include <cstdint>
#include <vector>

namespace amaxcheck {

using ActorId = std::uint32_t;
using Epoch = std::uint32_t;

class VectorClock {
 public:
  VectorClock() = default;
  explicit VectorClock(std::size_t actors) : ticks_(actors, 0) {}

  Epoch operator[](ActorId actor) const { return ticks_[actor]; }
  /// Advances `actor` by one and returns its new epoch.
  Epoch tick(ActorId actor) { return ++ticks_[actor]; }
  void join(const VectorClock& other) {
    for (std::size_t i = 0; i < ticks_.size(); ++i) ticks_[i] = std::max(ticks_[i], other.ticks_[i]);
  }
  /// True when the access (actor, epoch) happened before the holder of this clock.
  bool covers(ActorId actor, Epoch epoch) const { return epoch <= ticks_[actor]; }
  std::size_t size() const { return ticks_.size(); }
  friend bool operator==(const VectorClock&, const VectorClock&) = default;

 private:
  std::vector<Epoch> ticks_;
};

}  // namespace amaxcheck
