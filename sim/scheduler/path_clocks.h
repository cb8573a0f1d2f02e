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
#include <memory_resource>
#include <span>
#include <utility>
#include <vector>

#include "engine/action.h"

namespace amaxcheck::sched {

class PathClocks {
 public:
  /// Its lists come from `memory` (the search's block), which must outlive it.
  explicit PathClocks(std::pmr::memory_resource* memory = std::pmr::get_default_resource());

  /// Dense id of an actor key, assigned on first sight and stable for the search.
  std::uint32_t actor_id(std::uint64_t actor_key);

  /// Makes room for a path of `steps` steps (a guess: the lists still grow past it).
  void reserve(std::size_t steps);
  std::size_t size() const { return steps_.size(); }
  /// Keeps the first `steps` steps (their clocks stay) and forgets the rest.
  void truncate(std::size_t steps);
  /// Appends the next step, of actor `actor` (an actor_id); `races` receives the earlier steps
  /// it races with.
  void push(std::uint32_t actor, std::span<const Touch> touches, std::pmr::vector<std::size_t>& races);

  std::uint32_t actor_of(std::size_t step) const { return steps_[step].actor; }
  /// Whether step `earlier` happens before step `later` (or is it).
  bool happens_before(std::size_t earlier, std::size_t later) const {
    return clock_at(later, steps_[earlier].actor) >= steps_[earlier].count;
  }
  /// Whether any step of `first_in` (per actor: the lowest count of a step in a set, 0 for
  /// none) happens before step `later`.
  bool has_predecessor_in(std::size_t later, std::span<const std::uint32_t> first_in) const;
  std::uint32_t count_of(std::size_t step) const { return steps_[step].count; }
  std::size_t actor_count() const { return last_of_actor_.size(); }

 private:
  /// A step's accesses and clock live in two arenas shared by every step (a step's slices are
  /// contiguous and in path order), so pushing a step allocates nothing once the arenas have
  /// grown, and truncating just shortens them.
  struct StepClock {
    std::uint32_t actor = 0;
    std::uint32_t count = 0;  ///< this step's index among its actor's steps, from 1
    std::size_t access_begin = 0;
    std::uint32_t access_count = 0;
    std::uint32_t clock_size = 0;  ///< entries by actor id; missing ones are 0
    std::size_t clock_begin = 0;
  };
  /// A touch, with its object as a dense id.
  struct Access {
    std::uint32_t object = 0;
    bool write = false;
  };
  /// Per object (by dense id): its last write and the heads of two lists in links_, newest
  /// first: the reads since the last write, and every write (for reads marked Touch::disables).
  /// Objects keep their id when truncate forgets their accesses.
  struct Object {
    std::int64_t last_write = -1;
    std::int64_t reads = -1;
    std::int64_t writes = -1;
  };
  struct Link {
    std::size_t step = 0;
    std::int64_t next = -1;
  };
  /// Dense ids by key, sorted by key (looked up by binary search: no node per entry).
  using Index = std::pmr::vector<std::pair<std::uint64_t, std::uint32_t>>;
  static std::uint32_t dense_id(Index& index, std::uint64_t key, bool& fresh);

  std::span<const std::uint32_t> clock_of(std::size_t step) const {
    return {clock_arena_.data() + steps_[step].clock_begin, steps_[step].clock_size};
  }
  std::uint32_t clock_at(std::size_t step, std::uint32_t actor) const {
    const StepClock& s = steps_[step];
    return actor < s.clock_size ? clock_arena_[s.clock_begin + actor] : 0;
  }
  std::uint32_t object_id(std::uint64_t key);
  void record_accesses(std::size_t step);

  Index actor_index_;
  std::pmr::vector<std::int64_t> last_of_actor_;  ///< by actor id: its last step on the path, -1 for none
  Index object_index_;
  std::pmr::vector<Object> objects_;
  std::pmr::vector<Link> links_;
  std::pmr::vector<StepClock> steps_;
  std::pmr::vector<Access> access_arena_;
  std::pmr::vector<std::uint32_t> clock_arena_;
  std::pmr::vector<std::size_t> predecessors_;    ///< push's scratch list
  std::pmr::vector<std::size_t> needed_;          ///< push's scratch list: predecessors j could not run without
};

}  // namespace amaxcheck::sched
