#pragma once
/// Why a stuck op cannot go on, as a kind and the rank it concerns: what a deadlock report's
/// text says, in terms a shrink can map back to the original scenario. Two hangs stuck on the
/// same ops can be different bugs: a collective that a member has not issued yet (its thread
/// waits on a flag nobody signals) and one that the member's program never issues sit on the
/// same stream head. A shrink's "same bug" holds these (sim/shrink/shrink_identity.h), so it
/// keeps the first and never slips to the second.

#include <array>
#include <cstdint>
#include <optional>

#include "model/scenario.h"
#include "util/enum_names.h"

namespace amaxcheck {

enum class WaitKind : std::uint8_t {
  stream_drain,        ///< a thread's stream_synchronize: the stream to drain
  event_done,          ///< a thread's event_synchronize: the event's record to run
  device_drain,        ///< a thread's device_synchronize: every stream to drain
  host_flag,           ///< a thread's host_wait: more signals
  event_record,        ///< a stream's wait on an event: its record to run
  earlier_comm_op,     ///< NCCL's per-communicator order: an earlier op there to complete
  launch_order,        ///< serialized collective kernels: an earlier-launched one to finish
  not_issued,          ///< a member or peer has not issued the matching op (its program still may)
  never_issues,        ///< a member or peer whose program has no matching op left
  blocked,             ///< a member or peer issued it, but its stream has not reached it
  mismatched,          ///< the members or the pair joined with ops that disagree
};

template <>
struct EnumNames<WaitKind> {
  static constexpr std::array table{
      EnumName<WaitKind>{WaitKind::stream_drain, "a stream to drain"},
      EnumName<WaitKind>{WaitKind::event_done, "an event to complete"},
      EnumName<WaitKind>{WaitKind::device_drain, "the device to drain"},
      EnumName<WaitKind>{WaitKind::host_flag, "a host flag"},
      EnumName<WaitKind>{WaitKind::event_record, "an event's record to run"},
      EnumName<WaitKind>{WaitKind::earlier_comm_op, "an earlier op on its communicator"},
      EnumName<WaitKind>{WaitKind::launch_order, "an earlier-launched collective kernel"},
      EnumName<WaitKind>{WaitKind::not_issued, "a rank that has not issued the matching op"},
      EnumName<WaitKind>{WaitKind::never_issues, "a rank whose program never issues the matching op"},
      EnumName<WaitKind>{WaitKind::blocked, "a rank whose stream has not reached the matching op"},
      EnumName<WaitKind>{WaitKind::mismatched, "ops that disagree"}};
};
inline const char* to_string(WaitKind kind) { return enum_name(kind); }

struct WaitReason {
  WaitKind kind = WaitKind::stream_drain;
  /// The rank it concerns: the member or peer for not_issued, never_issues, blocked and a pair's
  /// mismatch; otherwise the stuck op's own rank.
  RankId rank = 0;
  /// The op in the way, where there is one: the head a blocked member's stream waits behind, the
  /// earlier op on the communicator or in launch order.
  std::optional<OpRef> behind;

  friend bool operator==(const WaitReason&, const WaitReason&) = default;
};

}  // namespace amaxcheck
