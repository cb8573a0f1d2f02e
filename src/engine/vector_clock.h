#pragma once
/// Vector clocks over "actors": every (rank, host thread) and every (rank, stream) of a
/// scenario is one component. This is the happens-before representation the race detector
/// uses, as the CUDA stream sanitizer does, extended across ranks by collective completion.
///
/// Representation: an immutable, shared dense *base* plus a small sorted *delta* of the
/// entries that are ahead of it. Copies share the base, so snapshotting a clock (an issued op,
/// an event record) costs the delta, not the number of actors. Bases form a DAG: a base made
/// by compacting or by a join remembers every base it was made from (a collective's join_all:
/// each distinct base of its members), so joining a clock whose base is an ancestor of ours
/// only merges deltas. After a collective over m ranks every member's clock shares one new
/// base, made in one dense pass per distinct member base (members of a world collective come
/// from a few earlier collectives, so a few passes, not m): the cost of a collective stays
/// linear in the number of actors instead of quadratic, and a member's clock takes the new
/// base without a dense pass of its own (see bench/bench_engine.cpp, BM_CostPerCollective).
///
/// Small clocks (at most `inline_actors` actors: a scenario of a few ranks) skip all of that and
/// hold their epochs in the clock itself: a dense join of 16 epochs costs less than looking up a
/// delta, and a copy (every issued op, record and rendezvous member takes one) allocates nothing
/// and touches no reference count. Which representation a clock has never shows in its value.

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

namespace amaxcheck {

using ActorId = std::uint32_t;
using Epoch = std::uint32_t;

class VectorClock {
 public:
  /// The all-zero clock with no actors (a placeholder that is assigned before use).
  VectorClock() = default;
  /// The all-zero clock over `actors` actors. Clocks meant to be joined cheaply should be
  /// copies of one such root, so that they share its base.
  explicit VectorClock(std::size_t actors);
  /// Copies of an inline clock copy its epochs and nothing else: every issued op, record and
  /// rendezvous member takes one, and the general copy (a reference count, a delta vector) is a
  /// good part of an issue's cost in a small scenario.
  VectorClock(const VectorClock& other) : small_(other.small_), size_(other.size_) {
    if (other.base_) [[unlikely]] copy_shared(other);
  }
  VectorClock& operator=(const VectorClock& other) {
    if (!base_ && !other.base_) [[likely]] {  // both inline (or empty): no delta on either side
      small_ = other.small_;
      size_ = other.size_;
      return *this;
    }
    return assign_slow(other);
  }
  VectorClock(VectorClock&&) noexcept = default;
  VectorClock& operator=(VectorClock&&) noexcept = default;
  ~VectorClock() = default;
  /// Back to the empty placeholder, freeing any base and delta it held.
  void clear() {
    if (base_) base_.reset();
    if (delta_.capacity() > 0) std::vector<Entry>().swap(delta_);
    small_.fill(0);
    size_ = 0;
  }

  Epoch operator[](ActorId actor) const {
    if (!base_) return actor < inline_actors ? small_[actor] : 0;
    return large_at(actor);
  }
  /// Advances `actor` by one and returns its new epoch.
  Epoch tick(ActorId actor) {
    if (!base_ && actor < inline_actors) [[likely]] return ++small_[actor];  // inline (or the empty clock)
    return tick_slow(actor);
  }
  /// Raises `actor`'s epoch to at least `epoch`: the join with a clock that exceeds this one in
  /// that entry at most (an op's issue clock, whose other entries a stream joined already).
  void advance(ActorId actor, Epoch epoch) {
    if (!base_ && actor < inline_actors) [[likely]] {  // inline
      if (small_[actor] < epoch) small_[actor] = epoch;
      return;
    }
    advance_slow(actor, epoch);
  }
  /// Pointwise maximum with `other`.
  void join(const VectorClock& other) {
    if (!base_ && !other.base_ && size_ > 0 && other.size_ > 0) [[likely]] {  // both inline
      size_ = size_ < other.size_ ? other.size_ : size_;
      raise_to(small_, other.small_, size_);
      return;
    }
    join_slow(other);
  }
  /// True when the access (actor, epoch) happened before the holder of this clock.
  bool covers(ActorId actor, Epoch epoch) const { return epoch <= (*this)[actor]; }
  std::size_t size() const { return size_; }
  /// Makes this clock's base a fresh dense copy of its value.
  void compact();
  /// The join of `clocks` (at least one) as a clock with a fresh base and an empty delta, made
  /// in one dense pass: a collective's completion clock, which every member then shares.
  static VectorClock join_all(const std::vector<const VectorClock*>& clocks);
  friend bool operator==(const VectorClock& a, const VectorClock& b);

  /// Clocks over at most this many actors are dense and inline (see the top of this file).
  static constexpr std::size_t inline_actors = 16;

 private:
  struct Base {
    std::vector<Epoch> ticks;
    /// The bases this one was made from (it dominates each). Weak, so old bases are freed once
    /// no clock uses them; an expired link only means a join falls back to the dense path.
    std::vector<std::weak_ptr<const Base>> parents;
    std::uint32_t depth = 0;  ///< 1 + the deepest parent's depth: no ancestor is as deep
    bool zero = false;  ///< all ticks zero: every base dominates it
    /// Dense joins of this base with another one, remembered as (the other, their join). The
    /// members of one collective that each join the same unrelated base (their thread's, another
    /// communicator's completion) then share one merged base: the first pays the dense pass, the
    /// others a lookup. Mutable: a cache, not part of the value; an engine's clocks live on one
    /// thread.
    mutable std::vector<std::pair<std::weak_ptr<const Base>, std::weak_ptr<const Base>>> joins;
  };
  using Entry = std::pair<ActorId, Epoch>;

  Epoch tick_slow(ActorId actor);
  void advance_slow(ActorId actor, Epoch epoch);
  void copy_shared(const VectorClock& other);
  VectorClock& assign_slow(const VectorClock& other);
  void join_slow(const VectorClock& other);
  /// The inline join, in place: blocks of four epochs, each a compare and a select in vector
  /// registers (GCC's vector extension; plain SSE2 has no unsigned max, so the compare is biased,
  /// which the compiler does for us). Written out instead of a loop: at -O2 the loop stays a loop
  /// and copies the array in and out, a third of a join's cost. Only the blocks that hold one of
  /// the first `size` epochs: both clocks are zero beyond their sizes, and `size` is the larger.
  static void raise_to(std::array<Epoch, inline_actors>& a, const std::array<Epoch, inline_actors>& b, std::size_t size) {
    using Block = Epoch __attribute__((vector_size(4 * sizeof(Epoch))));
    static_assert(inline_actors == 16);
    auto block = [&](std::size_t i) {
      Block x, y;
      std::memcpy(&x, &a[i], sizeof x);
      std::memcpy(&y, &b[i], sizeof y);
      const Block m = x < y ? y : x;
      std::memcpy(&a[i], &m, sizeof m);
    };
    block(0);
    if (size <= 4) return;
    block(4);
    if (size <= 8) return;
    block(8);
    if (size <= 12) return;
    block(12);
  }
  Epoch base_at(ActorId actor) const { return base_ && actor < base_->ticks.size() ? base_->ticks[actor] : 0; }
  /// True when `ancestor` is `base` or one of its ancestors (so `base` dominates it); false
  /// also when the search gives up (a bounded walk: the caller then joins densely).
  static bool descends(const std::shared_ptr<const Base>& base, const Base* ancestor);
  /// Sets `actor` to max(current, epoch) in the delta.
  void raise(ActorId actor, Epoch epoch);
  void rebase(const std::shared_ptr<const Base>& base);
  /// The pointwise maximum of two unrelated bases, as a base whose parents are both: made in
  /// one dense pass the first time, then found again (Base::joins).
  static std::shared_ptr<const Base> merged(const std::shared_ptr<const Base>& a, const std::shared_ptr<const Base>& b);
  void compact_if_large();
  /// The value of a clock with a base (the shared representation).
  Epoch large_at(ActorId actor) const;
  /// Inline (no base) and not the empty placeholder.
  bool is_small() const { return !base_ && size_ > 0; }
  /// The same value with a base: for the rare join of an inline clock with a wider one.
  void make_large();
  /// Gives the base `actors` entries (zero beyond the old ones), for joins across widths.
  void widen(std::size_t actors);

  /// The epochs of an inline clock (no base); zero beyond size_ and in the empty placeholder.
  std::array<Epoch, inline_actors> small_{};
  std::shared_ptr<const Base> base_;
  std::vector<Entry> delta_;  ///< sorted by actor; every entry is ahead of the base
  std::size_t size_ = 0;
};

}  // namespace amaxcheck
