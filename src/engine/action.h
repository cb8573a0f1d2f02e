#pragma once
/// Actions: the atomic steps of a run. The engine says which are enabled; a scheduler picks.
///
/// - issue:    host thread `lane` of `rank` issues its next op (queues it on a stream, or
///             performs a host-blocking op when its condition holds).
/// - execute:  stream `lane` of `rank` runs its head op (kernel, copy, event op) atomically.
/// - join:     stream `lane` of `rank` starts its head collective; the stream stays occupied
///             until the rendezvous completes.
/// - complete: the pending collective of communicator `lane` completes on every member.

#include <compare>
#include <cstdint>
#include <string>
#include <vector>

#include "model/scenario.h"
#include "util/enum_names.h"

namespace amaxcheck {

enum class ActionKind : std::uint8_t { issue, execute, join, complete };

template <>
struct EnumNames<ActionKind> {
  static constexpr std::array table{EnumName<ActionKind>{ActionKind::issue, "issue"},
                                    EnumName<ActionKind>{ActionKind::execute, "execute"},
                                    EnumName<ActionKind>{ActionKind::join, "join"},
                                    EnumName<ActionKind>{ActionKind::complete, "complete"}};
};

inline const char* to_string(ActionKind kind) { return enum_name(kind); }

struct Action {
  ActionKind kind = ActionKind::issue;
  RankId rank = 0;     ///< unused (0) for complete
  std::uint32_t lane = 0;  ///< thread (issue), stream (execute, join) or comm (complete)

  friend auto operator<=>(const Action&, const Action&) = default;
};

/// One object an action touched, for partial-order reduction: two actions are dependent when
/// they share an actor or one writes an object the other reads or writes (the objects and the
/// argument for each case: sim/scheduler/dependence.h).
struct Touch {
  std::uint64_t object = 0;
  bool write = false;
  /// The action could not have been enabled before the object's last write (an op's own issue,
  /// the record a wait waits for, the joins a completion waits for, ...): swapping the two can
  /// never give another schedule, so the search need not try.
  bool needs = false;
  /// On a write: it may disable another host thread's synchronization (an issue onto a stream,
  /// or a record of an event, that another thread of the rank synchronizes on). On a read: the
  /// synchronization's own read of that object. A synchronization delayed or blocked by such a
  /// write may run after it, or never, so the plain race check does not show the order in
  /// which it runs first; the search handles these pairs apart (exhaustive_strategy.h).
  bool disables = false;
};

/// Stable identity of the actor that performs `action` (a host thread, a stream, or a comm).
/// Inline: PCT asks it for every option of every step.
inline std::uint64_t actor_key(const Action& action) {
  // Matches the engine's object keys: a thread, a stream (execute and join), or a comm.
  const std::uint64_t type = action.kind == ActionKind::issue ? 1 : action.kind == ActionKind::complete ? 6 : 2;
  const std::uint32_t rank = action.kind == ActionKind::complete ? 0 : action.rank;
  return (type << 56) | (static_cast<std::uint64_t>(rank & 0xFFFFFF) << 32) | action.lane;
}

}  // namespace amaxcheck
