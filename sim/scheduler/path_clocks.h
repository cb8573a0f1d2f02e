#pragma once
/// Happens-before over the steps of one path of the exhaustive search, kept incrementally.
///
/// Each step gets a vector clock over the search's actors: entry a counts the steps of actor a
/// that happen before it or are it, where "happens before" is the transitive closure of
/// dependence (dependence.h) along the path. Each object remembers its last write and the
/// reads since, so a step's immediate dependent predecessors are found through its touches,
/// not by scanning the path. Runs of a depth-first search share a prefix with the run before:
/// `truncate(n)` keeps the first n steps' clocks and recomputes only the object table, so a
/// run costs its new steps (plus one linear pass), not the square of its length.
///
/// A race is a pair (i, j) of dependent steps of different actors with no step k, i < k < j,
/// such that i happens before k and k before j, and that can be reversed: j does not mark (with
/// Touch::needs) an object whose last write, by i, it needed to be enabled. Only reversible
/// races lead to other equivalence classes (Source-DPOR's races); the others would add
/// backtrack points whose runs all end sleep-blocked.
///
/// A read marked Touch::disables (a host synchronization) also races with every earlier write
/// of the object by another actor that is not ordered before the reader's previous step: such
/// a write could have come after the synchronization instead, even when the steps that drained
/// the stream afterwards hide it from the plain race check.

#include <cstddef>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "engine/action.h"

namespace amaxcheck::sched {

class PathClocks {
 public:
  /// Dense id of an actor key, assigned on first sight and stable for the search.
  std::uint32_t actor_id(std::uint64_t actor_key);

  std::size_t size() const { return steps_.size(); }
  /// Keeps the first `steps` steps (their clocks stay) and forgets the rest.
  void truncate(std::size_t steps);
  /// Appends the next step; `races` receives the earlier steps it races with.
  void push(std::uint64_t actor_key, std::span<const Touch> touches, std::vector<std::size_t>& races);

  std::uint32_t actor_of(std::size_t step) const { return steps_[step].actor; }
  /// The touches step `step` was pushed with.
  std::span<const Touch> touches_of(std::size_t step) const {
    return {touch_arena_.data() + steps_[step].touch_begin, steps_[step].touch_count};
  }
  /// Whether step `earlier` happens before step `later` (or is it).
  bool happens_before(std::size_t earlier, std::size_t later) const {
    return clock_at(later, steps_[earlier].actor) >= steps_[earlier].count;
  }
  /// Whether any step of `first_in` (per actor: the lowest count of a step in a set, 0 for
  /// none) happens before step `later`.
  bool has_predecessor_in(std::size_t later, std::span<const std::uint32_t> first_in) const;
  std::uint32_t count_of(std::size_t step) const { return steps_[step].count; }
  std::size_t actor_count() const { return ids_.size(); }

 private:
  /// A step's touches and clock live in two arenas shared by every step (a step's slices are
  /// contiguous and in path order), so pushing a step allocates nothing once the arenas have
  /// grown, and truncating just shortens them.
  struct StepClock {
    std::uint32_t actor = 0;
    std::uint32_t count = 0;  ///< this step's index among its actor's steps, from 1
    std::size_t touch_begin = 0;
    std::uint32_t touch_count = 0;
    std::uint32_t clock_size = 0;  ///< entries by actor id; missing ones are 0
    std::size_t clock_begin = 0;
  };
  /// Objects keep their slot (and its lists' memory) when truncate forgets their accesses.
  struct Object {
    std::int64_t last_write = -1;
    std::vector<std::size_t> reads;   ///< reads since the last write
    std::vector<std::size_t> writes;  ///< every write, for reads marked Touch::disables
  };
  std::span<const std::uint32_t> clock_of(std::size_t step) const {
    return {clock_arena_.data() + steps_[step].clock_begin, steps_[step].clock_size};
  }
  std::uint32_t clock_at(std::size_t step, std::uint32_t actor) const {
    const StepClock& s = steps_[step];
    return actor < s.clock_size ? clock_arena_[s.clock_begin + actor] : 0;
  }
  void record_accesses(std::size_t step);

  std::unordered_map<std::uint64_t, std::uint32_t> ids_;
  std::vector<StepClock> steps_;
  std::vector<Touch> touch_arena_;
  std::vector<std::uint32_t> clock_arena_;
  std::unordered_map<std::uint64_t, Object> objects_;
  std::vector<std::int64_t> last_of_actor_;  ///< by actor id: its last step on the path, -1 for none
  std::vector<std::size_t> predecessors_;    ///< push's scratch list
  std::vector<std::size_t> needed_;          ///< push's scratch list: predecessors j could not run without
};

}  // namespace amaxcheck::sched
